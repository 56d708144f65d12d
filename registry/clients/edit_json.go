package clients

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/tailscale/hujson"

	"mcptray/internal/lazyre"
)

// ParseError is a client file that does not parse. Install refuses it and
// leaves it untouched.
type ParseError struct {
	File      string
	Line, Col int // 0 when the parser gives none
	Msg       string
}

func (e *ParseError) Error() string {
	switch {
	case e.Line > 0 && e.Col > 0:
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
	case e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

var hujsonPos = lazyre.New(`^hujson: line (\d+), column (\d+): (.*)$`)

func jsonParse(file string, src []byte, format Format) (hujson.Value, error) {
	v, err := hujson.Parse(src)
	if err != nil {
		pe := &ParseError{File: file, Msg: err.Error()}
		if m := hujsonPos().FindStringSubmatch(err.Error()); m != nil {
			pe.Line, _ = strconv.Atoi(m[1])
			pe.Col, _ = strconv.Atoi(m[2])
			pe.Msg = m[3]
		}
		return v, pe
	}
	if format == FormatJSON && !v.IsStandard() {
		// Comments would be kept, but a strict-JSON client would then fail
		// to read its own file: better to say so than to write it.
		return v, &ParseError{File: file, Msg: "comments or trailing commas in a file this client reads as strict JSON"}
	}
	if _, ok := v.Value.(*hujson.Object); !ok {
		return v, &ParseError{File: file, Line: 1, Col: 1, Msg: "the top level is not a JSON object"}
	}
	return v, nil
}

// memberName is the unquoted name of an object member.
func memberName(m *hujson.ObjectMember) string {
	if l, ok := m.Name.Value.(hujson.Literal); ok {
		return l.String()
	}
	return ""
}

// findMember returns the index of the last member called name (the one a
// JSON reader keeps), or -1.
func findMember(o *hujson.Object, name string) int {
	idx := -1
	for i := range o.Members {
		if memberName(&o.Members[i]) == name {
			idx = i
		}
	}
	return idx
}

// lineStart is the offset of the start of the line holding off.
func lineStart(src []byte, off int) int { return bytes.LastIndexByte(src[:off], '\n') + 1 }

// lineIndent is the leading whitespace of the line holding off.
func lineIndent(src []byte, off int) string {
	s := lineStart(src, off)
	e := s
	for e < len(src) && (src[e] == ' ' || src[e] == '\t') {
		e++
	}
	return string(src[s:e])
}

// indentUnit guesses one level of the file's indentation.
func indentUnit(src []byte) string {
	best := ""
	for _, line := range strings.Split(string(src), "\n") {
		t := strings.TrimLeft(line, " \t")
		if t == "" || len(t) == len(line) || !strings.HasPrefix(t, `"`) {
			continue
		}
		ind := line[:len(line)-len(t)]
		if ind[0] == '\t' {
			return "\t"
		}
		if best == "" || len(ind) < len(best) {
			best = ind
		}
	}
	if best == "" {
		return "  "
	}
	return best
}

// skipExtra moves past whitespace and comments.
func skipExtra(src []byte, i int) int {
	for i < len(src) {
		switch {
		case src[i] == ' ' || src[i] == '\t' || src[i] == '\n' || src[i] == '\r':
			i++
		case bytes.HasPrefix(src[i:], []byte("//")):
			j := bytes.IndexByte(src[i:], '\n')
			if j < 0 {
				return len(src)
			}
			i += j
		case bytes.HasPrefix(src[i:], []byte("/*")):
			j := bytes.Index(src[i+2:], []byte("*/"))
			if j < 0 {
				return len(src)
			}
			i += j + 4
		default:
			return i
		}
	}
	return i
}

// endOfLine is the offset of the newline ending the line holding off (or
// len(src)).
func endOfLine(src []byte, off int) int {
	if j := bytes.IndexByte(src[off:], '\n'); j >= 0 {
		return off + j
	}
	return len(src)
}

func splice(src []byte, start, end int, text string) []byte {
	out := make([]byte, 0, len(src)-(end-start)+len(text))
	out = append(out, src[:start]...)
	out = append(out, text...)
	return append(out, src[end:]...)
}

// jsonTarget walks key from the root, creating missing objects. It returns
// the source (possibly changed) and the object value at key.
func jsonTarget(file string, src []byte, format Format, key []string, create bool) ([]byte, *hujson.Value, error) {
	for {
		root, err := jsonParse(file, src, format)
		if err != nil {
			return src, nil, err
		}
		cur := &root
		var missing string
		for depth, k := range key {
			o, ok := cur.Value.(*hujson.Object)
			if !ok {
				return src, nil, &ParseError{File: file, Msg: fmt.Sprintf("%s is not an object", strings.Join(key[:depth], "."))}
			}
			i := findMember(o, k)
			if i < 0 {
				missing = k
				break
			}
			cur = &o.Members[i].Value
		}
		if missing == "" {
			if _, ok := cur.Value.(*hujson.Object); !ok {
				return src, nil, &ParseError{File: file, Msg: fmt.Sprintf("%s is not an object", strings.Join(key, "."))}
			}
			return src, cur, nil
		}
		if !create {
			return src, nil, nil
		}
		src = jsonInsert(src, cur, missing, obj{})
	}
}

// jsonInsert adds member name: v at the end of the object at ov, in the
// file's own layout, keeping every comment where it was.
func jsonInsert(src []byte, ov *hujson.Value, name string, v any) []byte {
	o := ov.Value.(*hujson.Object)
	unit := indentUnit(src)
	if n := len(o.Members); n > 0 {
		last := &o.Members[n-1]
		ind := lineIndent(src, last.Name.StartOffset)
		var vb bytes.Buffer
		writeJSON(&vb, v, ind, unit)
		member := jsonString(name) + ": " + vb.String()
		pos := last.Value.EndOffset
		next := skipExtra(src, pos)
		if next < len(src) && src[next] == ',' {
			// Trailing-comma style: our member goes on its own line after
			// the comma's line, with its own comma.
			eol := endOfLine(src, next)
			if rest := skipExtra(src, next+1); eol < len(src) && rest > eol {
				return splice(src, eol+1, eol+1, ind+member+",\n")
			}
			return splice(src, next+1, next+1, " "+member+",")
		}
		eol := endOfLine(src, pos)
		if strings.TrimSpace(stripLineComment(string(src[pos:eol]))) == "" && eol < len(src) {
			out := splice(src, eol, eol, "\n"+ind+member)
			return splice(out, pos, pos, ",")
		}
		return splice(src, pos, pos, ", "+member)
	}
	pind := lineIndent(src, ov.StartOffset)
	var vb bytes.Buffer
	writeJSON(&vb, v, pind+unit, unit)
	member := jsonString(name) + ": " + vb.String()
	closing := ov.EndOffset - 1
	head := bytes.TrimRight(src[:closing], " \t\r\n")
	out := make([]byte, 0, len(src)+len(member)+16)
	out = append(out, head...)
	out = append(out, "\n"+pind+unit+member+"\n"+pind...)
	return append(out, src[closing:]...)
}

func stripLineComment(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "//") {
		return ""
	}
	if strings.HasPrefix(s, "/*") && strings.HasSuffix(s, "*/") {
		return ""
	}
	return s
}

// jsonRemove deletes member i of the object at ov, with its line when it
// has one to itself.
func jsonRemove(src []byte, ov *hujson.Value, i int) []byte {
	o := ov.Value.(*hujson.Object)
	m := &o.Members[i]
	if len(o.Members) == 1 && !hasComment(src[ov.StartOffset:m.Name.StartOffset]) && !hasComment(src[m.Value.EndOffset:ov.EndOffset]) {
		return splice(src, ov.StartOffset, ov.EndOffset, "{}")
	}
	start := m.Name.StartOffset
	ls := lineStart(src, start)
	if strings.TrimSpace(string(src[ls:start])) == "" {
		start = ls
	}
	end := m.Value.EndOffset
	for end < len(src) && (src[end] == ' ' || src[end] == '\t') {
		end++
	}
	hadComma := false
	if end < len(src) && src[end] == ',' {
		end++
		hadComma = true
	}
	for end < len(src) && (src[end] == ' ' || src[end] == '\t' || src[end] == '\r') {
		end++
	}
	if start == ls && end < len(src) && src[end] == '\n' {
		end++
	} else if start == ls {
		start = m.Name.StartOffset
	}
	out := splice(src, start, end, "")
	if !hadComma && i > 0 {
		// The member before is now the last: drop its comma so that a
		// strict JSON file stays strict.
		p := skipExtra(src, o.Members[i-1].Value.EndOffset)
		if p < start && src[p] == ',' {
			out = splice(out, p, p+1, "")
		}
	}
	return out
}

// hasComment reports whether text (JSON outside any string) holds a comment.
func hasComment(text []byte) bool {
	return bytes.Contains(text, []byte("//")) || bytes.Contains(text, []byte("/*"))
}

// jsonEqual compares two JSON(C) texts by value.
func jsonEqual(a, b []byte) bool {
	var x, y any
	sa, err1 := hujson.Standardize(bytes.Clone(a))
	sb, err2 := hujson.Standardize(bytes.Clone(b))
	if err1 != nil || err2 != nil {
		return false
	}
	if json.Unmarshal(sa, &x) != nil || json.Unmarshal(sb, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// jsonSet adds or updates one entry. It returns the new source and whether
// anything changed ("added", "updated" or "").
func jsonSet(file string, src []byte, format Format, key []string, name string, entry obj, managed map[string]bool) ([]byte, string, error) {
	src, target, err := jsonTarget(file, src, format, key, true)
	if err != nil {
		return src, "", err
	}
	o := target.Value.(*hujson.Object)
	i := findMember(o, name)
	if i < 0 {
		return jsonInsert(src, target, name, entry), "added", nil
	}
	m := &o.Members[i]
	if eo, ok := m.Value.Value.(*hujson.Object); ok {
		// Keep what the person added that mcptray does not manage
		// (autoApprove, timeout, disabled, ...), and a description
		// servers.toml does not have.
		for j := range eo.Members {
			k := memberName(&eo.Members[j])
			if !managed[k] && !entry.has(k) {
				v := eo.Members[j].Value
				entry = append(entry, kv{k, rawJSON(src[v.StartOffset:v.EndOffset])})
			}
		}
	}
	ind := lineIndent(src, m.Name.StartOffset)
	var vb bytes.Buffer
	writeJSON(&vb, entry, ind, indentUnit(src))
	old := src[m.Value.StartOffset:m.Value.EndOffset]
	if jsonEqual(old, vb.Bytes()) {
		return src, "", nil
	}
	return splice(src, m.Value.StartOffset, m.Value.EndOffset, vb.String()), "updated", nil
}

// jsonDelete removes one entry; false when it was not there.
func jsonDelete(file string, src []byte, format Format, key []string, name string) ([]byte, bool, error) {
	src, target, err := jsonTarget(file, src, format, key, false)
	if err != nil || target == nil {
		return src, false, err
	}
	i := findMember(target.Value.(*hujson.Object), name)
	if i < 0 {
		return src, false, nil
	}
	return jsonRemove(src, target, i), true, nil
}

// trailingComma finds the first comma that closes an object or array (',' then
// '}' or ']', past whitespace and comments): JSONC allows it, but some
// clients that read comments refuse it. ok is false when there is none.
func trailingComma(src []byte) (line, col int, ok bool) {
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '"':
			for i++; i < len(src) && src[i] != '"'; i++ {
				if src[i] == '\\' {
					i++
				}
			}
		case '/':
			if j := skipExtra(src, i); j > i {
				i = j - 1
			}
		case ',':
			if j := skipExtra(src, i+1); j < len(src) && (src[j] == '}' || src[j] == ']') {
				line = bytes.Count(src[:i], []byte("\n")) + 1
				return line, i - lineStart(src, i) + 1, true
			}
		}
	}
	return 0, 0, false
}

// checkReadable refuses a file the client itself will not load, before
// mcptray edits it: a trailing comma for a client that reads comments but
// not trailing commas (Gemini CLI).
func (c *Client) checkReadable(file string, src []byte) error {
	if !c.noTrailingCommas {
		return nil
	}
	if line, col, ok := trailingComma(src); ok {
		return &ParseError{File: file, Line: line, Col: col,
			Msg: fmt.Sprintf("trailing comma: %s accepts comments but refuses a comma before '}' or ']' and would not load this file; remove it", c.Name)}
	}
	return nil
}
