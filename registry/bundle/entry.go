package bundle

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"mcptray/internal/lazyre"
	"mcptray/registry"
	"mcptray/registry/catalog"
)

const hostGOOS = runtime.GOOS

// varRE matches the manifest's ${NAME} variables.
var varRE = lazyre.New(`\$\{([A-Za-z_][A-Za-z0-9_.]*|/)\}`)

// Fields lists the user_config fields, in name order, as the registry
// package describes inputs (so one prompt serves both).
func (m *Manifest) Fields() []catalog.Field {
	var out []catalog.Field
	for _, k := range slices.Sorted(maps.Keys(m.UserConfig)) {
		o := m.UserConfig[k]
		d, _ := o.defaults()
		desc := o.Title
		if o.Description != "" && o.Description != o.Title {
			desc += ": " + o.Description
		}
		format := o.Type
		if o.Type == "directory" || o.Type == "file" {
			format = "filepath"
		}
		out = append(out, catalog.Field{Name: k, Kind: "user_config", Description: desc,
			Default: strings.Join(d, string(os.PathListSeparator)), Format: format,
			Required: o.Required, Secret: o.Sensitive})
	}
	return out
}

// EntryOptions say what to make of an unpacked bundle.
type EntryOptions struct {
	// Name is the servers.toml entry's name (default: the bundle's name,
	// made valid).
	Name string
	// Values are the person's user_config values by field name; a
	// multiple field takes several separated by the OS's path-list
	// separator (':' or ';').
	Values map[string]string
	// GOOS is the platform whose platform_overrides apply (default: this
	// one).
	GOOS string
	// Home is ${HOME} (default: the user's home folder).
	Home string
}

// Entry makes the servers.toml entry that runs the bundle unpacked in dir:
// mcp_config with ${__dirname} as dir and ${user_config.X} as the values, a
// sensitive value kept in the keyring and referred to. A required value
// nobody gave is a *catalog.MissingError.
func (b *Bundle) Entry(dir string, opts *EntryOptions) (*catalog.Plan, error) {
	var o EntryOptions
	if opts != nil {
		o = *opts
	}
	if o.GOOS == "" {
		o.GOOS = hostGOOS
	}
	if o.Home == "" {
		o.Home, _ = os.UserHomeDir()
	}
	name := o.Name
	if name == "" {
		name = catalog.EntryName(b.Manifest.Name)
	}
	if !registry.ValidName(name) {
		return nil, fmt.Errorf("entry name %q: use 1-64 letters, digits, '-' or '_'", name)
	}
	sep := string(filepath.Separator)
	v := &vars{fixed: map[string]string{
		"__dirname": dir, "HOME": o.Home, "DESKTOP": filepath.Join(o.Home, "Desktop"),
		"DOCUMENTS": filepath.Join(o.Home, "Documents"), "DOWNLOADS": filepath.Join(o.Home, "Downloads"),
		"pathSeparator": sep, "/": sep,
	}}
	plan := &catalog.Plan{Secrets: map[string]string{}}
	var err error
	if v.user, err = b.userValues(name, o.Values, v, plan.Secrets); err != nil {
		return nil, err
	}
	srv := b.server(name, dir, o.GOOS, v)
	if err := srv.Validate(); err != nil {
		return nil, err
	}
	plan.Server = srv
	return plan, nil
}

// vars are the values a bundle's ${…} stand for: the spec's fixed ones
// (${__dirname}, ${HOME}, …) and the user_config values, as lists (a
// multiple field has several).
type vars struct {
	fixed map[string]string
	user  map[string][]string
}

// subst replaces the fixed variables in s.
func (v *vars) subst(s string) string {
	return varRE().ReplaceAllStringFunc(s, func(mm string) string {
		if x, ok := v.fixed[mm[2:len(mm)-1]]; ok {
			return x
		}
		return mm
	})
}

// fill replaces every variable in s, a multiple user_config value joined
// with commas.
func (v *vars) fill(s string) string {
	return varRE().ReplaceAllStringFunc(v.subst(s), func(mm string) string {
		if k, ok := strings.CutPrefix(mm[2:len(mm)-1], "user_config."); ok {
			return strings.Join(v.user[k], ",")
		}
		return mm
	})
}

// userRef is the user_config field s is, when s is "${user_config.X}" and
// nothing else.
func userRef(s string) (string, bool) {
	mm := varRE().FindStringSubmatch(s)
	if mm == nil || mm[0] != s {
		return "", false
	}
	return strings.CutPrefix(mm[1], "user_config.")
}

// userValues are the user_config values of entry name: those given, else
// the defaults; each checked; a sensitive one goes into secrets and is
// referred to as ${keyring:…}. A required value nobody gave is a
// *catalog.MissingError naming all of them.
func (b *Bundle) userValues(name string, given map[string]string, v *vars, secrets map[string]string) (map[string][]string, error) {
	m := b.Manifest
	values := map[string][]string{}
	var missing []catalog.Field
	for _, f := range m.Fields() {
		opt := m.UserConfig[f.Name]
		var vals []string
		if x, ok := given[f.Name]; ok && x != "" {
			vals = []string{x}
			if opt.Multiple {
				vals = filepath.SplitList(x)
			}
		} else {
			d, _ := opt.defaults()
			for _, x := range d {
				vals = append(vals, v.subst(x))
			}
		}
		if len(vals) == 0 {
			if opt.Required {
				missing = append(missing, f)
			}
			continue
		}
		for _, x := range vals {
			if err := checkValue(f.Name, opt, x); err != nil {
				return nil, fmt.Errorf("%s: %w", m.Name, err)
			}
		}
		if opt.Sensitive {
			n := catalog.SecretName(name, f.Name)
			secrets[n] = vals[0]
			vals = []string{"${keyring:" + n + "}"}
		}
		values[f.Name] = vals
	}
	if len(missing) > 0 {
		return nil, &catalog.MissingError{Server: name, Fields: missing}
	}
	return values, nil
}

// server is the entry that runs the bundle unpacked in dir on goos.
func (b *Bundle) server(name, dir, goos string, v *vars) *registry.Server {
	m := b.Manifest
	cmd, args, env := b.config(goos)
	srv := &registry.Server{Name: name, Autostart: true, Description: m.Description,
		Source: "mcpb:" + m.Name + "@" + m.Version}
	srv.Command = v.fill(cmd)
	for _, a := range args {
		// "${user_config.dirs}" alone is one argument per value, as the
		// spec says; an unset optional one is left out.
		if k, ok := userRef(a); ok {
			srv.Args = append(srv.Args, v.user[k]...)
			continue
		}
		srv.Args = append(srv.Args, v.fill(a))
	}
	for _, k := range slices.Sorted(maps.Keys(env)) {
		if uk, ok := userRef(env[k]); ok && len(v.user[uk]) == 0 {
			continue
		}
		if srv.Env == nil {
			srv.Env = map[string]string{}
		}
		srv.Env[k] = v.fill(env[k])
	}
	if m.Server.Type == "binary" && !filepath.IsAbs(srv.Command) && strings.ContainsAny(srv.Command, `/\`) {
		// A binary's command is relative to the bundle.
		srv.Command = filepath.Join(dir, filepath.FromSlash(srv.Command))
		if goos == "windows" && filepath.Ext(srv.Command) == "" {
			srv.Command += ".exe"
		}
	}
	srv.Cwd = dir
	return srv
}

// config is mcp_config with the platform's overrides applied; a uv server
// without one runs its entry point with uv.
func (b *Bundle) config(goos string) (string, []string, map[string]string) {
	m := b.Manifest
	c := m.Server.MCPConfig
	if c == nil {
		return "uv", []string{"run", "--directory", "${__dirname}", filepath.FromSlash(m.Server.EntryPoint)}, nil
	}
	cmd, args, env := c.Command, slices.Clone(c.Args), maps.Clone(c.Env)
	if ov, ok := c.PlatformOverrides[Platform(goos)]; ok {
		if ov.Command != "" {
			cmd = ov.Command
		}
		if ov.Args != nil {
			args = slices.Clone(ov.Args)
		}
		if ov.Env != nil {
			if env == nil {
				env = map[string]string{}
			}
			maps.Copy(env, ov.Env)
		}
	}
	return cmd, args, env
}

func checkValue(name string, o UserOption, v string) error {
	switch o.Type {
	case "number":
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("user_config %s: %q is not a number", name, v)
		}
		if o.Min != nil && f < *o.Min || o.Max != nil && f > *o.Max {
			return fmt.Errorf("user_config %s: %s is outside %s to %s", name, v, bound(o.Min, "-∞"), bound(o.Max, "∞"))
		}
	case "boolean":
		if v != "true" && v != "false" {
			return fmt.Errorf("user_config %s: %q is not true or false", name, v)
		}
	}
	return nil
}

func bound(f *float64, none string) string {
	if f == nil {
		return none
	}
	return formatNumber(*f)
}
