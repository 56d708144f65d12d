// Package tooltrust keeps what mcptray has trusted of each server's tools,
// so a tool whose definition changes after it was trusted (a "rug pull")
// reaches no client unseen.
//
// The first time a tool is seen its definition is recorded (trust on first
// use): the fields that tell a model what the tool does and takes (name,
// title, description, input and output schemas, annotations) as canonical
// JSON, and their digest. When a known tool's definition differs from the
// one recorded, the tool is held, with the new definition beside the old,
// until the person approves it ([Store.Approve]); a tool can be held by
// hand too ([Store.Hold]). With HoldNewServers (`[settings]
// approve_new_servers`), every tool of a server the store has no record
// of is held.
//
// The store is one JSON file beside servers.toml ([FileName]), written
// through registry's locked atomic writer, so a command and the daemon can
// both change it. Definitions are kept as servers sent them; the package
// knows nothing of MCP beyond those field names.
package tooltrust

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Fields are the parts of a tool's definition that are trusted: what a
// model reads to decide whether and how to call it. Others (_meta, icons,
// execution hints) may change freely.
var Fields = []string{"name", "title", "description", "inputSchema", "outputSchema", "annotations"}

// Canonical is a tool definition (its tools/list JSON) reduced to
// [Fields], as canonical JSON: object keys sorted, no insignificant space,
// numbers in their shortest form (1.0 and 1e0 are 1), HTML characters not
// escaped, and null fields left out. Two definitions that mean the same
// give the same bytes whatever their key order or spacing.
func Canonical(def []byte) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(def, &m); err != nil {
		return nil, fmt.Errorf("a tool's definition must be a JSON object: %w", err)
	}
	if m == nil {
		return nil, fmt.Errorf("a tool's definition must be a JSON object, not null")
	}
	kept := map[string]any{}
	for _, f := range Fields {
		raw, ok := m[f]
		if !ok {
			continue
		}
		v, err := decode(raw)
		if err != nil {
			return nil, fmt.Errorf("the tool's %s: %w", f, err)
		}
		if v != nil {
			kept[f] = v
		}
	}
	var b bytes.Buffer
	if err := encode(&b, kept); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Digest is the sha256 of a definition's [Canonical] form, "sha256:HEX".
func Digest(def []byte) (string, error) {
	c, err := Canonical(def)
	if err != nil {
		return "", err
	}
	return digestOf(c), nil
}

func digestOf(canonical []byte) string {
	sum := sha256.Sum256(canonical)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// decode reads one JSON value with its numbers kept as written.
func decode(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

func encode(b *bytes.Buffer, v any) error {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case json.Number:
		n, err := canonicalNumber(v)
		if err != nil {
			return err
		}
		b.WriteString(n)
	case string:
		encodeString(b, v)
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := encode(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			encodeString(b, k)
			b.WriteByte(':')
			if err := encode(b, v[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	default:
		return fmt.Errorf("unexpected JSON value %T", v)
	}
	return nil
}

// canonicalNumber writes an integer as written (any size) and any other
// number as float64 reads it: an integral one below 2^53 as an integer
// (1.0, 1e0: 1), the rest in the shortest form that reads back the same.
func canonicalNumber(n json.Number) (string, error) {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		if s == "-0" {
			return "0", nil
		}
		return s, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if math.IsInf(f, 0) {
			return s, nil // beyond float64: kept as written
		}
		return "", fmt.Errorf("the number %s: %w", s, err)
	}
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return strconv.FormatInt(int64(f), 10), nil
	}
	return strconv.FormatFloat(f, 'g', -1, 64), nil
}

// encodeString writes s as a JSON string, escaping only what JSON needs
// (and every control character, so none hides in a diff).
func encodeString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029:
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

// pretty is canonical JSON indented, one field a line, for a diff.
func pretty(canonical []byte) string {
	var b bytes.Buffer
	if err := json.Indent(&b, canonical, "", "  "); err != nil {
		return string(canonical)
	}
	return strings.TrimRight(b.String(), "\n")
}
