package registry

import (
	"bytes"
	"slices"
	"strings"
)

// block is a run of lines [start, end) of the source, 0-based.
type block struct{ start, end int }

// encodeInPlace applies cfg's settings and servers to the text cfg was
// parsed from. ok is false when that cannot be done faithfully (servers
// reordered, settings or servers not written as tables, a result that does
// not load back to cfg): the caller then writes the file afresh.
func encodeInPlace(cfg *Config) (out []byte, ok bool) {
	old, err := Parse(cfg.Path, cfg.src)
	if err != nil {
		return nil, false
	}
	lines := strings.SplitAfter(string(cfg.src), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
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

	blocks := map[int]string{} // start line -> server name
	ends := map[string]int{}
	for _, s := range old.Servers {
		if s.Line == 0 {
			return nil, false
		}
		b := tableBlock(lines, s.Line-1, "servers", s.Name)
		blocks[b.start] = s.Name
		ends[s.Name] = b.end
	}
	settingsChanged := cfg.Settings != old.Settings
	settings := block{-1, -1}
	if settingsChanged {
		for i, l := range lines {
			if keys, ok := headerKeys(l); ok && len(keys) == 1 && keys[0] == "settings" {
				settings = tableBlock(lines, i, "settings", "")
			}
		}
		if settings.start < 0 {
			return nil, false // settings written as dotted keys, or none yet
		}
	}

	var b bytes.Buffer
	for i := 0; i < len(lines); {
		if i == settings.start {
			b.Write(encodeSettings(cfg.Settings))
			i = settings.end
			continue
		}
		name, isServer := blocks[i]
		if !isServer {
			b.WriteString(lines[i])
			i++
			continue
		}
		end := ends[name]
		switch ns := newByName[name]; {
		case ns == nil:
			// Removed: drop the table and one blank line after it.
			if end < len(lines) && strings.TrimSpace(lines[end]) == "" {
				end++
			}
		case ns.Equal(old.Server(name)):
			b.WriteString(strings.Join(lines[i:end], ""))
		default:
			EncodeServer(&b, ns)
		}
		i = end
	}
	for _, s := range cfg.Servers {
		if old.Server(s.Name) != nil {
			continue
		}
		if b.Len() > 0 && !bytes.HasSuffix(b.Bytes(), []byte("\n")) {
			b.WriteString("\n")
		}
		if b.Len() > 0 && !bytes.HasSuffix(b.Bytes(), []byte("\n\n")) {
			b.WriteString("\n")
		}
		EncodeServer(&b, s)
	}

	// Safety net: the result must load back to exactly cfg.
	check, err := Parse(cfg.Path, b.Bytes())
	if err != nil || check.Settings != cfg.Settings || len(check.Servers) != len(cfg.Servers) {
		return nil, false
	}
	for i, s := range check.Servers {
		if !s.Equal(cfg.Servers[i]) {
			return nil, false
		}
	}
	return b.Bytes(), true
}

// tableBlock is the table whose header is at line start: up to the next
// table header that is not one of its own sub-tables, less the comments and
// blank lines just before that header (they introduce the next table).
func tableBlock(lines []string, start int, top, name string) block {
	end := len(lines)
	for i := start + 1; i < len(lines); i++ {
		keys, ok := headerKeys(lines[i])
		if !ok {
			continue
		}
		own := len(keys) > 1 && keys[0] == top && (name == "" || len(keys) > 2 && keys[1] == name)
		if !own {
			end = i
			break
		}
	}
	for end > start+1 {
		t := strings.TrimSpace(lines[end-1])
		if t != "" && !strings.HasPrefix(t, "#") {
			break
		}
		end--
	}
	return block{start, end}
}

// headerKeys reads a table header line ("[servers.demo]", "[[x]]").
func headerKeys(line string) ([]string, bool) {
	t := strings.TrimSpace(line)
	if !strings.HasPrefix(t, "[") {
		return nil, false
	}
	keys, _ := splitKey(strings.TrimLeft(t, "["))
	return keys, len(keys) > 0
}
