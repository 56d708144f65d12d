package registry

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// Config is a loaded servers.toml.
type Config struct {
	Path     string
	Settings Settings
	// Servers in file order, valid or not (see [Server.Invalid]).
	Servers []*Server
	// Diagnostics holds every error and warning, in file order.
	Diagnostics []Diagnostic

	// src is the text the config was parsed from: Encode keeps it for every
	// part that did not change, comments included.
	src []byte
	// onDisk is set when src was read from the file at Path (not a default
	// config that is yet to be written).
	onDisk bool
}

// Saved is the file's content as the config was read from it: nil when the
// file does not exist yet (see [OpenForUpdate]) or cfg was built in memory.
func (c *Config) Saved() []byte {
	if !c.onDisk {
		return nil
	}
	return c.src
}

// Server returns the server called name, or nil.
func (c *Config) Server(name string) *Server {
	for _, s := range c.Servers {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// HasErrors reports whether any diagnostic is an error.
func (c *Config) HasErrors() bool {
	return slices.ContainsFunc(c.Diagnostics, func(d Diagnostic) bool { return d.Severity == SeverityError })
}

// Load reads and validates the config file at path. A missing file or a TOML
// syntax error (*SyntaxError) is returned as an error. Schema problems are not:
// they become Diagnostics, and a bad server entry is kept with Invalid set so
// the others still load and run.
func Load(path string) (*Config, error) {
	data, err := ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	cfg, err := Parse(path, data)
	if cfg != nil {
		cfg.onDisk = true
	}
	return cfg, err
}

// Known keys, for unknown-key warnings.
var (
	settingsKeys = []string{"probe_interval", "probe_timeout", "startup_timeout", "log_limit", "log_lines"}
	serverKeys   = []string{"command", "args", "env", "cwd", "url", "transport", "headers", "autostart", "restart", "disabled", "description"}
)

type serverDoc struct {
	Command     *string        `toml:"command"`
	Args        []string       `toml:"args"`
	Env         map[string]any `toml:"env"`
	Cwd         *string        `toml:"cwd"`
	URL         *string        `toml:"url"`
	Transport   *string        `toml:"transport"`
	Headers     map[string]any `toml:"headers"`
	Autostart   *bool          `toml:"autostart"`
	Restart     *string        `toml:"restart"`
	Disabled    *bool          `toml:"disabled"`
	Description *string        `toml:"description"`
}

type settingsDoc struct {
	ProbeInterval  any `toml:"probe_interval"`
	ProbeTimeout   any `toml:"probe_timeout"`
	StartupTimeout any `toml:"startup_timeout"`
	LogLimit       any `toml:"log_limit"`
	LogLines       any `toml:"log_lines"`
}

// Parse is Load on bytes already read; path is used in messages only.
func Parse(path string, data []byte) (*Config, error) {
	cfg := &Config{Path: path, src: data}
	lines := strings.Split(string(data), "\n")
	srcLine := func(n int) string {
		if n >= 1 && n <= len(lines) {
			return strings.TrimRight(lines[n-1], "\r")
		}
		return ""
	}

	var raw map[string]toml.Primitive
	md, err := toml.Decode(string(data), &raw)
	if err != nil {
		d := Diagnostic{Severity: SeverityError, File: path, Message: err.Error()}
		var pe toml.ParseError
		if errors.As(err, &pe) {
			d.Line, d.Col = pe.Position.Line, pe.Position.Col
			d.Message = pe.Message
			d.Source = srcLine(d.Line)
		}
		return nil, &SyntaxError{d}
	}

	pos := keyPositions(lines)
	at := func(key ...string) (int, int) {
		for k := strings.Join(key, "\x00"); ; {
			if p, ok := pos[k]; ok {
				return p.line, p.col
			}
			i := strings.LastIndexByte(k, 0)
			if i < 0 {
				return 0, 0
			}
			k = k[:i]
		}
	}
	add := func(sev Severity, server, field, msg string, key ...string) {
		l, c := at(key...)
		cfg.Diagnostics = append(cfg.Diagnostics, Diagnostic{
			Severity: sev, File: path, Line: l, Col: c, Server: server,
			Field: strings.Join(key, "."), Message: msg, Source: srcLine(l),
		})
	}

	// Unknown keys, from the full key list (which is in file order).
	for _, k := range md.Keys() {
		if !knownKey(k) {
			add(SeverityWarning, serverOf(k), "", fmt.Sprintf("unknown key %q (ignored)", k.String()), k...)
		}
	}

	if p, ok := raw["settings"]; ok {
		var sd settingsDoc
		if err := md.PrimitiveDecode(p, &sd); err != nil {
			add(SeverityError, "", "", "settings must be a table: "+tomlErr(err), "settings")
		} else {
			cfg.Settings = parseSettings(sd, func(field, msg string) {
				add(SeverityError, "", field, "settings."+field+": "+msg, "settings", field)
			})
		}
	}

	p, ok := raw["servers"]
	if !ok {
		return cfg, nil
	}
	var servers map[string]toml.Primitive
	if err := md.PrimitiveDecode(p, &servers); err != nil {
		add(SeverityError, "", "", "servers must be a table of [servers.NAME] tables", "servers")
		return cfg, nil
	}
	for _, name := range serverOrder(md.Keys(), servers) {
		s := &Server{Name: name, Autostart: true}
		s.Line, _ = at("servers", name)
		var doc serverDoc
		if err := md.PrimitiveDecode(servers[name], &doc); err != nil {
			s.Invalid = &ServerError{Server: name, Message: tomlErr(err)}
		} else {
			s.Invalid = fillServer(s, &doc)
		}
		if s.Invalid != nil {
			field := ""
			var se *ServerError
			if errors.As(s.Invalid, &se) {
				field = se.Field
			}
			key := []string{"servers", name}
			if field != "" {
				key = append(key, strings.Split(field, ".")...)
			}
			add(SeverityError, name, field, s.Invalid.Error(), key...)
		}
		for _, w := range serverWarnings(s) {
			add(SeverityWarning, name, w.field, fmt.Sprintf("servers.%s.%s: %s", name, w.field, w.msg), "servers", name, w.field)
		}
		cfg.Servers = append(cfg.Servers, s)
	}
	slices.SortStableFunc(cfg.Diagnostics, func(a, b Diagnostic) int { return a.Line - b.Line })
	return cfg, nil
}

func knownKey(k toml.Key) bool {
	switch {
	case len(k) == 1:
		return k[0] == "settings" || k[0] == "servers"
	case k[0] == "settings":
		return len(k) == 2 && slices.Contains(settingsKeys, k[1])
	case k[0] == "servers" && len(k) == 2:
		return true
	case k[0] == "servers" && len(k) == 3:
		return slices.Contains(serverKeys, k[2])
	case k[0] == "servers" && len(k) == 4:
		return k[2] == "env" || k[2] == "headers"
	}
	return false
}

func serverOf(k toml.Key) string {
	if len(k) >= 2 && k[0] == "servers" {
		return k[1]
	}
	return ""
}

// serverOrder lists server names in the order they first appear in the file.
func serverOrder(keys []toml.Key, servers map[string]toml.Primitive) []string {
	var names []string
	seen := map[string]bool{}
	for _, k := range keys {
		if len(k) >= 2 && k[0] == "servers" && !seen[k[1]] {
			if _, ok := servers[k[1]]; ok {
				seen[k[1]] = true
				names = append(names, k[1])
			}
		}
	}
	return names
}

// tomlErr strips the decoder's generic prefix from a type error.
func tomlErr(err error) string {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "toml: ")
	if i := strings.Index(msg, "incompatible types: "); i >= 0 {
		msg = "wrong type: " + msg[i+len("incompatible types: "):]
	}
	return msg
}

func fillServer(s *Server, d *serverDoc) error {
	bad := func(field, format string, args ...any) error {
		return &ServerError{Server: s.Name, Field: field, Message: fmt.Sprintf(format, args...)}
	}
	if !ValidName(s.Name) {
		return bad("", "the name must be 1-64 letters, digits, '-' or '_'")
	}
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	s.Command, s.Args, s.Cwd, s.URL = str(d.Command), d.Args, str(d.Cwd), str(d.URL)
	s.TransportName = Transport(str(d.Transport))
	s.Restart = RestartPolicy(str(d.Restart))
	s.Description = str(d.Description)
	if d.Autostart != nil {
		s.Autostart = *d.Autostart
	}
	if d.Disabled != nil {
		s.Disabled = *d.Disabled
	}
	var err error
	if s.Env, err = stringMap(d.Env); err != nil {
		return bad("env."+err.Error(), "must be a string")
	}
	if s.Headers, err = stringMap(d.Headers); err != nil {
		return bad("headers."+err.Error(), "must be a string")
	}

	switch {
	case d.Command != nil && d.URL != nil:
		return bad("", "set either command or url, not both")
	case d.Command == nil && d.URL == nil:
		return bad("", "set command (a local stdio server) or url (a remote server)")
	case d.Command != nil && strings.TrimSpace(s.Command) == "":
		return bad("command", "must not be empty")
	case d.URL != nil:
		if err := checkURL(s.URL); err != nil {
			return bad("url", "%v", err)
		}
	}
	switch s.TransportName {
	case "", TransportHTTP, TransportSSE:
		if s.Command != "" && s.TransportName != "" {
			return bad("transport", "%q applies to a url; a command always runs over stdio", s.TransportName)
		}
	case TransportStdio:
		if s.URL != "" {
			return bad("transport", `"stdio" needs a command, not a url`)
		}
	default:
		return bad("transport", `must be "http" (Streamable HTTP) or "sse" (deprecated HTTP+SSE), not %q`, s.TransportName)
	}
	switch s.Restart {
	case "", RestartOnFailure, RestartAlways, RestartNever:
	default:
		return bad("restart", `must be "on-failure", "always" or "never", not %q`, s.Restart)
	}
	return nil
}

// stringMap converts a TOML table of scalars to strings; numbers and booleans
// are accepted (PORT = 3000 is common) and written back as strings. On error
// it returns the offending key.
func stringMap(m map[string]any) (map[string]string, error) {
	if m == nil {
		return nil, nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		switch v := v.(type) {
		case string:
			out[k] = v
		case int64:
			out[k] = strconv.FormatInt(v, 10)
		case float64:
			out[k] = strconv.FormatFloat(v, 'f', -1, 64)
		case bool:
			out[k] = strconv.FormatBool(v)
		default:
			return nil, errors.New(k)
		}
	}
	return out, nil
}

func checkURL(raw string) error {
	probe := ReplaceEnvRefs(raw, func(string) string { return "x" })
	u, err := url.Parse(probe)
	if err != nil {
		return fmt.Errorf("not a valid URL: %v", errors.Unwrap(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("must start with http:// or https://, got %q", raw)
	}
	if u.Host == "" {
		return fmt.Errorf("has no host: %q", raw)
	}
	return nil
}

type fieldWarning struct{ field, msg string }

// serverWarnings lists keys that are set but have no effect for this kind.
func serverWarnings(s *Server) []fieldWarning {
	var ws []fieldWarning
	if s.Command != "" && len(s.Headers) > 0 {
		ws = append(ws, fieldWarning{"headers", "applies only to remote (url) servers; ignored"})
	}
	if s.URL != "" && s.Command == "" {
		if len(s.Args) > 0 {
			ws = append(ws, fieldWarning{"args", "applies only to stdio (command) servers; ignored"})
		}
		if len(s.Env) > 0 {
			ws = append(ws, fieldWarning{"env", "applies only to stdio (command) servers; ignored"})
		}
		if s.Cwd != "" {
			ws = append(ws, fieldWarning{"cwd", "applies only to stdio (command) servers; ignored"})
		}
	}
	return ws
}

func parseSettings(d settingsDoc, bad func(field, msg string)) Settings {
	var s Settings
	dur := func(field string, v any) time.Duration {
		if v == nil {
			return 0
		}
		str, ok := v.(string)
		if !ok {
			bad(field, fmt.Sprintf(`must be a duration string such as "30s", not %v`, v))
			return 0
		}
		dd, err := time.ParseDuration(str)
		if err != nil || dd <= 0 {
			bad(field, fmt.Sprintf(`%q is not a positive duration (use a form such as "500ms", "30s" or "2m")`, str))
			return 0
		}
		return dd
	}
	s.ProbeInterval = dur("probe_interval", d.ProbeInterval)
	s.ProbeTimeout = dur("probe_timeout", d.ProbeTimeout)
	s.StartupTimeout = dur("startup_timeout", d.StartupTimeout)
	if d.LogLimit != nil {
		n, err := parseSize(d.LogLimit)
		if err != nil {
			bad("log_limit", err.Error())
		}
		s.LogLimitBytes = n
	}
	if d.LogLines != nil {
		n, ok := d.LogLines.(int64)
		if !ok || n <= 0 || n > math.MaxInt32 {
			bad("log_lines", fmt.Sprintf("must be a positive whole number of lines, not %v", d.LogLines))
		} else {
			s.LogLimitLines = int(n)
		}
	}
	return s
}

// parseSize reads a byte size: a whole number of bytes, or a string such as
// "512KiB", "2MiB", "1GiB" (KB/MB/GB are read as powers of 1024 too).
func parseSize(v any) (int64, error) {
	switch v := v.(type) {
	case int64:
		if v <= 0 {
			return 0, fmt.Errorf("must be positive, not %d", v)
		}
		return v, nil
	case string:
		s := strings.TrimSpace(v)
		i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
		num, unit := s, ""
		if i >= 0 {
			num, unit = s[:i], strings.ToLower(strings.TrimSpace(s[i:]))
		}
		f, err := strconv.ParseFloat(num, 64)
		mult := map[string]float64{"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
			"m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30}[unit]
		if err != nil || mult == 0 || f <= 0 {
			return 0, fmt.Errorf(`%q is not a size (use a form such as "2MiB" or "512KiB")`, v)
		}
		return int64(f * mult), nil
	}
	return 0, fmt.Errorf(`must be a size such as "2MiB", not %v`, v)
}
