package clients

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// Codex's config.toml holds much more than MCP servers (model, profiles,
// comments). It is edited as text: only the [mcp_servers.NAME] tables (and
// their sub-tables) of the named servers are replaced, added or removed; every
// other byte stays. The TOML parser checks the file before and after.

func tomlParse(file string, src []byte) (map[string]any, toml.MetaData, error) {
	var m map[string]any
	md, err := toml.Decode(string(src), &m)
	if err != nil {
		pe := &ParseError{File: file, Msg: err.Error()}
		var te toml.ParseError
		if errors.As(err, &te) {
			pe.Line, pe.Col, pe.Msg = te.Position.Line, te.Position.Col, te.Message
		}
		return nil, md, pe
	}
	return m, md, nil
}

// tomlHeaderKeys parses a table header line ("[a.b]", "[ a . "b c" ]",
// "[[x]]") into its keys; ok is false for any other line.
func tomlHeaderKeys(line string) (keys []string, ok bool) {
	t := strings.TrimSpace(line)
	if !strings.HasPrefix(t, "[") {
		return nil, false
	}
	t = strings.TrimPrefix(t, "[")
	arr := strings.HasPrefix(t, "[")
	t = strings.TrimPrefix(t, "[")
	var cur strings.Builder
	quoted := byte(0)
	flush := func() { keys = append(keys, strings.TrimSpace(cur.String())); cur.Reset() }
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case quoted != 0:
			if c == '\\' && quoted == '"' && i+1 < len(t) {
				i++
				cur.WriteByte(t[i])
			} else if c == quoted {
				quoted = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '"' || c == '\'':
			quoted = c
		case c == '.':
			flush()
		case c == ']':
			flush()
			rest := strings.TrimSpace(t[i+1:])
			if arr {
				rest = strings.TrimSpace(strings.TrimPrefix(rest, "]"))
			}
			return keys, rest == "" || strings.HasPrefix(rest, "#")
		default:
			cur.WriteByte(c)
		}
	}
	return nil, false
}

// tomlLines splits src into lines and marks which start a table, skipping
// lines inside multi-line strings.
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
		if k, ok := tomlHeaderKeys(line); ok {
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

// tomlBlocks finds the line ranges [start, end) of table.name and its
// sub-tables. A range ends before trailing blank and comment lines, which
// belong to whatever follows.
func tomlBlocks(lines []string, table, name string) [][2]int {
	heads := tomlHeaders(lines)
	var out [][2]int
	for i := 0; i < len(lines); i++ {
		k := heads[i]
		if len(k) < 2 || k[0] != table || k[1] != name {
			continue
		}
		j := i + 1
		for j < len(lines) && heads[j] == nil {
			j++
		}
		end := j
		for end > i+1 {
			t := strings.TrimSpace(lines[end-1])
			if t != "" && !strings.HasPrefix(t, "#") {
				break
			}
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

// tomlDefined reports whether data holds table.name.
func tomlDefined(data map[string]any, table, name string) (map[string]any, bool) {
	t, ok := data[table].(map[string]any)
	if !ok {
		return nil, false
	}
	e, ok := t[name].(map[string]any)
	return e, ok
}

// tomlSet adds or replaces [table.name] in src.
func tomlSet(file string, src []byte, table, name string, entry obj, managed map[string]bool) ([]byte, string, error) {
	data, _, err := tomlParse(file, src)
	if err != nil {
		return src, "", err
	}
	lines := strings.Split(string(src), "\n")
	blocks := tomlBlocks(lines, table, name)
	old, defined := tomlDefined(data, table, name)
	if defined && len(blocks) == 0 {
		return src, "", fmt.Errorf("%s: %s.%s is written with dotted keys or an inline table; mcptray edits only [%s.%s] tables: change it by hand or move it into one", file, table, name, table, name)
	}
	if defined {
		for _, k := range slices.Sorted(mapsKeys(old)) {
			if managed[k] {
				continue
			}
			switch v := old[k].(type) {
			case map[string]any:
				if sm, ok := stringMapOf(v); ok {
					entry = append(entry, kv{k, sm})
				}
			case string, bool, int64:
				entry = append(entry, kv{k, tomlScalar(v)})
			case []any:
				if ss, ok := stringsOf(v); ok {
					entry = append(entry, kv{k, ss})
				}
			}
		}
	}
	text := tomlTable(table, name, entry)
	var fresh map[string]any
	if _, err := toml.Decode(text, &fresh); err != nil {
		return src, "", fmt.Errorf("%s: internal: rendered [%s.%s] does not parse: %w", file, table, name, err)
	}
	newEntry, _ := tomlDefined(fresh, table, name)
	if defined && reflect.DeepEqual(old, newEntry) {
		return src, "", nil
	}
	newLines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	var out []string
	how := "updated"
	if len(blocks) == 0 {
		how = "added"
		out = lines
		for len(out) > 0 && out[len(out)-1] == "" {
			out = out[:len(out)-1]
		}
		if len(out) > 0 {
			out = append(out, "")
		}
		out = append(out, newLines...)
		out = append(out, "")
	} else {
		prev := 0
		for bi, b := range blocks {
			out = append(out, lines[prev:b[0]]...)
			if bi == 0 {
				out = append(out, newLines...)
			}
			prev = b[1]
		}
		out = append(out, lines[prev:]...)
	}
	res := []byte(strings.Join(out, "\n"))
	if _, _, err := tomlParse(file, res); err != nil {
		return src, "", fmt.Errorf("%s: editing [%s.%s] would break the file (%v): left untouched", file, table, name, err)
	}
	return res, how, nil
}

// tomlDelete removes [table.name] and its sub-tables.
func tomlDelete(file string, src []byte, table, name string) ([]byte, bool, error) {
	data, _, err := tomlParse(file, src)
	if err != nil {
		return src, false, err
	}
	lines := strings.Split(string(src), "\n")
	blocks := tomlBlocks(lines, table, name)
	if _, defined := tomlDefined(data, table, name); defined && len(blocks) == 0 {
		return src, false, fmt.Errorf("%s: %s.%s is written with dotted keys or an inline table; remove it by hand", file, table, name)
	}
	if len(blocks) == 0 {
		return src, false, nil
	}
	var out []string
	prev := 0
	for _, b := range blocks {
		start := b[0]
		// Take one blank line before the table with it, so an added-then-
		// removed table leaves the file as it was.
		if start > 0 && strings.TrimSpace(lines[start-1]) == "" && start-1 >= prev {
			start--
		}
		out = append(out, lines[prev:start]...)
		prev = b[1]
	}
	out = append(out, lines[prev:]...)
	res := []byte(strings.Join(out, "\n"))
	if _, _, err := tomlParse(file, res); err != nil {
		return src, false, fmt.Errorf("%s: removing [%s.%s] would break the file (%v): left untouched", file, table, name, err)
	}
	return res, true, nil
}

func mapsKeys(m map[string]any) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func stringMapOf(m map[string]any) (obj, bool) {
	var o obj
	for _, k := range slices.Sorted(mapsKeys(m)) {
		s, ok := m[k].(string)
		if !ok {
			return nil, false
		}
		o = append(o, kv{k, s})
	}
	return o, true
}

func stringsOf(a []any) ([]string, bool) {
	out := make([]string, len(a))
	for i, v := range a {
		s, ok := v.(string)
		if !ok {
			return nil, false
		}
		out[i] = s
	}
	return out, true
}

func tomlScalar(v any) any {
	if n, ok := v.(int64); ok {
		return int(n)
	}
	return v
}
