package clients

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"mcptray/registry"
)

// kv is one member of an ordered object.
type kv struct {
	K string
	V any // string, bool, int, []string, obj, []any
}

// obj is an object whose members keep their order, so output is stable and
// reads the way each client documents it.
type obj []kv

// built is one server made ready for a client: command resolved and wrapped,
// remote bridged where needed, references turned into the client's syntax.
type built struct {
	name    string
	srv     *registry.Server // the effective server (strings already converted)
	entry   obj
	bridged bool
	// Codex forwards secrets by variable name.
	envVars    []string
	bearerVar  string
	envHeaders obj
}

// builder carries one export's state: options and what it had to say.
type builder struct {
	c        *Client
	o        *Options
	mask     bool // mask literal secrets (output), not when writing a file
	warnings []string
	notes    []string
	seen     map[string]bool
	// secrets are literal secret values met, to mask them in diffs.
	secrets []string
}

func (b *builder) warn(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if b.seen == nil {
		b.seen = map[string]bool{}
	}
	if !b.seen[msg] {
		b.seen[msg] = true
		b.warnings = append(b.warnings, msg)
	}
}

func (b *builder) note(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if !slices.Contains(b.notes, msg) {
		b.notes = append(b.notes, msg)
	}
}

// Masked is what a masked secret shows as.
const Masked = "••••••"

// maskSecret hides a literal secret, keeping an auth scheme visible
// ("Bearer abc" becomes "Bearer ••••••").
func maskSecret(v string) string {
	if v == "" {
		return v
	}
	if scheme, _, ok := strings.Cut(v, " "); ok && (strings.EqualFold(scheme, "Bearer") || strings.EqualFold(scheme, "Basic") || strings.EqualFold(scheme, "Token")) {
		return scheme + " " + Masked
	}
	return Masked
}

// Placeholder is what a reference becomes in a client without reference
// syntax, unless secrets are revealed.
func Placeholder(name string) string { return "<" + name + ">" }

// conv turns one string of a server into the client's form: references into
// its syntax (or a placeholder), literal secrets masked when b.mask.
func (b *builder) conv(server, field, v string, secret bool) string {
	if registry.HasEnvRef(v) {
		return registry.ReplaceEnvRefs(v, func(n string) string {
			if b.c.Ref != nil {
				return b.c.Ref(n)
			}
			return b.fallback(server, field, n)
		})
	}
	if secret && v != "" {
		b.secrets = append(b.secrets, v)
		if b.mask && !b.o.RevealSecrets {
			return maskSecret(v)
		}
	}
	return v
}

// fallback is a reference the client cannot express.
func (b *builder) fallback(server, field, name string) string {
	if b.o.RevealSecrets {
		if val, ok := b.o.LookupEnv(name); ok {
			b.secrets = append(b.secrets, val)
			return val
		}
		b.warn("servers.%s %s refers to $%s, which is not set: wrote the placeholder %s", server, field, name, Placeholder(name))
		return Placeholder(name)
	}
	b.warn("%s cannot reference environment variables here: servers.%s %s holds the placeholder %s; replace it, or pass --reveal-secrets to write $%s's value", b.c.Name, server, field, Placeholder(name), name)
	return Placeholder(name)
}

// windowsShims are commands that are .cmd scripts on Windows, which newer
// Node refuses to spawn directly: they run through `cmd /c`.
var windowsShims = []string{"npx", "npm", "pnpm", "pnpx", "yarn", "yarnpkg", "corepack"}

func needsCmd(command string) bool {
	base := strings.ToLower(command)
	if i := strings.LastIndexAny(base, `/\`); i >= 0 {
		base = base[i+1:]
	}
	if strings.HasSuffix(base, ".cmd") || strings.HasSuffix(base, ".bat") {
		return true
	}
	return slices.Contains(windowsShims, base)
}

var (
	bearerRef = regexp.MustCompile(`^Bearer \$\{env:([A-Za-z_][A-Za-z0-9_]*)\}$`)
	wholeRef  = regexp.MustCompile(`^\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}$`)
)

// build prepares servers for the client.
func (c *Client) build(servers []*registry.Server, o *Options, mask bool) ([]*built, *builder, error) {
	b := &builder{c: c, o: o, mask: mask}
	var out []*built
	for _, s := range servers {
		if s.Invalid != nil {
			return nil, nil, fmt.Errorf("servers.%s is invalid: %w", s.Name, s.Invalid)
		}
		bs, err := b.one(s)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, bs)
	}
	return out, b, nil
}

func (b *builder) one(src *registry.Server) (*built, error) {
	c, o := b.c, b.o
	s := src.Clone()
	bs := &built{name: s.Name, srv: s}
	done := map[int]bool{} // args already converted (bridged header values)
	if s.IsRemote() && (c.Bridge || (s.Transport() == registry.TransportSSE && c.shape.noSSE)) {
		args := []string{"-y", "mcp-remote", b.conv(s.Name, "url", s.URL, false)}
		if s.Transport() == registry.TransportSSE {
			args = append(args, "--transport", "sse-only")
		}
		for _, k := range sortedKeys(s.Headers) {
			args = append(args, "--header")
			done[len(args)] = true
			args = append(args, k+": "+b.conv(s.Name, "headers."+k, s.Headers[k], true))
		}
		done[2] = true
		s.Command, s.Args, s.URL, s.Headers, s.TransportName = "npx", args, "", nil, ""
		bs.bridged = true
		b.note("%s is remote; %s runs it through the mcp-remote bridge (npx -y mcp-remote, needs Node.js).", s.Name, c.Name)
	}
	if !s.IsRemote() {
		s.Command = b.conv(s.Name, "command", s.Command, false)
		for i, a := range s.Args {
			if !done[i] {
				s.Args[i] = b.conv(s.Name, fmt.Sprintf("args[%d]", i), a, false)
			}
		}
		if o.Resolve != nil && o.OS == o.HostOS && !strings.ContainsAny(s.Command, `/\${}<>`) {
			if p, err := o.Resolve(s.Command); err == nil {
				s.Command = p
			} else {
				b.warn("servers.%s: could not find %q on the login shell's PATH (%v): kept as written", s.Name, s.Command, err)
			}
		}
		if o.OS == "windows" && needsCmd(s.Command) {
			s.Args = append([]string{"/c", s.Command}, s.Args...)
			s.Command = "cmd"
		}
		if s.Cwd != "" {
			if c.shape.cwd == "" {
				b.warn("%s has no working-folder setting: servers.%s cwd %q is left out", c.Name, s.Name, s.Cwd)
			}
			s.Cwd = b.conv(s.Name, "cwd", s.Cwd, false)
		}
		env := map[string]string{}
		for _, k := range sortedKeys(s.Env) {
			v := s.Env[k]
			if c.shape.codex && v == "${env:"+k+"}" {
				bs.envVars = append(bs.envVars, k)
				continue
			}
			env[k] = b.conv(s.Name, "env."+k, v, true)
		}
		s.Env = env
	} else {
		s.URL = b.conv(s.Name, "url", s.URL, false)
		h := map[string]string{}
		for _, k := range sortedKeys(s.Headers) {
			v := s.Headers[k]
			if c.shape.codex {
				if m := bearerRef.FindStringSubmatch(v); m != nil && strings.EqualFold(k, "Authorization") {
					bs.bearerVar = m[1]
					continue
				}
				if m := wholeRef.FindStringSubmatch(v); m != nil {
					bs.envHeaders = append(bs.envHeaders, kv{k, m[1]})
					continue
				}
			}
			h[k] = b.conv(s.Name, "headers."+k, v, true)
		}
		s.Headers = h
	}
	bs.entry = b.entry(bs)
	return bs, nil
}

// entry lays out one server in the client's shape.
func (b *builder) entry(bs *built) obj {
	sh, s := b.c.shape, bs.srv
	var e obj
	if sh.name {
		e = append(e, kv{"name", s.Name})
	}
	strMap := func(m map[string]string) obj {
		var o obj
		for _, k := range sortedKeys(m) {
			o = append(o, kv{k, m[k]})
		}
		return o
	}
	if !s.IsRemote() {
		if sh.stdioType != "" {
			e = append(e, kv{"type", sh.stdioType})
		}
		if sh.commandArray {
			e = append(e, kv{sh.command, append([]string{s.Command}, s.Args...)})
		} else {
			e = append(e, kv{sh.command, s.Command})
			if len(s.Args) > 0 || sh.alwaysArgs {
				e = append(e, kv{sh.args, nonNil(s.Args)})
			}
		}
		if len(s.Env) > 0 {
			e = append(e, kv{sh.env, strMap(s.Env)})
		}
		if len(bs.envVars) > 0 {
			e = append(e, kv{"env_vars", bs.envVars})
		}
		if s.Cwd != "" && sh.cwd != "" {
			e = append(e, kv{sh.cwd, s.Cwd})
		}
	} else {
		typ := sh.httpType
		if s.Transport() == registry.TransportSSE {
			typ = sh.sseType
		}
		if typ != "" {
			e = append(e, kv{"type", typ})
		}
		e = append(e, kv{sh.url, s.URL})
		if len(s.Headers) > 0 {
			var v any = strMap(s.Headers)
			for i := len(sh.headers) - 1; i > 0; i-- {
				v = obj{{sh.headers[i], v}}
			}
			e = append(e, kv{sh.headers[0], v})
		}
		if bs.bearerVar != "" {
			e = append(e, kv{"bearer_token_env_var", bs.bearerVar})
		}
		if len(bs.envHeaders) > 0 {
			e = append(e, kv{"env_http_headers", bs.envHeaders})
		}
	}
	if sh.name && s.Description != "" && b.c.ID == "goose" {
		e = append(e, kv{"description", s.Description})
	}
	e = append(e, sh.extra...)
	return e
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
