package clients

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"mcptray/internal/lazyre"
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

// has reports whether o has a member k.
func (o obj) has(k string) bool {
	for _, m := range o {
		if m.K == k {
			return true
		}
	}
	return false
}

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
	// existing are the entries the client's file holds already (install),
	// by name: their values are kept where servers.toml has a reference the
	// client cannot express.
	existing map[string]*registry.Server
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

// Hidden stands for a literal secret in output meant to be pasted or run
// (a snippet, an add command, an install link) when secrets are not
// revealed. It is clearly not a value: a client given it fails visibly, and
// a warning says so. (The mask, [registry.Masked], is only for reading.)
const Hidden = registry.Hidden

// hide is a literal secret's stand-in: "Bearer abc" becomes
// "Bearer <hidden>", so the shape of the value still shows.
func hide(v string) string {
	if m := registry.MaskSecret(v); strings.HasSuffix(m, registry.Masked) {
		return strings.TrimSuffix(m, registry.Masked) + Hidden
	}
	return Hidden
}

// Placeholder is what a reference becomes in a client without reference
// syntax, unless secrets are revealed.
func Placeholder(name string) string { return "<" + name + ">" }

// conv turns one string of a server into the client's form: references into
// its syntax (or a value, or a placeholder), literal secrets hidden when
// b.mask.
func (b *builder) conv(server, field, v string, secret bool) string {
	if registry.HasSecretRef(v) {
		v = b.keyringRefs(server, field, v)
	}
	if registry.HasEnvRef(v) {
		if b.c.Ref == nil {
			if r, ok := registry.IsEnvRef(v); ok {
				return b.fallback(server, field, r)
			}
		}
		return registry.ReplaceEnvRefsFunc(v, func(r registry.EnvRef) string {
			if b.c.Ref == nil {
				return b.fallback(server, field, r)
			}
			if r.HasDefault {
				if b.c.RefDefault != nil {
					return b.c.RefDefault(r.Name, r.Default)
				}
				b.warn("%s has no default form of a reference: servers.%s %s drops the default of %s (the server gets an empty value when $%s is unset)", b.c.Name, server, field, r, r.Name)
			}
			return b.c.Ref(r.Name)
		})
	}
	if secret && v != "" {
		b.secrets = append(b.secrets, v)
		if b.mask && !b.o.RevealSecrets {
			b.warn("servers.%s %s is a literal secret: written as %s, which is not a working value; %s to write it, or make it an ${env:VAR} reference", server, field, hide(v), b.o.remedies().Reveal)
			return hide(v)
		}
	}
	if field == "url" || strings.HasPrefix(v, "http://") || strings.HasPrefix(v, "https://") {
		creds := registry.URLSecrets(v)
		b.secrets = append(b.secrets, creds...)
		if len(creds) > 0 && b.mask && !b.o.RevealSecrets {
			for _, c := range creds {
				v = strings.ReplaceAll(v, c, Hidden)
			}
			b.warn("servers.%s %s holds credentials: written as %s, which is not a working value; %s to write them, or use ${env:VAR} references", server, field, v, b.o.remedies().Reveal)
		}
	}
	return v
}

// fallback is a reference the client cannot express: the variable's value
// when secrets are revealed, else the value the client's file already holds
// (install), else a placeholder.
func (b *builder) fallback(server, field string, r registry.EnvRef) string {
	if v, ok := b.known(server, field, r); ok {
		return v
	}
	if b.o.RevealSecrets {
		b.warn("servers.%s %s refers to $%s, which is not set: wrote the placeholder %s", server, field, r.Name, Placeholder(r.Name))
		return Placeholder(r.Name)
	}
	b.warn("%s cannot reference environment variables here: servers.%s %s holds the placeholder %s; replace it, or %s to write $%s's value", b.c.Name, server, field, Placeholder(r.Name), b.o.remedies().Reveal, r.Name)
	return Placeholder(r.Name)
}

// known is the value to write for a reference the client cannot express:
// the variable's value (or default) when secrets are revealed, else the
// working value the client's file holds already, which mcptray must not
// overwrite with a placeholder.
func (b *builder) known(server, field string, r registry.EnvRef) (string, bool) {
	if b.o.RevealSecrets {
		if val, ok := r.Resolve(b.o.LookupEnv); ok {
			b.secrets = append(b.secrets, val)
			return val, true
		}
	}
	if old := b.existing[server]; old != nil {
		var v string
		if k, ok := strings.CutPrefix(field, "env."); ok {
			v = old.Env[k]
		} else if k, ok := strings.CutPrefix(field, "headers."); ok {
			v = old.Headers[k]
		}
		if v != "" && !registry.HasEnvRef(v) && !strings.Contains(v, Hidden) {
			b.secrets = append(b.secrets, v)
			b.note("servers.%s %s: kept the value already in %s's file (%s cannot refer to $%s)", server, field, b.c.Name, b.c.Name, r.Name)
			return v, true
		}
	}
	return "", false
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
	bearerRef = lazyre.New(`^Bearer \$\{env:([A-Za-z_][A-Za-z0-9_]*)\}$`)
	wholeRef  = lazyre.New(`^\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}$`)
)

// build prepares servers for the client.
func (c *Client) build(servers []*registry.Server, o *Options, mask bool) ([]*built, *builder, error) {
	return c.buildWith(servers, o, mask, nil)
}

// buildWith is build knowing the entries the client's file holds already.
func (c *Client) buildWith(servers []*registry.Server, o *Options, mask bool, existing map[string]*registry.Server) ([]*built, *builder, error) {
	b := &builder{c: c, o: o, mask: mask, existing: existing}
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
	if o.Gateway != nil {
		return b.throughGateway(src, o.Gateway), nil
	}
	if names := keyringNames(src); len(names) > 0 && !o.RevealSecrets {
		refs := "${keyring:" + strings.Join(names, "}, ${keyring:") + "}"
		if o.SecretsVia == nil {
			return nil, fmt.Errorf("servers.%s refers to %s, which %s cannot read: a direct entry would carry no working value; %s, or %s to write the secret's value", src.Name, refs, c.Name, o.remedies().Through, o.remedies().Reveal)
		}
		b.warn("servers.%s refers to %s, which %s cannot read: its entry goes through mcptray (mcptray connect %s) instead of a direct one, so the secret stays in mcptray's keyring", src.Name, refs, c.Name, src.Name)
		return b.throughGateway(src, o.SecretsVia), nil
	}
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
		orig := slices.Clone(s.Args)
		for i, a := range s.Args {
			if done[i] {
				continue
			}
			field := fmt.Sprintf("args[%d]", i)
			if prefix, v, ok := registry.SecretArg(orig, i); ok {
				// --token=abc, --api-key abc: the value is a secret.
				s.Args[i] = prefix + b.conv(s.Name, field, v, true)
				continue
			}
			s.Args[i] = b.conv(s.Name, field, a, false)
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
			if r, ok := registry.IsEnvRef(v); ok && c.shape.codex {
				if r.Name == k && !r.HasDefault {
					bs.envVars = append(bs.envVars, k)
					continue
				}
				if val, ok := b.known(s.Name, "env."+k, r); ok {
					env[k] = val
					continue
				}
				// Codex forwards variables by their own name only: the
				// nearest working entry forwards k, which the person sets.
				lost := ""
				if r.HasDefault {
					lost = fmt.Sprintf(" (Codex has no default: %q is not written)", r.Default)
				}
				what := "cannot rename environment variables"
				if r.Name == k {
					what = "has no default for a forwarded variable"
				}
				b.warn("Codex %s: servers.%s env.%s reads %s, so Codex forwards $%s from its own environment (env_vars)%s; set %s=\"$%s\" where Codex runs, or %s to write $%s's value", what, s.Name, k, r, k, lost, k, r.Name, b.o.remedies().Reveal, r.Name)
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
				if m := bearerRef().FindStringSubmatch(v); m != nil && strings.EqualFold(k, "Authorization") {
					bs.bearerVar = m[1]
					continue
				}
				if m := wholeRef().FindStringSubmatch(v); m != nil {
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

// urlKey is the key of a remote entry's URL for transport t.
func (sh shape) urlKey(t registry.Transport) string {
	if sh.httpURL != "" && t != registry.TransportSSE {
		return sh.httpURL
	}
	return sh.url
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
		e = append(e, kv{sh.urlKey(s.Transport()), s.URL})
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
	if sh.description && s.Description != "" {
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

// keyringRefs replaces ${keyring:NAME} references, which no client can
// read: with the secret's value when secrets are revealed, else with
// Hidden and a warning.
func (b *builder) keyringRefs(server, field, v string) string {
	return registry.ReplaceSecretRefs(v, func(name string) string {
		if b.o.RevealSecrets && b.o.Secret != nil {
			val, err := b.o.Secret(name)
			if err == nil {
				b.secrets = append(b.secrets, val)
				return val
			}
			b.warn("servers.%s %s refers to ${keyring:%s}, which could not be read (%v): written as %s", server, field, name, err, Hidden)
			return Hidden
		}
		b.warn("servers.%s %s refers to ${keyring:%s}, which %s cannot read: written as %s, which is not a working value; %s to write the secret's value", server, field, name, b.c.Name, Hidden, b.o.remedies().Reveal)
		return Hidden
	})
}
