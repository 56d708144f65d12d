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
	// Profiles are the [profiles.NAME] entries in file order, valid or not
	// (the implicit default is not among them unless the file writes it:
	// see [Config.Profile]).
	Profiles []*Profile
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
	return loadWith(path, ReadFile)
}

// loadWith is Load reading the file with read.
func loadWith(path string, read func(string) ([]byte, error)) (*Config, error) {
	data, err := read(path)
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
	settingsKeys = []string{"probe_interval", "probe_timeout", "startup_timeout", "log_limit", "log_lines", "gateway_port", "approve_new_servers", "registry", "separator"}
	serverKeys   = []string{"command", "args", "env", "cwd", "url", "transport", "headers", "start", "autostart", "idle_stop", "share",
		"restart", "disabled", "description", "source"}
)

type settingsDoc struct {
	ProbeInterval  any `toml:"probe_interval"`
	ProbeTimeout   any `toml:"probe_timeout"`
	StartupTimeout any `toml:"startup_timeout"`
	LogLimit       any `toml:"log_limit"`
	LogLines       any `toml:"log_lines"`
	GatewayPort    any `toml:"gateway_port"`
	Separator      any `toml:"separator"`
	ApproveNew     any `toml:"approve_new_servers"`
	Registry       any `toml:"registry"`
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
			// The decoder reports a table header left open on the line
			// after it, where it read the newline.
			if strings.Contains(d.Message, "table name") && d.Line > 1 && !strings.HasPrefix(strings.TrimSpace(srcLine(d.Line)), "[") {
				d.Line--
				d.Col = len(srcLine(d.Line)) + 1
			}
			// An array left open is found where the next key or table
			// starts, often lines later: point at its opening bracket.
			if strings.Contains(d.Message, "array terminator") {
				if line, col, ok := openArray(lines, d.Line, d.Col); ok && line < d.Line {
					d.Message = fmt.Sprintf("this array is not closed: ']' is missing before line %d (%s)", d.Line, d.Message)
					d.Line, d.Col = line, col
				}
			}
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
		src := srcLine(l)
		if len(key) >= 3 && key[0] == "servers" && (key[2] == "env" || key[2] == "headers") {
			src = maskStrings(src) // the line may hold a token
		}
		cfg.Diagnostics = append(cfg.Diagnostics, Diagnostic{
			Severity: sev, File: path, Line: l, Col: c, Server: server,
			Field: strings.Join(key, "."), Message: msg, Source: src,
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

	parseServers(cfg, md, raw, at, add)
	if p, ok := raw["profiles"]; ok {
		parseProfiles(cfg, md, p, func(sev Severity, msg string, key []string, value string) {
			l, c := at(key...)
			l, c = valuePosition(lines, l, c, value)
			cfg.Diagnostics = append(cfg.Diagnostics, Diagnostic{
				Severity: sev, File: path, Line: l, Col: c, Field: strings.Join(key, "."), Message: msg, Source: srcLine(l),
			})
		})
	}
	slices.SortStableFunc(cfg.Diagnostics, func(a, b Diagnostic) int { return a.Line - b.Line })
	return cfg, nil
}

// parseServers reads [servers]: every entry is kept, an invalid one with
// Invalid set and an error at its position.
func parseServers(cfg *Config, md toml.MetaData, raw map[string]toml.Primitive, at func(key ...string) (int, int),
	add func(sev Severity, server, field, msg string, key ...string)) {
	p, ok := raw["servers"]
	if !ok {
		return
	}
	var servers map[string]toml.Primitive
	if err := md.PrimitiveDecode(p, &servers); err != nil {
		add(SeverityError, "", "", "servers must be a table of [servers.NAME] tables", "servers")
		return
	}
	for _, name := range serverOrder(md.Keys(), servers) {
		s := &Server{Name: name, Autostart: true}
		s.Line, _ = at("servers", name)
		var v any
		_ = md.PrimitiveDecode(servers[name], &v) // decoding into any cannot fail
		if table, ok := v.(map[string]any); !ok {
			s.Invalid = &ServerError{Server: name, Message: fmt.Sprintf("must be a table ([servers.%s]), not %s", TOMLKey(name), tomlType(v))}
		} else if s.Invalid = decodeServer(s, table); s.Invalid == nil {
			s.Invalid = s.Validate()
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
}

func knownKey(k toml.Key) bool {
	switch {
	case len(k) == 1:
		return k[0] == "settings" || k[0] == "servers" || k[0] == "profiles"
	case k[0] == "profiles":
		return knownProfileKey(k)
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

// decodeServer fills s from its table, checking the type of every field: a
// field of the wrong type is an error that names it (env = "FOO=bar" would
// otherwise be dropped, and the server run without it). Values are never
// quoted in messages: they may be secrets.
func decodeServer(s *Server, m map[string]any) error {
	bad := func(field, format string, args ...any) error {
		return &ServerError{Server: s.Name, Field: field, Message: fmt.Sprintf(format, args...)}
	}
	var err error
	str := func(key string) string {
		v, ok := m[key]
		if !ok || err != nil {
			return ""
		}
		x, ok := v.(string)
		if !ok {
			err = bad(key, "must be a string, not %s", tomlType(v))
		}
		return x
	}
	boolean := func(key string, def bool) bool {
		v, ok := m[key]
		if !ok || err != nil {
			return def
		}
		x, ok := v.(bool)
		if !ok {
			err = bad(key, "must be true or false, not %s", tomlType(v))
		}
		return x
	}
	table := func(key, example string) map[string]string {
		v, ok := m[key]
		if !ok || err != nil {
			return nil
		}
		t, ok := v.(map[string]any)
		if !ok {
			err = bad(key, "must be a table such as %s = { %s }, not %s", key, example, tomlType(v))
			return nil
		}
		out, e := stringMap(t)
		if e != nil {
			err = bad(key+"."+e.Error(), "must be a string")
		}
		return out
	}
	s.Command = str("command")
	if v, ok := m["args"]; ok && err == nil {
		a, isArray := v.([]any)
		if !isArray {
			err = bad("args", `must be an array of strings such as ["-y", "package"], not %s`, tomlType(v))
		}
		for i, e := range a {
			x, ok := e.(string)
			if !ok {
				err = bad("args", "element %d must be a string, not %s", i+1, tomlType(e))
				break
			}
			s.Args = append(s.Args, x)
		}
	}
	s.Env = table("env", `NAME = "value"`)
	s.Cwd = str("cwd")
	s.URL = str("url")
	s.TransportName = Transport(str("transport"))
	s.Headers = table("headers", `Authorization = "Bearer ${env:TOKEN}"`)
	s.Start = StartMode(str("start"))
	s.Autostart = boolean("autostart", true)
	if v, ok := m["idle_stop"]; ok && err == nil {
		d, e := parseDuration(v, true)
		if e != nil {
			err = bad("idle_stop", "%s", e)
		}
		s.IdleStop = d
	}
	s.Unshared = !boolean("share", true)
	s.Restart = RestartPolicy(str("restart"))
	s.Disabled = boolean("disabled", false)
	s.Description = str("description")
	s.Source = str("source")
	if err == nil {
		if _, ok := m["command"]; ok && s.Command == "" {
			err = bad("command", "must not be empty")
		}
	}
	if _, ok := m["autostart"]; ok && err == nil && s.Start != "" {
		// Both keys: they must say the same.
		switch mode := s.StartMode(); {
		case s.Autostart && mode != StartAuto:
			err = bad("autostart", `autostart = true conflicts with start = %q; remove autostart (start replaces it)`, mode)
		case !s.Autostart && mode == StartAuto:
			err = bad("autostart", `autostart = false conflicts with start = "auto"; remove autostart (start replaces it)`)
		}
	}
	if s.Start != "" {
		s.Autostart = s.Start == StartAuto
	}
	return err
}

// maskStrings hides the text of every quoted string in a line of TOML,
// byte for byte so that a caret under a column still points at it.
func maskStrings(line string) string {
	b := []byte(line)
	for i := 0; i < len(b); i++ {
		q := b[i]
		if q != '"' && q != '\'' {
			continue
		}
		j := i + 1
		for ; j < len(b) && b[j] != q; j++ {
			if q == '"' && b[j] == '\\' && j+1 < len(b) {
				b[j] = '*'
				j++
			}
			b[j] = '*'
		}
		i = j
	}
	return string(b)
}

// tomlType names a decoded TOML value's type for a message.
func tomlType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64, float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any, []map[string]any:
		return "an array"
	case map[string]any:
		return "a table"
	}
	return "a date or time"
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

type fieldWarning struct{ field, msg string }

// serverWarnings lists keys that are set but have no effect for this kind.
func serverWarnings(s *Server) []fieldWarning {
	var ws []fieldWarning
	if s.Command != "" && len(s.Headers) > 0 {
		ws = append(ws, fieldWarning{"headers", "applies only to remote (url) servers; ignored"})
	}
	if s.IdleStop > 0 && s.StartMode() == StartManual {
		ws = append(ws, fieldWarning{"idle_stop", `applies only to servers that start by themselves (start = "auto" or "lazy"); ignored`})
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
		dd, err := parseDuration(v, false)
		if err != nil {
			bad(field, err.Error())
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
	if d.GatewayPort != nil {
		n, ok := d.GatewayPort.(int64)
		if !ok || n < MinGatewayPort || n > MaxGatewayPort {
			bad("gateway_port", fmt.Sprintf("must be a port number from %d to %d (no port below %d: those need privileges), not %v",
				MinGatewayPort, MaxGatewayPort, MinGatewayPort, tomlValue(d.GatewayPort)))
		} else {
			s.GatewayPort = int(n)
		}
	}
	if d.Separator != nil {
		sep, ok := d.Separator.(string)
		if !ok {
			bad("separator", fmt.Sprintf("must be a string such as %q, not %s", DefaultSeparator, tomlType(d.Separator)))
		} else if err := CheckSeparator(sep); err != nil {
			bad("separator", err.Error())
		} else {
			s.Separator = sep
		}
	}
	if d.ApproveNew != nil {
		b, ok := d.ApproveNew.(bool)
		if !ok {
			bad("approve_new_servers", "must be true or false, not "+tomlType(d.ApproveNew))
		}
		s.ApproveNewServers = b
	}
	if d.Registry != nil {
		u, ok := d.Registry.(string)
		if pu, err := url.Parse(u); !ok || err != nil || (pu.Scheme != "https" && pu.Scheme != "http") || pu.Host == "" {
			bad("registry", fmt.Sprintf("must be the http(s) URL of an MCP registry such as %q, not %s", DefaultRegistry, tomlValue(d.Registry)))
		} else {
			s.Registry = strings.TrimRight(u, "/")
		}
	}
	return s
}

// tomlValue shows a setting's value in a message: a string quoted (a
// setting is never a secret), anything else as it is.
func tomlValue(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprint(v)
}

// parseDuration reads a duration string such as "30s" or "10m". With zero
// it takes any duration ("0" is "never"; a negative one is left to
// [Server.Validate]), else only a positive one.
func parseDuration(v any, zero bool) (time.Duration, error) {
	str, ok := v.(string)
	if !ok {
		return 0, fmt.Errorf(`must be a duration string such as "30s", not %s`, tomlType(v))
	}
	d, err := time.ParseDuration(str)
	switch {
	case err != nil && zero:
		return 0, fmt.Errorf(`%q is not a duration (use a form such as "10m", "1h" or "90s"; "0" for never)`, str)
	case err != nil || d <= 0 && !zero:
		return 0, fmt.Errorf(`%q is not a positive duration (use a form such as "500ms", "30s" or "2m")`, str)
	}
	return d, nil
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

// openArray finds the opening bracket of the innermost array value still
// open at line, col (1-based), reading the TOML text roughly: strings and
// comments are skipped; a bracket opens an array after '=', ',' or '['.
func openArray(lines []string, line, col int) (int, int, bool) {
	type pos struct{ line, col int }
	var open []pos
	var prev rune // the last character that was not a space, across lines
	for i := 0; i < len(lines) && i < line; i++ {
		runes := []rune(lines[i])
		end := len(runes)
		if i == line-1 {
			end = min(end, col-1)
		}
		var quote rune
		for j := 0; j < end; j++ {
			r := runes[j]
			switch {
			case quote != 0:
				if r == '\\' && quote == '"' {
					j++
				} else if r == quote {
					quote = 0
				}
				continue
			case r == '"' || r == '\'':
				quote = r
			case r == '#':
				j = end
				continue
			case r == '[' && (prev == '=' || prev == ',' || prev == '['):
				open = append(open, pos{i + 1, j + 1})
			case r == ']' && len(open) > 0:
				open = open[:len(open)-1]
			}
			if r != ' ' && r != '\t' {
				prev = r
			}
		}
		if quote != 0 {
			prev = quote
		}
	}
	if len(open) == 0 {
		return 0, 0, false
	}
	p := open[len(open)-1]
	return p.line, p.col, true
}
