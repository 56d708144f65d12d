package registry

import (
	"bytes"
	"slices"
)

// encodeInPlace applies cfg's settings and servers to the text cfg was
// parsed from, with the TOML text editor (TOMLSetTable, TOMLDeleteTable).
// ok is false when that cannot be done faithfully (servers reordered,
// settings or servers not written as tables, a result that does not load
// back to cfg): the caller then writes the file afresh.
func encodeInPlace(cfg *Config) (out []byte, ok bool) {
	old, err := Parse(cfg.Path, cfg.src)
	if err != nil {
		return nil, false
	}

	// The surviving servers must keep their order.
	newByName := map[string]*Server{}
	var newNames []string
	for _, s := range cfg.Servers {
		newByName[s.Name] = s
		newNames = append(newNames, s.Name)
	}
	var kept []string
	for _, s := range old.Servers {
		if newByName[s.Name] != nil {
			kept = append(kept, s.Name)
		}
	}
	var newKept []string
	for _, n := range newNames {
		if old.Server(n) != nil {
			newKept = append(newKept, n)
		}
	}
	if !slices.Equal(kept, newKept) {
		return nil, false
	}

	cur := bytes.Clone(cfg.src)
	if cfg.Settings != old.Settings {
		if !TOMLHasTable(cur, "settings") {
			return nil, false // settings written as dotted keys, or none yet
		}
		if text := encodeSettings(cfg.Settings); text != nil {
			cur, _ = TOMLSetTable(cur, string(text), "settings")
		} else {
			cur, _ = TOMLDeleteTable(cur, "settings")
		}
	}
	for _, s := range old.Servers {
		var done bool
		switch ns := newByName[s.Name]; {
		case ns == nil:
			cur, done = TOMLDeleteTable(cur, "servers", s.Name)
		case ns.Equal(s):
			done = true
		default:
			var b bytes.Buffer
			EncodeServer(&b, ns)
			var added bool
			cur, added = TOMLSetTable(cur, b.String(), "servers", s.Name)
			done = !added
		}
		if !done {
			return nil, false // not written as a [servers.NAME] table
		}
	}
	for _, s := range cfg.Servers {
		if old.Server(s.Name) == nil {
			var b bytes.Buffer
			EncodeServer(&b, s)
			cur, _ = TOMLSetTable(cur, b.String(), "servers", s.Name)
		}
	}

	// Safety net: the result must load back to exactly cfg.
	check, err := Parse(cfg.Path, cur)
	if err != nil || check.Settings != cfg.Settings || len(check.Servers) != len(cfg.Servers) {
		return nil, false
	}
	for i, s := range check.Servers {
		if !s.Equal(cfg.Servers[i]) {
			return nil, false
		}
	}
	return cur, true
}
