package clients

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/tailscale/hujson"
	"go.yaml.in/yaml/v3"

	"mcptray/internal/lazyre"
	"mcptray/registry"
)

// Imported is what a client's file holds, as registry servers.
type Imported struct {
	// Servers in file order, names made valid for servers.toml.
	Servers []*registry.Server
	// Warnings: renamed entries, literal secrets kept, fields mcptray does
	// not model, entries skipped.
	Warnings []string
}

type rawEntry struct {
	name string
	v    any
}

// Import reads a client's file (data; file is used in messages) and turns
// its entries into servers: the client's secret syntax back into
// ${env:VAR}, the mcp-remote bridge back into a remote server. Entries that
// go through mcptray (`mcptray connect NAME`, the local endpoint's URL) are
// servers.toml's own: they are skipped, with a warning.
func (c *Client) Import(file string, data []byte, opts *Options) (*Imported, error) {
	im, err := c.importAll(file, data, opts)
	if err != nil {
		return nil, err
	}
	servers := im.Servers[:0]
	for _, s := range im.Servers {
		if r := RouteOf(s); r != RouteDirect {
			im.Warnings = append(im.Warnings, fmt.Sprintf("%s: entry %q goes through mcptray (%s): skipped, it is a server of mcptray's already", file, s.Name, commandLine(s, false)))
			continue
		}
		servers = append(servers, s)
	}
	im.Servers = servers
	return im, nil
}

// importAll is Import keeping the entries that go through mcptray.
func (c *Client) importAll(file string, data []byte, opts *Options) (*Imported, error) {
	o := opts.withDefaults()
	if o.Scope == "" {
		o.Scope = c.scopes[0]
	}
	entries, err := c.readEntries(file, data, c.keyPath(o))
	if err != nil {
		return nil, err
	}
	im := &Imported{}
	warn := func(format string, args ...any) { im.Warnings = append(im.Warnings, fmt.Sprintf(format, args...)) }
	used := map[string]bool{}
	for _, e := range entries {
		m, ok := e.v.(map[string]any)
		if !ok {
			warn("%s: entry %q is not an object: skipped", file, e.name)
			continue
		}
		name := SanitizeName(e.name)
		for base, i := name, 2; used[name]; i++ {
			name = fmt.Sprintf("%s-%d", strings.TrimRight(base[:min(len(base), 60)], "-"), i)
		}
		used[name] = true
		if name != e.name {
			warn("%q is not a valid server name: imported as %q", e.name, name)
		}
		s := c.toServer(name, m, o.remedies(), warn)
		if err := s.Validate(); err != nil {
			warn("%s: entry %q skipped: %v", file, e.name, err)
			continue
		}
		im.Servers = append(im.Servers, s)
	}
	return im, nil
}

var badNameChar = lazyre.New(`[^A-Za-z0-9_-]+`)

// SanitizeName makes name valid for servers.toml: other characters become
// '-', at most 64 of them.
func SanitizeName(name string) string {
	n := strings.Trim(badNameChar().ReplaceAllString(name, "-"), "-")
	if len(n) > 64 {
		n = strings.TrimRight(n[:64], "-")
	}
	if n == "" {
		n = "server"
	}
	return n
}

// readEntries finds the entries at key in file order.
func (c *Client) readEntries(file string, data []byte, key []string) ([]rawEntry, error) {
	switch c.Format {
	case FormatJSON, FormatJSONC:
		if len(bytes.TrimSpace(data)) == 0 {
			return nil, nil
		}
		// Import reads strict files leniently: a comment does no harm here.
		_, target, err := jsonTarget(file, data, FormatJSONC, key, false)
		if err != nil || target == nil {
			return nil, err
		}
		var out []rawEntry
		for _, m := range target.Value.(*hujson.Object).Members {
			raw, err := hujson.Standardize(bytes.Clone(data[m.Value.StartOffset:m.Value.EndOffset]))
			if err != nil {
				return nil, &ParseError{File: file, Msg: err.Error()}
			}
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				return nil, &ParseError{File: file, Msg: err.Error()}
			}
			out = append(out, rawEntry{memberName(&m), v})
		}
		return out, nil
	case FormatYAML:
		doc, err := yamlParse(file, data)
		if err != nil {
			return nil, err
		}
		target, err := yamlTarget(file, doc, key, c.List, false)
		if err != nil || target == nil {
			return nil, err
		}
		var out []rawEntry
		if c.List {
			for _, e := range target.Content {
				n := ""
				if e.Kind == yaml.MappingNode {
					if _, nn := mapGet(e, "name"); nn != nil {
						n = nn.Value
					}
				}
				out = append(out, rawEntry{n, yamlPlain(e)})
			}
		} else {
			for i := 0; i+1 < len(target.Content); i += 2 {
				out = append(out, rawEntry{target.Content[i].Value, yamlPlain(target.Content[i+1])})
			}
		}
		return out, nil
	case FormatTOML:
		data, md, err := tomlParse(file, data)
		if err != nil {
			return nil, err
		}
		t, _ := data[key[0]].(map[string]any)
		var out []rawEntry
		seen := map[string]bool{}
		for _, k := range md.Keys() {
			if len(k) >= 2 && k[0] == key[0] && !seen[k[1]] {
				if v, ok := t[k[1]]; ok {
					seen[k[1]] = true
					out = append(out, rawEntry{k[1], v})
				}
			}
		}
		return out, nil
	}
	return nil, nil
}

// yamlPlain decodes a node into plain maps (string keys) and slices.
func yamlPlain(n *yaml.Node) any {
	var v any
	if err := n.Decode(&v); err != nil {
		return nil
	}
	return v
}

func (c *Client) toServer(name string, m map[string]any, rem *Remedies, warn func(string, ...any)) *registry.Server {
	sh := c.shape
	s := &registry.Server{Name: name, Autostart: true}
	known := c.managedKeys()
	for _, k := range []string{"disabled", "enabled", "description", "source", "name", "timeout", "envs", "environment", "cmd"} {
		if c.ID != "goose" && k == "timeout" {
			continue
		}
		known[k] = true
	}
	str := func(v any) string {
		switch x := v.(type) {
		case string:
			return c.unrefString(x)
		case nil:
			return ""
		}
		return c.unrefString(fmt.Sprint(v))
	}
	strs := func(v any) []string {
		a, _ := v.([]any)
		var out []string
		for _, e := range a {
			out = append(out, str(e))
		}
		return out
	}
	strMap := func(v any) map[string]string {
		mm, ok := v.(map[string]any)
		if !ok || len(mm) == 0 {
			return nil
		}
		out := map[string]string{}
		for k, e := range mm {
			out[k] = str(e)
		}
		return out
	}
	first := func(keys ...string) any {
		for _, k := range keys {
			if v, ok := m[k]; ok && v != nil {
				return v
			}
		}
		return nil
	}

	switch cmd := first(sh.command, "command", "cmd").(type) {
	case string:
		s.Command = str(cmd)
		s.Args = strs(first(sh.args, "args"))
	case []any:
		if all := strs(cmd); len(all) > 0 {
			s.Command, s.Args = all[0], all[1:]
		}
	}
	s.Env = unplaceholder(strMap(first(sh.env, "env", "envs", "environment")))
	if sh.codex {
		for _, v := range strs(m["env_vars"]) {
			if s.Env == nil {
				s.Env = map[string]string{}
			}
			s.Env[v] = "${env:" + v + "}"
		}
	}
	s.Cwd = str(first("cwd"))
	typ, _ := m["type"].(string)
	urlKey := ""
	for _, k := range []string{sh.url, "url", "serverUrl", "httpUrl", "uri"} {
		if v, ok := m[k].(string); ok && k != "" && v != "" {
			s.URL, urlKey = str(v), k
			break
		}
	}
	if s.URL != "" {
		c.remoteFields(s, m, urlKey, typ, strMap, warn)
	}
	unbridge(s)
	if d, ok := m["disabled"].(bool); ok && d {
		s.Disabled = true
	}
	if e, ok := m["enabled"].(bool); ok && !e {
		s.Disabled = true
	}
	if d, ok := m["description"].(string); ok {
		s.Description = d
	}
	c.warnUnimported(name, m, known, s, strs, rem, warn)
	return s
}

// warnUnimported warns of what an entry holds that mcptray does not
// import (fields it does not model) or imports as a risk (a placeholder or
// a literal secret in env or headers).
func (c *Client) warnUnimported(name string, m map[string]any, known map[string]bool, s *registry.Server, strs func(any) []string, rem *Remedies, warn func(string, ...any)) {
	var extra []string
	for k := range m {
		if k == "tools" && slices.Equal(strs(m[k]), []string{"*"}) {
			continue // Copilot CLI's default: every tool
		}
		if !known[k] {
			extra = append(extra, k)
		}
	}
	slices.Sort(extra)
	if len(extra) > 0 {
		warn("servers.%s: %s field(s) %s are not modelled by mcptray: not imported", name, c.Name, strings.Join(extra, ", "))
	}
	for _, f := range []struct {
		what string
		m    map[string]string
	}{{"env", s.Env}, {"headers", s.Headers}} {
		for _, k := range sortedKeys(f.m) {
			v := f.m[k]
			if strings.Contains(v, Hidden) {
				warn("servers.%s %s.%s holds %s, which mcptray prints in place of a secret: not a working value; set the real one", name, f.what, k, Hidden)
				continue
			}
			if v != "" && !registry.HasEnvRef(v) && registry.SecretName(k) {
				warn("servers.%s %s.%s holds a literal secret: kept as is; consider an ${env:VAR} reference, or %s", name, f.what, k, rem.Keyring)
			}
		}
	}
}

// remoteFields reads a remote entry's headers (with Codex's variables for
// them) and transport into s; a url beside a command is dropped, with a
// warning.
func (c *Client) remoteFields(s *registry.Server, m map[string]any, urlKey, typ string, strMap func(any) map[string]string, warn func(string, ...any)) {
	sh := c.shape
	var hv any = m
	for _, k := range sh.headers {
		hm, _ := hv.(map[string]any)
		hv = hm[k]
	}
	s.Headers = strMap(hv)
	if s.Headers == nil {
		s.Headers = strMap(m["headers"])
	}
	s.Headers = unplaceholder(s.Headers)
	if sh.codex {
		if v, ok := m["bearer_token_env_var"].(string); ok && v != "" {
			if s.Headers == nil {
				s.Headers = map[string]string{}
			}
			s.Headers["Authorization"] = "Bearer ${env:" + v + "}"
		}
		if hm, ok := m["env_http_headers"].(map[string]any); ok {
			for k, v := range hm {
				if s.Headers == nil {
					s.Headers = map[string]string{}
				}
				s.Headers[k] = "${env:" + fmt.Sprint(v) + "}"
			}
		}
	}
	switch {
	case typ == "sse":
		s.TransportName = registry.TransportSSE
	case typ != "":
	case sh.httpURL != "" && urlKey == sh.url:
		// Qwen Code: url is SSE, httpUrl Streamable HTTP.
		s.TransportName = registry.TransportSSE
	case urlKey == "url" && (c.ID == "cline" || c.ID == "roo"):
		// These clients read a url without type as SSE. (Gemini CLI
		// reads it as Streamable HTTP, falling back to SSE.)
		s.TransportName = registry.TransportSSE
	}
	if s.Command != "" {
		warn("servers.%s has both a command and a url: the url is ignored", s.Name)
		s.URL, s.Headers, s.TransportName = "", nil, ""
	}
}

// unbridge turns `npx -y mcp-remote URL [--header "K: V"]...` (also behind
// `cmd /c`) back into the remote server it reaches.
func unbridge(s *registry.Server) {
	args := s.Args
	cmd := s.Command
	if strings.EqualFold(path.Base(strings.ReplaceAll(cmd, `\`, "/")), "cmd") && len(args) >= 2 && strings.EqualFold(args[0], "/c") {
		cmd, args = args[1], args[2:]
	}
	base := strings.ToLower(path.Base(strings.ReplaceAll(cmd, `\`, "/")))
	if base != "npx" && base != "npx.cmd" {
		return
	}
	i := slices.Index(args, "mcp-remote")
	if i < 0 || i+1 >= len(args) {
		return
	}
	for _, a := range args[:i] {
		if a != "-y" && a != "--yes" {
			return
		}
	}
	out := &registry.Server{URL: args[i+1]}
	rest := args[i+2:]
	for j := 0; j < len(rest); j++ {
		switch {
		case rest[j] == "--header" && j+1 < len(rest):
			k, v, ok := strings.Cut(rest[j+1], ":")
			if !ok {
				return
			}
			if out.Headers == nil {
				out.Headers = map[string]string{}
			}
			out.Headers[strings.TrimSpace(k)] = strings.TrimSpace(v)
			j++
		case rest[j] == "--transport" && j+1 < len(rest):
			switch rest[j+1] {
			case "sse-only", "sse-first":
				out.TransportName = registry.TransportSSE
			}
			j++
		default:
			return // an option the bridge takes that mcptray cannot express
		}
	}
	if len(s.Env) > 0 {
		return
	}
	s.Command, s.Args, s.URL, s.Headers, s.TransportName = "", nil, out.URL, out.Headers, out.TransportName
}

var varName = `([A-Za-z_][A-Za-z0-9_]*)`

// placeholderRE is a placeholder mcptray writes for a reference a client
// cannot express ([Placeholder]).
var placeholderRE = lazyre.New(`<` + varName + `>`)

// unplaceholder turns mcptray's placeholders in env or header values back
// into the references they stand for: "<MY_KEY>" is ${env:MY_KEY}, not a
// literal secret.
func unplaceholder(m map[string]string) map[string]string {
	for k, v := range m {
		m[k] = placeholderRE().ReplaceAllStringFunc(v, func(p string) string {
			if p == Hidden { // a secret left out, not a variable
				return p
			}
			return "${env:" + p[1:len(p)-1] + "}"
		})
	}
	return m
}

// unrefString turns the client's references back into ${env:VAR}.
func (c *Client) unrefString(s string) string {
	for _, p := range c.unref {
		if p.prefix == "${env:" {
			continue
		}
		var re *regexp.Regexp
		if p.bare {
			re = regexp.MustCompile(`\$` + varName + `\b`)
		} else {
			re = regexp.MustCompile(regexp.QuoteMeta(p.prefix) + varName + `(:-[^}]*)?` + regexp.QuoteMeta(p.suffix))
		}
		var b strings.Builder
		last := 0
		for _, m := range re.FindAllStringSubmatchIndex(s, -1) {
			// Leave mcptray's own ${env:...} alone, and a "{env:" that is
			// the tail of one.
			if m[0] > 0 && s[m[0]-1] == '$' && !strings.HasPrefix(p.prefix, "$") {
				continue
			}
			if strings.HasPrefix(s[m[0]:], "${env:") {
				continue
			}
			b.WriteString(s[last:m[0]])
			def := ""
			if len(m) > 4 && m[4] >= 0 {
				def = s[m[4]:m[5]] // ":-default", kept as mcptray writes it
			}
			b.WriteString("${env:" + s[m[2]:m[3]] + def + "}")
			last = m[1]
		}
		b.WriteString(s[last:])
		s = b.String()
	}
	return s
}

// secretFields are the entry keys whose string values are secrets, in every
// client's spelling.
var secretFields = map[string]bool{"env": true, "envs": true, "environment": true, "headers": true, "http_headers": true}

// fileSecrets are the literal secrets of every entry in a client's file
// (including entries mcptray did not write and cannot import): env and
// header values, credentials in URLs, mcp-remote --header arguments. The
// client's references are not secrets. A file that does not parse has none
// that can be found.
func (c *Client) fileSecrets(file string, data []byte, o *Options) []string {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	entries, err := c.readEntries(file, data, c.keyPath(o))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		out = append(out, c.valueSecrets(e.v, false)...)
	}
	return out
}

func (c *Client) valueSecrets(v any, secret bool) []string {
	probe := &registry.Server{}
	var out []string
	switch x := v.(type) {
	case string:
		x = c.unrefString(x)
		if secret {
			probe.Env = map[string]string{"v": x}
		} else {
			probe.URL = x
		}
	case []any:
		for _, e := range x {
			if s, ok := e.(string); ok {
				if secret {
					out = append(out, c.valueSecrets(s, true)...)
				} else {
					probe.Args = append(probe.Args, c.unrefString(s))
				}
			} else {
				out = append(out, c.valueSecrets(e, secret)...)
			}
		}
	case map[string]any:
		for k, e := range x {
			out = append(out, c.valueSecrets(e, secret || secretFields[k])...)
		}
	}
	return append(out, probe.Secrets()...)
}
