package registry

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Encode renders cfg as servers.toml text. A config loaded from a file keeps
// that file's text (comments, layout, entries written by hand) for every
// setting and server that did not change: changed servers are rewritten in
// place, removed ones dropped, new ones appended. Otherwise (or when servers
// were reordered) it writes settings first, then the servers in order, each
// field only when it differs from its default. Loading the result gives back
// every field.
func Encode(cfg *Config) []byte {
	if cfg.src != nil {
		if out, ok := encodeInPlace(cfg); ok {
			return out
		}
	}
	return encodeFresh(cfg)
}

func encodeFresh(cfg *Config) []byte {
	var b bytes.Buffer
	b.Write(encodeSettings(cfg.Settings))
	if cfg.Settings != (Settings{}) {
		b.WriteString("\n")
	}
	for i, s := range cfg.Servers {
		if i > 0 {
			b.WriteString("\n")
		}
		EncodeServer(&b, s)
	}
	// Profiles are kept as written: nothing edits them yet.
	if cfg.src != nil {
		lines := strings.Split(string(cfg.src), "\n")
		for _, r := range TOMLTables(lines, "profiles") {
			b.WriteString("\n")
			b.WriteString(strings.Join(lines[r[0]:r[1]], "\n"))
			b.WriteString("\n")
		}
	}
	return b.Bytes()
}

// encodeSettings writes the [settings] table ("" when every setting is the
// default).
func encodeSettings(st Settings) []byte {
	var b bytes.Buffer
	if st == (Settings{}) {
		return nil
	}
	b.WriteString("[settings]\n")
	dur := func(k string, d time.Duration) {
		if d > 0 {
			fmt.Fprintf(&b, "%s = %s\n", k, TOMLString(d.String()))
		}
	}
	dur("probe_interval", st.ProbeInterval)
	dur("probe_timeout", st.ProbeTimeout)
	dur("startup_timeout", st.StartupTimeout)
	if st.LogLimitBytes > 0 {
		fmt.Fprintf(&b, "log_limit = %d\n", st.LogLimitBytes)
	}
	if st.LogLimitLines > 0 {
		fmt.Fprintf(&b, "log_lines = %d\n", st.LogLimitLines)
	}
	if st.GatewayPort > 0 {
		fmt.Fprintf(&b, "gateway_port = %d\n", st.GatewayPort)
	}
	if st.Separator != "" {
		fmt.Fprintf(&b, "separator = %s\n", TOMLString(st.Separator))
	}
	if st.ApproveNewServers {
		b.WriteString("approve_new_servers = true\n")
	}
	if st.Registry != "" {
		fmt.Fprintf(&b, "registry = %s\n", TOMLString(st.Registry))
	}
	return b.Bytes()
}

// EncodeServer writes one [servers.NAME] table.
func EncodeServer(b *bytes.Buffer, s *Server) {
	fmt.Fprintf(b, "[servers.%s]\n", TOMLKey(s.Name))
	str := func(k, v string) {
		if v != "" {
			fmt.Fprintf(b, "%s = %s\n", k, TOMLString(v))
		}
	}
	str("description", s.Description)
	str("source", s.Source)
	str("command", s.Command)
	if len(s.Args) > 0 {
		q := make([]string, len(s.Args))
		for i, a := range s.Args {
			q[i] = TOMLString(a)
		}
		fmt.Fprintf(b, "args = [%s]\n", strings.Join(q, ", "))
	}
	table := func(k string, m map[string]string) {
		if len(m) == 0 {
			return
		}
		var parts []string
		for _, mk := range sortedKeys(m) {
			parts = append(parts, TOMLKey(mk)+" = "+TOMLString(m[mk]))
		}
		fmt.Fprintf(b, "%s = { %s }\n", k, strings.Join(parts, ", "))
	}
	table("env", s.Env)
	str("cwd", s.Cwd)
	str("url", s.URL)
	str("transport", string(s.TransportName))
	table("headers", s.Headers)
	switch mode := s.StartMode(); {
	case s.Start == "" && mode == StartManual:
		b.WriteString("autostart = false\n") // as the entry had it
	case mode != StartAuto:
		str("start", string(mode))
	}
	if s.IdleStop != 0 {
		str("idle_stop", FormatDuration(s.IdleStop))
	}
	if s.Unshared {
		b.WriteString("share = false\n")
	}
	str("restart", string(s.Restart))
	if s.Disabled {
		b.WriteString("disabled = true\n")
	}
}

// FormatDuration writes d the way a person writes it in the file: "10m",
// "1h30m", "90s", "1.5s" (time.Duration's String without zero units).
func FormatDuration(d time.Duration) string {
	out := d.String()
	if strings.HasSuffix(out, "m0s") {
		out = strings.TrimSuffix(out, "0s")
	}
	if strings.HasSuffix(out, "h0m") {
		out = strings.TrimSuffix(out, "0m")
	}
	return out
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }

// TOMLKey writes a TOML key: bare when it can be, quoted otherwise.
func TOMLKey(k string) string {
	if k != "" && strings.IndexFunc(k, func(r rune) bool { return r > 127 || !isBareKeyChar(byte(r)) }) < 0 {
		return k
	}
	return TOMLString(k)
}

// TOMLString writes s as a TOML basic string.
func TOMLString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
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
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Save writes cfg to its Path through [EditFile] (locked, atomic, through
// symbolic links), mode 0600 (an existing file's mode is narrowed to it:
// servers.toml may hold secrets), keeping the previous version as
// Path+".bak".
//
// When the file changed on disk since cfg was loaded (another mcptray
// process, a text editor), cfg's own changes (servers added, changed or
// removed, settings changed) are applied to what is there now instead of
// overwriting it; a server changed on both sides is a conflict, refused
// with an error wrapping ErrChanged. After a save, cfg holds what the file
// holds.
func Save(cfg *Config) error {
	e, err := EditFile(cfg.Path, &WriteOptions{Backup: cfg.Path + ".bak", Perm: 0o600, Narrow: true},
		func(cur []byte) ([]byte, error) {
			next, err := cfg.rebase(cur)
			if err != nil {
				return nil, err
			}
			return Encode(next), nil
		})
	if err != nil {
		return err
	}
	// What was written (with the file's line endings) is what the next
	// save compares the file with.
	path := cfg.Path
	if again, err := Parse(path, e.New); err == nil {
		*cfg = *again
	}
	cfg.Path, cfg.onDisk = path, true
	return nil
}

// rebase is cfg as it should be written over cur, the file's content now
// (nil when there is none).
func (cfg *Config) rebase(cur []byte) (*Config, error) {
	switch {
	case cfg.src == nil && !cfg.onDisk:
		return cfg, nil // built in memory: it is the whole file
	case cfg.onDisk && cur != nil && string(cur) == string(cfg.src),
		!cfg.onDisk && cur == nil:
		return cfg, nil // the file is as cfg found it
	}
	var base *Config
	if cfg.onDisk {
		var err error
		if base, err = Parse(cfg.Path, cfg.src); err != nil {
			return nil, err
		}
	} else {
		base = &Config{}
	}
	now := &Config{Path: cfg.Path}
	if cur != nil {
		var err error
		if now, err = Parse(cfg.Path, cur); err != nil {
			return nil, fmt.Errorf("save %s: %w: it no longer parses, so your changes were not applied to it: %v", cfg.Path, ErrChanged, err)
		}
	}
	conflict := func(what string) error {
		return fmt.Errorf("save %s: %w: %s changed there too; nothing written: reload and make the change again", cfg.Path, ErrChanged, what)
	}
	if cfg.Settings != base.Settings {
		if now.Settings != base.Settings && now.Settings != cfg.Settings {
			return nil, conflict("[settings]")
		}
		now.Settings = cfg.Settings
	}
	for _, b := range base.Servers {
		if cfg.Server(b.Name) != nil {
			continue
		}
		i := slices.IndexFunc(now.Servers, func(s *Server) bool { return s.Name == b.Name })
		if i < 0 {
			continue
		}
		if !now.Servers[i].Equal(b) {
			return nil, conflict("server " + strconv.Quote(b.Name))
		}
		now.Servers = slices.Delete(now.Servers, i, i+1)
	}
	for _, s := range cfg.Servers {
		b := base.Server(s.Name)
		if b != nil && b.Equal(s) {
			continue
		}
		i := slices.IndexFunc(now.Servers, func(o *Server) bool { return o.Name == s.Name })
		switch {
		case i < 0 && b == nil:
			now.Servers = append(now.Servers, s)
		case i < 0:
			return nil, conflict("server " + strconv.Quote(s.Name) + " (removed)")
		case now.Servers[i].Equal(s):
		case b != nil && now.Servers[i].Equal(b):
			now.Servers[i] = s
		default:
			return nil, conflict("server " + strconv.Quote(s.Name))
		}
	}
	return now, nil
}
