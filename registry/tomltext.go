package registry

import (
	"slices"
	"strings"
)

// TOML text editing: mcptray's one editor of TOML files people own (its own
// servers.toml, Codex's config.toml). Tables are replaced, added or removed
// line by line; every other byte of the file stays, comments included. The
// caller renders the table and checks the result with a TOML parser.

// TOMLHeader parses a table header line ("[a.b]", `[ a . "b c" ]`,
// "[[x]]", with an optional trailing comment) into its keys; ok is false for
// any other line.
func TOMLHeader(line string) (keys []string, ok bool) {
	t := strings.TrimSpace(line)
	if !strings.HasPrefix(t, "[") {
		return nil, false
	}
	t = t[1:]
	array := strings.HasPrefix(t, "[")
	if array {
		t = t[1:]
	}
	keys, rest := splitKey(t)
	rest = strings.TrimLeft(rest, " \t")
	close := "]"
	if array {
		close = "]]"
	}
	if len(keys) == 0 || !strings.HasPrefix(rest, close) {
		return nil, false
	}
	if rest = strings.TrimSpace(rest[len(close):]); rest != "" && !strings.HasPrefix(rest, "#") {
		return nil, false
	}
	return keys, true
}

// tomlHeaders gives each line's header keys (nil for a line that is not a
// header), skipping lines inside multi-line strings.
func tomlHeaders(lines []string) [][]string {
	heads := make([][]string, len(lines))
	inML := ""
	for i, line := range lines {
		if inML != "" {
			if strings.Count(line, inML)%2 == 1 {
				inML = ""
			}
			continue
		}
		if k, ok := TOMLHeader(line); ok {
			heads[i] = k
			continue
		}
		for _, q := range []string{`"""`, `'''`} {
			if strings.Count(line, q)%2 == 1 {
				inML = q
			}
		}
	}
	return heads
}

// TOMLTables finds the line ranges [start, end) of the table named key and
// its sub-tables in lines (src split at "\n"), contiguous ranges merged. A
// range ends before the blank and comment lines that end it: they introduce
// whatever follows. None when key is not written as a table (absent, or
// dotted keys, or an inline table).
func TOMLTables(lines []string, key ...string) [][2]int {
	heads := tomlHeaders(lines)
	var out [][2]int
	for i := 0; i < len(lines); i++ {
		k := heads[i]
		if len(k) < len(key) || !slices.Equal(k[:len(key)], key) {
			continue
		}
		j := i + 1
		for j < len(lines) && heads[j] == nil {
			j++
		}
		end := j
		for end > i+1 && isBlankOrComment(lines[end-1]) {
			end--
		}
		if len(out) > 0 && out[len(out)-1][1] >= i {
			out[len(out)-1][1] = end
		} else {
			out = append(out, [2]int{i, end})
		}
		i = j - 1
	}
	return out
}

// TOMLHasTable reports whether src writes key as a table (a [key] header or
// sub-table headers).
func TOMLHasTable(src []byte, key ...string) bool {
	return len(TOMLTables(strings.Split(string(src), "\n"), key...)) > 0
}

func isBlankOrComment(line string) bool {
	t := strings.TrimSpace(line)
	return t == "" || strings.HasPrefix(t, "#")
}

// TOMLSetTable puts text (the table key rendered, header first) in src: in
// place of the table and its sub-tables where it is written, else appended
// after one blank line. added reports which.
func TOMLSetTable(src []byte, text string, key ...string) (out []byte, added bool) {
	lines := strings.Split(string(src), "\n")
	blocks := TOMLTables(lines, key...)
	newLines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	var res []string
	if len(blocks) == 0 {
		res = lines
		for len(res) > 0 && strings.TrimRight(res[len(res)-1], "\r") == "" {
			res = res[:len(res)-1]
		}
		if len(res) > 0 {
			res = append(res, "")
		}
		res = append(append(res, newLines...), "")
		return []byte(strings.Join(res, "\n")), true
	}
	prev := 0
	for i, b := range blocks {
		res = append(res, lines[prev:b[0]]...)
		if i == 0 {
			res = append(res, newLines...)
		}
		prev = b[1]
	}
	res = append(res, lines[prev:]...)
	return []byte(strings.Join(res, "\n")), false
}

// TOMLDeleteTable removes the table key and its sub-tables from src, each
// with one blank line before it, so that a table added by TOMLSetTable and
// then removed leaves the file as it was. removed is false when key is not
// written as a table.
func TOMLDeleteTable(src []byte, key ...string) (out []byte, removed bool) {
	lines := strings.Split(string(src), "\n")
	blocks := TOMLTables(lines, key...)
	if len(blocks) == 0 {
		return src, false
	}
	var res []string
	prev := 0
	for _, b := range blocks {
		start := b[0]
		if start > 0 && start-1 >= prev && strings.TrimSpace(lines[start-1]) == "" {
			start--
		}
		res = append(res, lines[prev:start]...)
		prev = b[1]
	}
	res = append(res, lines[prev:]...)
	return []byte(strings.Join(res, "\n")), true
}
