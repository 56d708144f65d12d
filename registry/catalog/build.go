package catalog

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"mcptray/internal/lazyre"
	"mcptray/registry"
)

// Field is one value an entry asks for: an environment variable, a header,
// an argument or a {variable} inside one of them.
type Field struct {
	// Name is what --set NAME=VALUE sets: the variable's or header's name,
	// a positional argument's valueHint, a named argument's flag without
	// its dashes, or a {variable}'s name.
	Name        string
	Kind        string // "env", "header", "argument", "variable"
	Description string
	Default     string
	Placeholder string
	Choices     []string
	Format      string
	Required    bool
	Secret      bool
}

// Choice says which way to run a server: one of its packages, or one of
// its remotes.
type Choice struct {
	Package *Package
	Remote  *Transport
}

// Kind names the choice: npm, pypi, oci, mcpb, nuget, … or remote.
func (c Choice) Kind() string {
	if c.Remote != nil {
		return "remote"
	}
	return c.Package.RegistryType
}

// Runnable kinds, in the order of preference when nothing is asked for:
// a local process first (it needs no account), then a bundle, then a
// remote.
var runnable = []string{"npm", "pypi", "oci", "mcpb", "remote"}

// Choose picks how to run s: kind "" takes the first runnable package with
// a stdio transport, else the first remote; kind "npm", "pypi", "oci",
// "mcpb" or "remote" takes the first of that kind.
func Choose(s *ServerJSON, kind string) (Choice, error) {
	var kinds []string
	for _, k := range runnable {
		if kind == "" || kind == k {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) == 0 {
		return Choice{}, fmt.Errorf("%s: %q is not a way mcptray runs servers (use %s)", s.Name, kind, strings.Join(runnable, ", "))
	}
	for _, k := range kinds {
		if k == "remote" {
			for i := range s.Remotes {
				return Choice{Remote: &s.Remotes[i]}, nil
			}
			continue
		}
		for i := range s.Packages {
			p := &s.Packages[i]
			if p.RegistryType == k && (p.Transport.Type == "" || p.Transport.Type == "stdio") {
				return Choice{Package: p}, nil
			}
		}
	}
	have := s.HowItRuns()
	switch {
	case len(have) == 0 && s.WebsiteURL != "":
		return Choice{}, fmt.Errorf("%s names no package or remote to run: its setup is described at %s", s.Name, s.WebsiteURL)
	case len(have) == 0:
		return Choice{}, fmt.Errorf("%s names no package or remote to run", s.Name)
	case kind != "":
		return Choice{}, fmt.Errorf("%s has no %s way to run (it has: %s)", s.Name, kind, strings.Join(have, ", "))
	default:
		return Choice{}, fmt.Errorf("%s runs only as %s, which mcptray does not run (it runs npm, PyPI, OCI and MCP bundle packages over stdio, and remote URLs)", s.Name, strings.Join(have, ", "))
	}
}

// Fields lists what the choice asks for, in order: arguments (and their
// variables), then environment variables or headers. Fixed values are left
// out; their {variables} are not.
func (c Choice) Fields() []Field {
	var out []Field
	seen := map[string]bool{}
	add := func(f Field) {
		if !seen[f.Kind+"\x00"+f.Name] {
			seen[f.Kind+"\x00"+f.Name] = true
			out = append(out, f)
		}
	}
	input := func(name, kind string, in Input) {
		for _, v := range slices.Sorted(maps.Keys(in.Variables)) {
			add(fieldOf(v, "variable", in.Variables[v]))
		}
		if in.Value == "" {
			add(fieldOf(name, kind, in))
		}
	}
	if c.Remote != nil {
		for _, v := range slices.Sorted(maps.Keys(c.Remote.Variables)) {
			add(fieldOf(v, "variable", c.Remote.Variables[v]))
		}
		for _, h := range c.Remote.Headers {
			input(h.Name, "header", h.Input)
		}
		return out
	}
	for _, a := range slices.Concat(c.Package.RuntimeArguments, c.Package.PackageArguments) {
		input(argName(a), "argument", a.Input)
	}
	for _, e := range c.Package.EnvironmentVariables {
		input(e.Name, "env", e.Input)
	}
	return out
}

func fieldOf(name, kind string, in Input) Field {
	return Field{Name: name, Kind: kind, Description: in.Description, Default: in.Default, Placeholder: in.Placeholder,
		Choices: in.Choices, Format: in.Format, Required: in.IsRequired, Secret: in.IsSecret}
}

// argName is what --set names an argument by.
func argName(a Argument) string {
	if a.Type == "named" {
		return strings.TrimLeft(a.Name, "-")
	}
	return a.ValueHint
}

// BuildOptions say what to make of a choice.
type BuildOptions struct {
	// Name is the servers.toml entry's name (default: the last part of the
	// server's name, made valid).
	Name string
	// Values are what the person gave, by [Field] name.
	Values map[string]string
	// Resolve finds a command on the login shell's PATH (the supervisor's
	// resolver); nil skips the runtime check.
	Resolve func(cmd string) (string, error)
}

// Plan is the entry a choice becomes, and what must happen with it.
type Plan struct {
	Server *registry.Server
	// Secrets are the secret values the entry refers to as
	// ${keyring:NAME}: store them (see [Plan.KeepSecrets]) before writing
	// the entry.
	Secrets map[string]string
	// Runtime is the command the entry needs (npx, uvx, docker, podman);
	// "" for a remote.
	Runtime string
	// Bundle is set for an MCP bundle: the entry is made once it is
	// downloaded and unpacked (see the bundle package).
	Bundle *Package
	// Warnings for the person: a deprecated version, a runtime hint
	// mcptray does not follow.
	Warnings []string
}

// MissingError names the required values nobody gave.
type MissingError struct {
	Server string
	Fields []Field
}

func (e *MissingError) Error() string {
	var names []string
	for _, f := range e.Fields {
		d := f.Kind + " " + f.Name
		if f.Description != "" {
			d += " (" + f.Description + ")"
		}
		names = append(names, d)
	}
	return fmt.Sprintf("%s needs %s: give it with --set NAME=VALUE", e.Server, strings.Join(names, ", "))
}

// RuntimeError is a runtime the entry needs that is not on the login
// shell's PATH.
type RuntimeError struct {
	Command string
	Install string
	Err     error
}

func (e *RuntimeError) Error() string {
	return fmt.Sprintf("%s is not on your login shell's PATH (%v): %s", e.Command, e.Err, e.Install)
}

func (e *RuntimeError) Unwrap() error { return e.Err }

var installHint = map[string]string{
	"npx":    "install Node.js (it brings npm and npx): https://nodejs.org or your package manager's nodejs and npm",
	"uvx":    "install uv (it brings uvx): https://docs.astral.sh/uv/getting-started/installation/",
	"docker": "install Docker (https://docs.docker.com/get-docker/) or Podman (https://podman.io)",
}

// Build turns the choice for r into a servers.toml entry. A required value
// nobody gave is a [MissingError]; a runtime not on the login shell's PATH
// a [RuntimeError]; a deleted version or a server.json of an unknown schema
// is refused.
func Build(r *Response, c Choice, opts *BuildOptions) (*Plan, error) {
	if opts == nil {
		opts = &BuildOptions{}
	}
	s := &r.Server
	if err := s.CheckSchema(); err != nil {
		return nil, err
	}
	p := &Plan{Secrets: map[string]string{}}
	switch r.Status() {
	case "deleted":
		return nil, fmt.Errorf("%s %s was deleted from the registry%s: it is not added", s.Name, s.Version, statusNote(r))
	case "deprecated":
		p.Warnings = append(p.Warnings, fmt.Sprintf("%s %s is deprecated in the registry%s", s.Name, s.Version, statusNote(r)))
	}
	name := opts.Name
	if name == "" {
		name = EntryName(s.Name)
	}
	if !registry.ValidName(name) {
		return nil, fmt.Errorf("entry name %q: use 1-64 letters, digits, '-' or '_'", name)
	}
	b := &builder{server: name, values: opts.Values, plan: p}
	srv := &registry.Server{Name: name, Autostart: true, Description: s.Description,
		Source: "registry:" + s.Name + "@" + s.Version}
	if c.Remote != nil {
		t := c.Remote
		srv.URL = b.fill("url", Input{Value: t.URL, Variables: t.Variables, IsRequired: true}, "")
		switch t.Type {
		case "sse":
			srv.TransportName = registry.TransportSSE
		case "streamable-http", "":
		default:
			return nil, fmt.Errorf("%s: remote transport %q is not one mcptray speaks (streamable-http, sse)", s.Name, t.Type)
		}
		srv.Headers = b.keyValues("header", t.Headers)
	} else {
		pk := c.Package
		if pk.RegistryType == "mcpb" {
			if pk.FileSHA256 == "" {
				return nil, fmt.Errorf("%s: its MCP bundle has no fileSha256 to check the download against: it is not added", s.Name)
			}
			p.Bundle = pk
			srv.Source = "mcpb:" + s.Name + "@" + s.Version
			p.Server = srv
			return p, b.err()
		}
		runtimeArgs := b.args(pk.RuntimeArguments)
		pkgArgs := b.args(pk.PackageArguments)
		srv.Env = b.keyValues("env", pk.EnvironmentVariables)
		switch pk.RegistryType {
		case "npm":
			if pk.Version == "" {
				return nil, fmt.Errorf("%s: its npm package %s names no version", s.Name, pk.Identifier)
			}
			srv.Command = "npx"
			srv.Args = slices.Concat(runtimeArgs, yes(runtimeArgs), []string{pk.Identifier + "@" + pk.Version}, pkgArgs)
		case "pypi":
			if pk.Version == "" {
				return nil, fmt.Errorf("%s: its PyPI package %s names no version", s.Name, pk.Identifier)
			}
			if pk.RuntimeHint != "" && pk.RuntimeHint != "uvx" {
				p.Warnings = append(p.Warnings, fmt.Sprintf("%s suggests running it with %s; mcptray runs PyPI packages with uvx", s.Name, pk.RuntimeHint))
			}
			srv.Command = "uvx"
			srv.Args = slices.Concat(runtimeArgs, []string{pk.Identifier + "==" + pk.Version}, pkgArgs)
		case "oci":
			image := pk.Identifier
			if pk.Version != "" && !strings.Contains(image[strings.LastIndexByte(image, '/')+1:], ":") && !strings.Contains(image, "@") {
				image += ":" + pk.Version
			}
			srv.Command = "docker"
			// A container sees only the variables passed in: -e NAME
			// passes each from the entry's env, so a secret stays a
			// ${keyring:…} reference until start.
			var pass []string
			for _, k := range slices.Sorted(maps.Keys(srv.Env)) {
				pass = append(pass, "-e", k)
			}
			srv.Args = slices.Concat([]string{"run", "-i", "--rm"}, pass, runtimeArgs, []string{image}, pkgArgs)
		default:
			return nil, fmt.Errorf("%s: %s packages are not run by mcptray (it runs npm, PyPI, OCI and MCP bundle packages)", s.Name, kindName(pk.RegistryType))
		}
		p.Runtime = srv.Command
	}
	if err := b.err(); err != nil {
		return nil, err
	}
	if p.Runtime != "" && opts.Resolve != nil {
		if _, err := opts.Resolve(p.Runtime); err != nil {
			if p.Runtime != "docker" {
				return nil, &RuntimeError{Command: p.Runtime, Install: installHint[p.Runtime], Err: err}
			}
			if _, perr := opts.Resolve("podman"); perr != nil {
				return nil, &RuntimeError{Command: "docker (or podman)", Install: installHint["docker"], Err: err}
			}
			srv.Command, p.Runtime = "podman", "podman"
		}
	}
	if err := srv.Validate(); err != nil {
		return nil, err
	}
	p.Server = srv
	return p, nil
}

func yes(runtimeArgs []string) []string {
	if slices.Contains(runtimeArgs, "-y") || slices.Contains(runtimeArgs, "--yes") {
		return nil
	}
	return []string{"-y"} // npx asks before installing otherwise, and a server has no terminal
}

func statusNote(r *Response) string {
	if r.Meta.Official != nil && r.Meta.Official.StatusMessage != "" {
		return ": " + r.Meta.Official.StatusMessage
	}
	return ""
}

// EntryName makes a servers.toml name of a registry name: its last part
// ("io.github.owner/weather" → "weather"), with other characters as '-'.
func EntryName(registryName string) string {
	n := registryName[strings.LastIndexByte(registryName, '/')+1:]
	var b strings.Builder
	for _, r := range n {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-")
	if len(out) > 64 {
		out = out[:64]
	}
	if out == "" {
		out = "server"
	}
	return out
}

// SecretName is the ${keyring:NAME} an entry's secret is kept under:
// SERVER.KEY, as `mcptray import --keyring` names them.
func SecretName(server, key string) string {
	var b strings.Builder
	for _, r := range server + "." + key {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-.", r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

// builder fills inputs from the person's values, collecting what is missing.
type builder struct {
	server  string
	values  map[string]string
	plan    *Plan
	missing []Field
}

func (b *builder) err() error {
	if len(b.missing) == 0 {
		return nil
	}
	return &MissingError{Server: b.server, Fields: b.missing}
}

var varRE = lazyre.New(`\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// fill is an input's value: its fixed value with {variables} replaced, or
// the person's value, or its default; "" (and, when required, noted as
// missing) when there is none. A {name} with no variable stays as written,
// as the schema says.
func (b *builder) fill(name string, in Input, kind string) string {
	if in.Value != "" {
		return varRE().ReplaceAllStringFunc(in.Value, func(m string) string {
			v := m[1 : len(m)-1]
			vin, ok := in.Variables[v]
			if !ok {
				return m
			}
			return b.fill(v, vin, "variable")
		})
	}
	v, given := b.values[name]
	if !given {
		v = in.Default
	}
	if v == "" {
		if in.IsRequired && kind != "" {
			b.missing = append(b.missing, fieldOf(name, kind, in))
		}
		return ""
	}
	if len(in.Choices) > 0 && !slices.Contains(in.Choices, v) {
		b.missing = append(b.missing, Field{Name: name, Kind: kind, Description: fmt.Sprintf("%q is not one of %s", v, strings.Join(in.Choices, ", "))})
	}
	return v
}

// args renders arguments: a positional one as its value, a named one as
// the flag and its value (two words, which every runtime's flag parser
// reads, docker's -e and --mount included); an argument with no value is
// left out.
func (b *builder) args(as []Argument) []string {
	var out []string
	for _, a := range as {
		v := b.fill(argName(a), a.Input, "argument")
		if a.Type == "named" {
			if a.Name == "" {
				continue
			}
			if v == "" {
				continue
			}
			out = append(out, a.Name, v)
			continue
		}
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

// keyValues fills environment variables or headers; a secret's value goes
// to Plan.Secrets and the entry refers to it.
func (b *builder) keyValues(kind string, kvs []KeyValue) map[string]string {
	if len(kvs) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, kv := range kvs {
		v := b.fill(kv.Name, kv.Input, kind)
		if v == "" {
			continue
		}
		if kv.IsSecret && !registry.HasSecretRef(v) && !registry.HasEnvRef(v) {
			n := SecretName(b.server, kv.Name)
			b.plan.Secrets[n] = v
			v = "${keyring:" + n + "}"
		}
		out[kv.Name] = v
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// SecretStore is where secrets go (registry/secrets' Store).
type SecretStore interface {
	Set(key, value string) error
	Delete(key string) error
	Where() string
}

// KeepSecrets stores the plan's secrets under key(NAME) (secrets.SecretKey);
// on a failure the ones already stored are removed.
func (p *Plan) KeepSecrets(st SecretStore, key func(string) string) error {
	var done []string
	for _, n := range slices.Sorted(maps.Keys(p.Secrets)) {
		if err := st.Set(key(n), p.Secrets[n]); err != nil {
			for _, d := range done {
				_ = st.Delete(key(d))
			}
			return fmt.Errorf("keep %s in %s: %w", n, st.Where(), err)
		}
		done = append(done, n)
	}
	return nil
}

// ErrNoSource means an entry was not added from a registry.
var ErrNoSource = errors.New("not added from a registry (it has no source = \"registry:…\")")

// ParseSource splits "registry:NAME@VERSION".
func ParseSource(source string) (name, version string, err error) {
	rest, ok := strings.CutPrefix(source, "registry:")
	if !ok {
		return "", "", ErrNoSource
	}
	i := strings.LastIndexByte(rest, '@')
	if i <= 0 || i == len(rest)-1 {
		return "", "", fmt.Errorf("source %q: want registry:NAME@VERSION", source)
	}
	return rest[:i], rest[i+1:], nil
}
