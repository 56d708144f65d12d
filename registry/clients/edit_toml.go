package clients

import (
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/BurntSushi/toml"

	"mcptray/registry"
)

// Codex's config.toml holds much more than MCP servers (model, profiles,
// comments). It is edited as text with the registry's TOML editor
// (registry.TOMLSetTable, registry.TOMLDeleteTable): only the
// [mcp_servers.NAME] tables (and their sub-tables) of the named servers are
// replaced, added or removed; every other byte stays. The TOML parser checks
// the file before and after.

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
	old, defined := tomlDefined(data, table, name)
	if defined && !registry.TOMLHasTable(src, table, name) {
		return src, "", fmt.Errorf("%s: %s.%s is written with dotted keys or an inline table; mcptray edits only [%s.%s] tables: change it by hand or move it into one", file, table, name, table, name)
	}
	if defined {
		for _, k := range slices.Sorted(mapsKeys(old)) {
			if managed[k] || entry.has(k) {
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
	res, added := registry.TOMLSetTable(src, text, table, name)
	how := "updated"
	if added {
		how = "added"
	}
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
	if _, defined := tomlDefined(data, table, name); defined && !registry.TOMLHasTable(src, table, name) {
		return src, false, fmt.Errorf("%s: %s.%s is written with dotted keys or an inline table; remove it by hand", file, table, name)
	}
	res, removed := registry.TOMLDeleteTable(src, table, name)
	if !removed {
		return src, false, nil
	}
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
