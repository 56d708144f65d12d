package registry

import (
	"fmt"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// A profile is a set of servers one aggregate session offers as a single
// MCP server: [profiles.NAME] in servers.toml.
//
//	[settings]
//	separator = "__"            # SERVER__TOOL
//
//	[profiles.work]
//	servers = ["github", "memory"]
//	exposure = "all"            # or "search"
//
//	[profiles.work.tools.github]
//	allow = ["get_*", "list_*"] # globs: * any run, ? one character
//	deny  = ["*_delete"]
//	pin   = ["get_issue"]       # listed as itself under search exposure
//
// The profile "default" holds every enabled server; [profiles.default]
// may give it tool filters (and, with servers, a narrower set).

// DefaultProfile is the name of the profile that holds every enabled server.
const DefaultProfile = "default"

// DefaultSeparator joins a server's name and its tool's in an aggregate.
const DefaultSeparator = "__"

// Exposure says how an aggregate lists a profile's tools.
type Exposure string

const (
	// ExposureAll lists every allowed tool, namespaced (the default).
	ExposureAll Exposure = "all"
	// ExposureSearch lists a few search, describe and call tools (and the
	// pinned tools) instead of the union.
	ExposureSearch Exposure = "search"
)

// Profile is one [profiles.NAME] entry, or the implicit default.
type Profile struct {
	Name string
	// Servers as written, in order; nil for a default profile that names
	// none (it then holds every enabled server: see [Config.ProfileServers]).
	Servers []string
	// Tools are the per-server filters, by server name.
	Tools    map[string]ToolFilter
	Exposure Exposure
	// Line is the line of the [profiles.NAME] header (0 when implicit).
	Line int
	// Invalid holds why the profile cannot be used; nil when it can.
	Invalid error
}

// ToolFilter is [profiles.NAME.tools.SERVER].
type ToolFilter struct {
	// Allow, when set, lists the only tools offered; Deny hides tools
	// (it wins over Allow).
	Allow, Deny []string
	// Pin lists tools a search-exposure profile lists as themselves.
	Pin []string
}

// Allows reports whether f lets the tool through.
func (f ToolFilter) Allows(tool string) bool {
	if len(f.Allow) > 0 && !slices.ContainsFunc(f.Allow, func(p string) bool { return Glob(p, tool) }) {
		return false
	}
	return !slices.ContainsFunc(f.Deny, func(p string) bool { return Glob(p, tool) })
}

// Pinned reports whether f pins the tool.
func (f ToolFilter) Pinned(tool string) bool {
	return slices.ContainsFunc(f.Pin, func(p string) bool { return Glob(p, tool) })
}

// Allows reports whether the profile offers server's tool.
func (p *Profile) Allows(server, tool string) bool { return p.Tools[server].Allows(tool) }

// Pinned reports whether the profile pins server's tool.
func (p *Profile) Pinned(server, tool string) bool { return p.Tools[server].Pinned(tool) }

// EffectiveExposure is Exposure with its default.
func (p *Profile) EffectiveExposure() Exposure {
	if p.Exposure == "" {
		return ExposureAll
	}
	return p.Exposure
}

// Glob reports whether name matches pattern, in which * stands for any run
// of characters and ? for one; every other character is itself. A tool
// name may hold any character, so nothing in a pattern is a syntax error.
func Glob(pattern, name string) bool {
	p, n := []rune(pattern), []rune(name)
	// The classic two-pointer match: star and its match position are
	// where to resume after a mismatch.
	pi, ni, star, mark := 0, 0, -1, 0
	for ni < len(n) {
		switch {
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, ni
			pi++
		case pi < len(p) && (p[pi] == '?' || p[pi] == n[ni]):
			pi++
			ni++
		case star >= 0:
			pi = star + 1
			mark++
			ni = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// Profile returns the profile called name: one of the file's, or the
// implicit default; nil when there is none.
func (c *Config) Profile(name string) *Profile {
	for _, p := range c.Profiles {
		if p.Name == name {
			return p
		}
	}
	if name == DefaultProfile {
		return &Profile{Name: DefaultProfile}
	}
	return nil
}

// ProfileNames lists the profiles: default first, then the file's in order.
func (c *Config) ProfileNames() []string {
	names := []string{DefaultProfile}
	for _, p := range c.Profiles {
		if p.Name != DefaultProfile {
			names = append(names, p.Name)
		}
	}
	return names
}

// ProfileServers are the servers profile p holds, in its order: for a
// default profile that names none, every enabled server in file order.
// Names the config does not hold are left out (they are errors at load).
func (c *Config) ProfileServers(p *Profile) []*Server {
	var out []*Server
	if p.Servers == nil && p.Name == DefaultProfile {
		for _, s := range c.Servers {
			if !s.Disabled {
				out = append(out, s)
			}
		}
		return out
	}
	for _, n := range p.Servers {
		if s := c.Server(n); s != nil {
			out = append(out, s)
		}
	}
	return out
}

// Separator is the configured separator or its default.
func (s Settings) NameSeparator() string {
	if s.Separator == "" {
		return DefaultSeparator
	}
	return s.Separator
}

// MaxToolName is the longest tool name clients take (they check names
// against ^[a-zA-Z0-9_-]{1,64}$).
const MaxToolName = 64

// CheckSeparator says why sep cannot join server and tool names into names
// clients take, or nil.
func CheckSeparator(sep string) error {
	switch {
	case sep == "":
		return fmt.Errorf("must not be empty (the default is %q)", DefaultSeparator)
	case len(sep) > MaxToolName-2:
		return fmt.Errorf("is %d characters: a name SERVER, separator, TOOL must fit in %d", len(sep), MaxToolName)
	}
	for i := 0; i < len(sep); i++ {
		if !isBareKeyChar(sep[i]) {
			return fmt.Errorf("%q holds %q: tool names clients take are letters, digits, '_' and '-' only", sep, sep[i])
		}
	}
	return nil
}

var (
	profileKeys = []string{"servers", "exposure", "tools"}
	filterKeys  = []string{"allow", "deny", "pin"}
)

func knownProfileKey(k toml.Key) bool {
	switch {
	case len(k) == 2:
		return true
	case len(k) == 3:
		return slices.Contains(profileKeys, k[2])
	case len(k) == 4:
		return k[2] == "tools"
	case len(k) == 5:
		return k[2] == "tools" && slices.Contains(filterKeys, k[4])
	}
	return false
}

// parseProfiles reads [profiles]: every profile is kept, an invalid one
// with Invalid set and an error at its position.
func parseProfiles(cfg *Config, md toml.MetaData, p toml.Primitive, addAt func(sev Severity, msg string, key []string, value string)) {
	var profiles map[string]toml.Primitive
	if err := md.PrimitiveDecode(p, &profiles); err != nil {
		addAt(SeverityError, "profiles must be a table of [profiles.NAME] tables", []string{"profiles"}, "")
		return
	}
	var names []string
	seen := map[string]bool{}
	for _, k := range md.Keys() {
		if len(k) >= 2 && k[0] == "profiles" && !seen[k[1]] {
			if _, ok := profiles[k[1]]; ok {
				seen[k[1]] = true
				names = append(names, k[1])
			}
		}
	}
	for _, name := range names {
		pp := &profileParser{cfg: cfg, md: md, pr: &Profile{Name: name}, addAt: addAt}
		pp.parse(profiles[name])
		cfg.Profiles = append(cfg.Profiles, pp.pr)
	}
}

// profileParser reads one [profiles.NAME] table into pr.
type profileParser struct {
	cfg   *Config
	md    toml.MetaData
	pr    *Profile
	addAt func(sev Severity, msg string, key []string, value string)
}

// fail records an error at key (under profiles.NAME); the profile's
// Invalid is the first.
func (pp *profileParser) fail(msg string, key []string, value string) {
	name := pp.pr.Name
	full := append([]string{"profiles", name}, key...)
	if pp.pr.Invalid == nil {
		pp.pr.Invalid = fmt.Errorf("profiles.%s: %s", TOMLKey(name), msg)
	}
	pp.addAt(SeverityError, fmt.Sprintf("profiles.%s: %s", TOMLKey(name), msg), full, value)
}

func (pp *profileParser) parse(p toml.Primitive) {
	pr, name := pp.pr, pp.pr.Name
	var v any
	_ = pp.md.PrimitiveDecode(p, &v)
	m, ok := v.(map[string]any)
	if !ok {
		pp.fail(fmt.Sprintf("must be a table ([profiles.%s]), not %s", TOMLKey(name), tomlType(v)), nil, "")
		return
	}
	if !ValidName(name) {
		pp.fail("a profile's name must be 1-64 letters, digits, '-' or '_' (it names the client entry mcptray-NAME and a URL)", nil, "")
	}
	if raw, ok := m["servers"]; ok {
		list, err := stringList(raw)
		if err != nil {
			pp.fail("servers "+err.Error(), []string{"servers"}, "")
		}
		pr.Servers = list
		if pr.Servers == nil {
			pr.Servers = []string{}
		}
	}
	if raw, ok := m["exposure"]; ok {
		s, _ := raw.(string)
		switch Exposure(s) {
		case ExposureAll, ExposureSearch:
			pr.Exposure = Exposure(s)
		default:
			pp.fail(fmt.Sprintf(`exposure must be "all" (every tool, namespaced) or "search" (search, describe and call tools), not %s`, tomlValue(raw)), []string{"exposure"}, "")
		}
	}
	if raw, ok := m["tools"]; ok {
		pp.parseTools(raw)
	}
	switch {
	case pr.Servers == nil && name != DefaultProfile:
		pp.fail("the profile holds no servers: list them, e.g. servers = [\"github\"]", nil, "")
	case pr.Servers != nil && len(pr.Servers) == 0:
		pp.fail("the profile holds no servers: servers is empty", []string{"servers"}, "")
	}
	dup := map[string]bool{}
	for _, s := range pr.Servers {
		switch srv := pp.cfg.Server(s); {
		case srv == nil:
			pp.fail(unknownServer(pp.cfg, s), []string{"servers"}, s)
		case dup[s]:
			pp.fail(fmt.Sprintf("servers names %s twice", s), []string{"servers"}, s)
		case srv.Disabled:
			pp.addAt(SeverityWarning, fmt.Sprintf("profiles.%s: server %s is disabled: the profile offers nothing of it until it is enabled", TOMLKey(name), s),
				[]string{"profiles", name, "servers"}, s)
		}
		dup[s] = true
	}
	pr.Line = lineOf(pp.cfg, "profiles", name)
}

// parseTools reads [profiles.NAME.tools.SERVER] tables of allow, deny and
// pin patterns.
func (pp *profileParser) parseTools(raw any) {
	pr, name := pp.pr, pp.pr.Name
	tm, ok := raw.(map[string]any)
	if !ok {
		pp.fail(fmt.Sprintf("tools must be a table of [profiles.%s.tools.SERVER] tables, not %s", TOMLKey(name), tomlType(raw)), []string{"tools"}, "")
	}
	for _, srv := range orderedKeys(pp.md, tm, "profiles", name, "tools") {
		fm, ok := tm[srv].(map[string]any)
		if !ok {
			pp.fail(fmt.Sprintf("tools.%s must be a table with allow, deny or pin, not %s", TOMLKey(srv), tomlType(tm[srv])), []string{"tools", srv}, "")
			continue
		}
		var f ToolFilter
		for _, key := range filterKeys {
			raw, ok := fm[key]
			if !ok {
				continue
			}
			list, err := stringList(raw)
			if err != nil {
				pp.fail(fmt.Sprintf("tools.%s.%s %s", TOMLKey(srv), key, err), []string{"tools", srv, key}, "")
			}
			if slices.Contains(list, "") {
				pp.fail(fmt.Sprintf("tools.%s.%s holds an empty pattern", TOMLKey(srv), key), []string{"tools", srv, key}, "")
			}
			switch key {
			case "allow":
				f.Allow = list
			case "deny":
				f.Deny = list
			case "pin":
				f.Pin = list
			}
		}
		if pr.Tools == nil {
			pr.Tools = map[string]ToolFilter{}
		}
		pr.Tools[srv] = f
		if pp.cfg.Server(srv) == nil {
			pp.fail(unknownServer(pp.cfg, srv), []string{"tools", srv}, "")
		} else if pr.Servers != nil && !slices.Contains(pr.Servers, srv) {
			pp.fail(fmt.Sprintf("tools.%s: %s is not one of this profile's servers (add it to servers)", TOMLKey(srv), srv), []string{"tools", srv}, "")
		}
	}
}

// unknownServer says a profile names a server the config does not hold,
// with the nearest name when one is close.
func unknownServer(cfg *Config, name string) string {
	msg := fmt.Sprintf("no server named %q is configured", name)
	var names []string
	for _, s := range cfg.Servers {
		names = append(names, s.Name)
	}
	if near := Nearest(name, names); near != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", near)
	}
	return msg
}

// stringList reads an array of strings.
func stringList(v any) ([]string, error) {
	a, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf(`must be an array of strings such as ["a", "b"], not %s`, tomlType(v))
	}
	out := make([]string, 0, len(a))
	for i, e := range a {
		s, ok := e.(string)
		if !ok {
			return out, fmt.Errorf("element %d must be a string, not %s", i+1, tomlType(e))
		}
		out = append(out, s)
	}
	return out, nil
}

// orderedKeys are m's keys in the order the file writes them under prefix.
func orderedKeys(md toml.MetaData, m map[string]any, prefix ...string) []string {
	var out []string
	seen := map[string]bool{}
	for _, k := range md.Keys() {
		if len(k) > len(prefix) && slices.Equal(k[:len(prefix)], prefix) && !seen[k[len(prefix)]] {
			if _, ok := m[k[len(prefix)]]; ok {
				seen[k[len(prefix)]] = true
				out = append(out, k[len(prefix)])
			}
		}
	}
	return out
}

func lineOf(cfg *Config, key ...string) int {
	p, ok := keyPositions(strings.Split(string(cfg.src), "\n"))[strings.Join(key, "\x00")]
	if !ok {
		return 0
	}
	return p.line
}

// PatternWarnings are warnings for the tool patterns of cfg's profiles that
// match none of their server's tools. tools gives a server's tool names
// and whether they are known (a server never seen has no catalogue: its
// patterns are not judged).
func (c *Config) PatternWarnings(tools func(server string) ([]string, bool)) []Diagnostic {
	lines := strings.Split(string(c.src), "\n")
	pos := keyPositions(lines)
	var out []Diagnostic
	for _, p := range c.Profiles {
		for _, srv := range slices.Sorted(mapsKeys(p.Tools)) {
			names, known := tools(srv)
			if !known {
				continue
			}
			f := p.Tools[srv]
			for _, kl := range []struct {
				key  string
				list []string
			}{{"allow", f.Allow}, {"deny", f.Deny}, {"pin", f.Pin}} {
				for _, pat := range kl.list {
					if slices.ContainsFunc(names, func(n string) bool { return Glob(pat, n) }) {
						continue
					}
					key := []string{"profiles", p.Name, "tools", srv, kl.key}
					d := Diagnostic{Severity: SeverityWarning, File: c.Path, Server: srv, Field: strings.Join(key, "."),
						Message: fmt.Sprintf("profiles.%s.tools.%s.%s: %q matches none of %s's %d tools", TOMLKey(p.Name), TOMLKey(srv), kl.key, pat, srv, len(names))}
					if at, ok := pos[strings.Join(key, "\x00")]; ok {
						d.Line, d.Col = at.line, at.col
						d.Source = strings.TrimRight(lines[at.line-1], "\r")
						d.Line, d.Col = valuePosition(lines, d.Line, d.Col, pat)
						d.Source = strings.TrimRight(lines[d.Line-1], "\r")
					}
					out = append(out, d)
				}
			}
		}
	}
	return out
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// valuePosition finds a quoted value at or after line:col (an array may
// run over several lines), so an error points at the element itself; the
// key's position when it is not found.
func valuePosition(lines []string, line, col int, value string) (int, int) {
	if value == "" {
		return line, col
	}
	for _, q := range []string{`"` + value + `"`, `'` + value + `'`} {
		for l := line; l <= len(lines) && l < line+200; l++ {
			text := lines[l-1]
			from := 0
			if l == line {
				from = min(col-1, len(text))
			}
			if i := strings.Index(text[from:], q); i >= 0 {
				return l, from + i + 1
			}
			if l > line && strings.Contains(text, "]") {
				break
			}
		}
	}
	return line, col
}
