package app

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"mcptray/registry"
	"mcptray/registry/bundle"
	"mcptray/registry/catalog"
	"mcptray/registry/clients"
	"mcptray/registry/secrets"
	"mcptray/supervisor"
)

// RegistryClient is the client of the MCP Registry that search and add
// read: flagURL, else the config's [settings] registry, else the official
// one. Answers are cached in the user cache folder with their ETag.
func RegistryClient(cfg *registry.Config, flagURL string) (*catalog.Client, error) {
	base := flagURL
	if base == "" && cfg != nil {
		base = cfg.Settings.Registry
	}
	var o catalog.Options
	if dir, err := catalog.DefaultCacheDir(); err == nil {
		o.CacheDir = dir
	}
	return catalog.New(base, &o)
}

// LoginResolver finds a command on the login shell's PATH: where the
// desktop app and the daemon look when they start a server.
func LoginResolver(ctx context.Context) func(string) (string, error) {
	return func(cmd string) (string, error) {
		return supervisor.ResolveCommand(cmd, supervisor.LoginEnvironment(ctx))
	}
}

// AddOptions say how to make a new entry.
type AddOptions struct {
	// Name of the entry (default: from the registry name, the bundle's
	// name or the snippet).
	Name string
	// Kind picks one way to run a registry server: npm, pypi, oci, mcpb
	// or remote ("" the first that runs here).
	Kind string
	// Values by field name (--set NAME=VALUE).
	Values map[string]string
	// Keep are the values an entry had (an update): used for the fields
	// nobody gave a value.
	Keep map[string]string
	// Ask asks the person for a field nobody gave; nil asks nothing (a
	// required one missing is then an error naming it).
	Ask func(f catalog.Field) (string, error)
	// Resolve finds commands on the login shell's PATH (default:
	// [LoginResolver]).
	Resolve func(string) (string, error)
	// BundleDir is where bundles are unpacked (default: bundle.DefaultDir).
	BundleDir string
}

// Addition is what an add makes, not yet written.
type Addition struct {
	Servers []*registry.Server
	// Secrets to keep in the secret store before the entry is written.
	Secrets  map[string]string
	Warnings []string
	// Folder an MCP bundle is unpacked into (on Commit).
	Folder string

	unpack    func() error // unpacks the bundle; nil for others
	bundleDir string       // where it unpacks
	cleanup   []func()     // temporary files
}

// Close removes what making the addition left (a downloaded bundle).
func (a *Addition) Close() {
	for _, f := range a.cleanup {
		f()
	}
}

func (o *AddOptions) resolve(ctx context.Context) func(string) (string, error) {
	if o.Resolve != nil {
		return o.Resolve
	}
	return LoginResolver(ctx)
}

// ask fills o.Values for the fields a person should answer: the required
// ones and the secrets, with no value given.
func (o *AddOptions) ask(fields []catalog.Field) error {
	if o.Ask == nil {
		return nil
	}
	if o.Values == nil {
		o.Values = map[string]string{}
	}
	for _, f := range fields {
		if _, given := o.Values[f.Name]; given || !(f.Required || f.Secret) {
			continue
		}
		v, err := o.Ask(f)
		if err != nil {
			return err
		}
		if v != "" {
			o.Values[f.Name] = v
		}
	}
	return nil
}

// keep gives the fields nobody gave a value the value the entry had.
func (o *AddOptions) keep(fields []catalog.Field) {
	for _, f := range fields {
		v, had := o.Keep[f.Name]
		if _, given := o.Values[f.Name]; had && !given {
			if o.Values == nil {
				o.Values = map[string]string{}
			}
			o.Values[f.Name] = v
		}
	}
}

// unknownValues warns of --set names no field has (a typo would
// otherwise be dropped without a word).
func (o *AddOptions) unknownValues(fields []catalog.Field) []string {
	known := map[string]bool{}
	for _, f := range fields {
		known[f.Name] = true
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(o.Values)) {
		if !known[k] {
			out = append(out, fmt.Sprintf("--set %s: the server declares no value of that name (it has: %s)", k, fieldNames(fields)))
		}
	}
	return out
}

func fieldNames(fields []catalog.Field) string {
	if len(fields) == 0 {
		return "none"
	}
	var n []string
	for _, f := range fields {
		n = append(n, f.Name)
	}
	return strings.Join(n, ", ")
}

// PlanRegistryAdd makes the entry for ref (NAME or NAME@VERSION) from the
// registry c reads.
func PlanRegistryAdd(ctx context.Context, c *catalog.Client, ref string, o *AddOptions) (*Addition, *catalog.Response, error) {
	if o == nil {
		o = &AddOptions{}
	}
	name, version, _ := strings.Cut(ref, "@")
	r, err := c.Get(ctx, name, version)
	if err != nil {
		return nil, nil, err
	}
	if err := r.Server.CheckSchema(); err != nil {
		return nil, r, err
	}
	ch, err := catalog.Choose(&r.Server, o.Kind)
	if err != nil {
		return nil, r, err
	}
	if ch.Kind() == "mcpb" {
		return planRegistryBundle(ctx, c, r, ch, o)
	}
	unknown := o.unknownValues(ch.Fields())
	o.keep(ch.Fields())
	if err := o.ask(ch.Fields()); err != nil {
		return nil, r, err
	}
	p, err := catalog.Build(r, ch, &catalog.BuildOptions{Name: o.Name, Values: o.Values, Resolve: o.resolve(ctx)})
	if err != nil {
		return nil, r, err
	}
	return &Addition{Servers: []*registry.Server{p.Server}, Secrets: p.Secrets, Warnings: append(p.Warnings, unknown...)}, r, nil
}

// planRegistryBundle downloads the registry's bundle, checks its hash and
// makes its entry.
func planRegistryBundle(ctx context.Context, c *catalog.Client, r *catalog.Response, ch catalog.Choice, o *AddOptions) (*Addition, *catalog.Response, error) {
	p, err := catalog.Build(r, ch, nil) // the status and schema checks
	if err != nil {
		return nil, r, err
	}
	file, err := c.FetchBundle(ctx, ch.Package, os.TempDir())
	if err != nil {
		return nil, r, err
	}
	a, err := PlanBundleAdd(ctx, file, o)
	if err != nil {
		os.Remove(file)
		return nil, r, err
	}
	a.cleanup = append(a.cleanup, func() { os.Remove(file) })
	a.Warnings = append(p.Warnings, a.Warnings...)
	for _, s := range a.Servers {
		s.Source = p.Server.Source
	}
	return a, r, nil
}

// PlanBundleAdd makes the entry for the MCP bundle at path; Commit unpacks
// it.
func PlanBundleAdd(ctx context.Context, path string, o *AddOptions) (*Addition, error) {
	if o == nil {
		o = &AddOptions{}
	}
	dir := o.BundleDir
	if dir == "" {
		d, err := bundle.DefaultDir()
		if err != nil {
			return nil, err
		}
		dir = d
	}
	b, err := bundle.Open(path)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	if err := b.Check(&bundle.Host{Resolve: o.resolve(ctx)}); err != nil {
		return nil, err
	}
	unknown := o.unknownValues(b.Manifest.Fields())
	if err := o.ask(b.Manifest.Fields()); err != nil {
		return nil, err
	}
	folder := b.Folder(dir)
	p, err := b.Entry(folder, &bundle.EntryOptions{Name: o.Name, Values: o.Values})
	if err != nil {
		return nil, err
	}
	a := &Addition{Servers: []*registry.Server{p.Server}, Secrets: p.Secrets, Warnings: append(p.Warnings, unknown...), Folder: folder, bundleDir: dir}
	a.unpack = func() error {
		b, err := bundle.Open(path)
		if err != nil {
			return err
		}
		defer b.Close()
		_, err = b.Unpack(dir)
		return err
	}
	return a, nil
}

// PlanSnippetAdd makes the entries a pasted snippet holds (any client's
// JSON, Codex TOML, command lines).
func PlanSnippetAdd(text string, o *AddOptions) (*Addition, error) {
	im, err := clients.ParseSnippet(text)
	if err != nil {
		return nil, err
	}
	if o != nil && o.Name != "" {
		if len(im.Servers) != 1 {
			return nil, fmt.Errorf("--name names one server; the snippet holds %d", len(im.Servers))
		}
		im.Servers[0].Name = o.Name
	}
	return &Addition{Servers: im.Servers, Warnings: im.Warnings}, nil
}

// Commit stores the addition's secrets, unpacks its bundle and writes its
// entries into cfg's file (replace: an entry of the same name is
// replaced, else that is an error). On a failure what it did is undone.
func (a *Addition) Commit(env *Env, cfg *registry.Config, replace bool) error {
	for _, s := range a.Servers {
		if cfg.Server(s.Name) != nil && !replace {
			return fmt.Errorf("servers.toml already has %q: pass --name to add it under another name, or --replace", s.Name)
		}
	}
	var stored []string
	var st secrets.Store
	undo := func() {
		for _, n := range stored {
			_ = st.Delete(secrets.SecretKey(n))
		}
	}
	if len(a.Secrets) > 0 {
		var err error
		if st, err = OpenSecrets(env); err != nil {
			return err
		}
		for _, n := range slices.Sorted(maps.Keys(a.Secrets)) {
			if err := st.Set(secrets.SecretKey(n), a.Secrets[n]); err != nil {
				undo()
				return fmt.Errorf("keep %s in %s: %w (nothing added)", n, st.Where(), err)
			}
			stored = append(stored, n)
		}
	}
	if a.unpack != nil {
		if err := a.unpack(); err != nil {
			undo()
			return err
		}
	}
	for _, s := range a.Servers {
		replaced := false
		for i, old := range cfg.Servers {
			if old.Name == s.Name {
				cfg.Servers[i], replaced = s, true
			}
		}
		if !replaced {
			cfg.Servers = append(cfg.Servers, s)
		}
	}
	if err := registry.Save(cfg); err != nil {
		undo()
		if a.unpack != nil {
			_ = bundle.Remove(a.bundleDir, a.Folder)
		}
		return err
	}
	return nil
}

// SecretsWhere says where Commit keeps secrets, for messages.
func SecretsWhere(env *Env) string {
	st, err := OpenSecrets(env)
	if err != nil {
		return "the secret store"
	}
	return st.Where()
}
