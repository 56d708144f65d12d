package registry

import (
	"strings"
)

type position struct{ line, col int }

// keyPositions finds where each key is written in a TOML file that already
// parsed, keyed by its path joined with NUL. The TOML decoder reports
// positions only for syntax errors; schema errors and unknown-key warnings
// need them too. It understands table headers, dotted and quoted keys, and the
// first level of inline tables, which is all servers.toml uses.
func keyPositions(lines []string) map[string]position {
	pos := map[string]position{}
	var table []string
	record := func(path []string, line, col int) {
		k := strings.Join(path, "\x00")
		if _, ok := pos[k]; !ok {
			pos[k] = position{line, col}
		}
	}
	inMultiline := ""
	for i, raw := range lines {
		n := i + 1
		line := strings.TrimRight(raw, "\r")
		if inMultiline != "" {
			if strings.Contains(line, inMultiline) {
				inMultiline = ""
			}
			continue
		}
		trimmed := strings.TrimLeft(line, " \t")
		indent := len(line) - len(trimmed)
		if trimmed == "" || trimmed[0] == '#' {
			continue
		}
		if keys, ok := TOMLHeader(trimmed); ok {
			table = keys
			for j := 1; j <= len(keys); j++ {
				record(keys[:j], n, indent+1)
			}
			continue
		}
		keys, rest := splitKey(trimmed)
		if len(keys) == 0 {
			continue
		}
		full := append(append([]string{}, table...), keys...)
		for j := len(table) + 1; j <= len(full); j++ {
			record(full[:j], n, indent+1)
		}
		rest = strings.TrimLeft(strings.TrimPrefix(strings.TrimLeft(rest, " \t"), "="), " \t")
		switch {
		case strings.HasPrefix(rest, `"""`) && !strings.Contains(rest[3:], `"""`):
			inMultiline = `"""`
		case strings.HasPrefix(rest, `'''`) && !strings.Contains(rest[3:], `'''`):
			inMultiline = `'''`
		case strings.HasPrefix(rest, "{"):
			// Inline table: record its keys on this line.
			off := len(line) - len(rest) + 1
			body := rest[1:]
			for len(body) > 0 {
				b := strings.TrimLeft(body, " \t,")
				off += len(body) - len(b)
				body = b
				if body == "" || body[0] == '}' {
					break
				}
				ik, r := splitKey(body)
				if len(ik) == 0 {
					break
				}
				record(append(append([]string{}, full...), ik...), n, off+1)
				// Skip the value up to the next top-level comma.
				r = strings.TrimLeft(strings.TrimPrefix(strings.TrimLeft(r, " \t"), "="), " \t")
				end := valueEnd(r)
				off += len(body) - len(r) + end
				body = r[end:]
			}
		}
	}
	return pos
}

// splitKey reads a (possibly dotted, possibly quoted) key at the start of s
// and returns its parts and the text after it.
func splitKey(s string) ([]string, string) {
	var parts []string
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			return parts, s
		}
		var part string
		switch s[0] {
		case '"', '\'':
			q := s[0]
			end := 1
			for end < len(s) && s[end] != q {
				if q == '"' && s[end] == '\\' {
					end++
				}
				end++
			}
			if end >= len(s) {
				return parts, ""
			}
			part = s[1:end]
			if q == '"' {
				part = unescapeBasic(part)
			}
			s = s[end+1:]
		default:
			end := 0
			for end < len(s) && isBareKeyChar(s[end]) {
				end++
			}
			if end == 0 {
				return parts, s
			}
			part, s = s[:end], s[end:]
		}
		parts = append(parts, part)
		t := strings.TrimLeft(s, " \t")
		if !strings.HasPrefix(t, ".") {
			return parts, s
		}
		s = t[1:]
	}
}

func isBareKeyChar(c byte) bool {
	return c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func unescapeBasic(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	r := strings.NewReplacer(`\"`, `"`, `\\`, `\`, `\t`, "\t", `\n`, "\n")
	return r.Replace(s)
}

// valueEnd returns the index just past a TOML value at the start of s, within
// an inline table (stops at a top-level ',' or '}').
func valueEnd(s string) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\'':
			j := i + 1
			for j < len(s) && s[j] != c {
				if c == '"' && s[j] == '\\' {
					j++
				}
				j++
			}
			i = j
		case '[', '{':
			depth++
		case ']', '}':
			if depth == 0 {
				return i
			}
			depth--
		case ',':
			if depth == 0 {
				return i
			}
		}
	}
	return len(s)
}
