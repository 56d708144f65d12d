// Command plistmerge merges packaging/Info.plist.fragment into the
// Info.plist that `fyne package --os darwin` writes (fyne takes no Info.plist
// additions): each key of the fragment replaces the app's key of that name
// or is added. `make package` runs it on macOS:
//
//	go run ./packaging/plistmerge mcptray.app/Contents/Info.plist packaging/Info.plist.fragment
package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: plistmerge Info.plist FRAGMENT")
		os.Exit(2)
	}
	plist, err := os.ReadFile(os.Args[1])
	if err == nil {
		var frag []byte
		if frag, err = os.ReadFile(os.Args[2]); err == nil {
			var out []byte
			if out, err = merge(plist, frag); err == nil {
				err = os.WriteFile(os.Args[1], out, 0o644)
			}
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "plistmerge: %v\n", err)
		os.Exit(1)
	}
}

// pair is one key of a plist dict and its value element, as written.
type pair struct{ key, raw string }

// merge puts fragment's keys into plist's top dict.
func merge(plist, fragment []byte) ([]byte, error) {
	pairs, err := parsePairs(fragment)
	if err != nil {
		return nil, fmt.Errorf("fragment: %w", err)
	}
	out := string(plist)
	for _, p := range pairs {
		if out, err = removeKey(out, p.key); err != nil {
			return nil, fmt.Errorf("Info.plist: %w", err) //lint:ignore ST1005 a file name
		}
	}
	end := strings.LastIndex(out, "</dict>")
	if end < 0 {
		return nil, errors.New("Info.plist: no </dict>") //lint:ignore ST1005 a file name
	}
	var b strings.Builder
	for _, p := range pairs {
		fmt.Fprintf(&b, "\t<key>%s</key>\n\t%s\n", p.key, p.raw)
	}
	out = out[:end] + b.String() + out[end:]
	if err := wellFormed(out); err != nil {
		return nil, fmt.Errorf("merged Info.plist: %w", err)
	}
	return []byte(out), nil
}

// parsePairs reads the key/value pairs of a dict's body.
func parsePairs(body []byte) ([]pair, error) {
	src := "<dict>" + string(body) + "</dict>"
	d := xml.NewDecoder(strings.NewReader(src))
	var pairs []pair
	var key string
	depth := 0
	for {
		start := d.InputOffset()
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			if depth != 2 {
				continue
			}
			if t.Name.Local == "key" {
				var k string
				if err := d.DecodeElement(&k, &t); err != nil {
					return nil, err
				}
				key = strings.TrimSpace(k)
			} else {
				if key == "" {
					return nil, fmt.Errorf("a <%s> without a <key> before it", t.Name.Local)
				}
				if err := d.Skip(); err != nil {
					return nil, err
				}
				pairs = append(pairs, pair{key, src[start:d.InputOffset()]})
				key = ""
			}
			depth--
		case xml.EndElement:
			depth--
		}
	}
	if key != "" {
		return nil, fmt.Errorf("key %s has no value", key)
	}
	return pairs, nil
}

// removeKey removes key and its value from doc, if there.
func removeKey(doc, key string) (string, error) {
	tag := "<key>" + key + "</key>"
	i := strings.Index(doc, tag)
	if i < 0 {
		return doc, nil
	}
	after := i + len(tag)
	d := xml.NewDecoder(strings.NewReader(doc[after:]))
	for {
		tok, err := d.Token()
		if err != nil {
			return "", fmt.Errorf("value of %s: %w", key, err)
		}
		if _, ok := tok.(xml.StartElement); ok {
			if err := d.Skip(); err != nil {
				return "", fmt.Errorf("value of %s: %w", key, err)
			}
			break
		}
	}
	end := after + int(d.InputOffset())
	start := strings.LastIndex(doc[:i], "\n") + 1
	if strings.TrimSpace(doc[start:i]) != "" {
		start = i
	}
	if end < len(doc) && doc[end] == '\n' {
		end++
	}
	return doc[:start] + doc[end:], nil
}

func wellFormed(doc string) error {
	d := xml.NewDecoder(bytes.NewReader([]byte(doc)))
	d.Strict = true
	for {
		if _, err := d.Token(); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
	}
}
