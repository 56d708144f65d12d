package registry

import (
	"bytes"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
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
	if !s.Autostart {
		b.WriteString("autostart = false\n")
	}
	str("restart", string(s.Restart))
	if s.Disabled {
		b.WriteString("disabled = true\n")
	}
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

// Save writes cfg to its Path atomically, mode 0600, keeping the previous
// version as Path+".bak".
func Save(cfg *Config) error {
	return WriteFileAtomic(cfg.Path, Encode(cfg), &WriteOptions{Backup: cfg.Path + ".bak"})
}

// WriteOptions tunes [WriteFileAtomic].
type WriteOptions struct {
	// Backup, when set and the file exists, receives a copy of the current
	// file before it is replaced.
	Backup string
	// Perm is the mode for a new file (default 0600). An existing file keeps
	// its mode, narrowed to Perm's bits when Narrow is set.
	Perm fs.FileMode
	// Narrow makes an existing file's mode no wider than Perm.
	Narrow bool
}

// WriteFileAtomic replaces path with data: a temporary file in the same
// folder, fsync, rename, fsync of the folder. If anything fails, the file at
// path is left as it was. Permissions are never widened.
func WriteFileAtomic(path string, data []byte, opts *WriteOptions) error {
	if opts == nil {
		opts = &WriteOptions{}
	}
	perm := opts.Perm
	if perm == 0 {
		perm = 0o600
	}
	dir := filepath.Dir(path)
	if fi, err := os.Stat(path); err == nil {
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("save %s: not a regular file", path)
		}
		if opts.Narrow {
			perm = fi.Mode().Perm() & perm
		} else {
			perm = fi.Mode().Perm()
		}
		if opts.Backup != "" {
			old, err := os.ReadFile(path)
			if err != nil {
				return fmt.Errorf("save %s: read for backup: %w", path, err)
			}
			if err := writeSynced(opts.Backup, old, perm); err != nil {
				return fmt.Errorf("save %s: backup: %w", path, err)
			}
		}
	} else if !os.IsNotExist(err) {
		return fmt.Errorf("save %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	tmpName := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmpName)
		}
	}()
	if err := tmp.Chmod(perm); err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	if err := os.Rename(tmpName, path); err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	ok = true
	syncDir(dir)
	return nil
}

// writeSynced writes a whole file and fsyncs it (used for backups, which need
// not be atomic: a torn backup never damages the original).
func writeSynced(path string, data []byte, perm fs.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // best effort: not supported everywhere (Windows)
		d.Close()
	}
}
