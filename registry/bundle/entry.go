package bundle

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"mcptray/registry"
	"mcptray/registry/catalog"
)

const hostGOOS = runtime.GOOS

// varRE matches the manifest's ${NAME} variables.
var varRE = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_.]*|/)\}`)

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
	m := b.Manifest
	name := o.Name
	if name == "" {
		name = catalog.EntryName(m.Name)
	}
	if !registry.ValidName(name) {
		return nil, fmt.Errorf("entry name %q: use 1-64 letters, digits, '-' or '_'", name)
	}
	plan := &catalog.Plan{Secrets: map[string]string{}}
	sep := string(filepath.Separator)
	fixed := map[string]string{
		"__dirname": dir, "HOME": o.Home, "DESKTOP": filepath.Join(o.Home, "Desktop"),
		"DOCUMENTS": filepath.Join(o.Home, "Documents"), "DOWNLOADS": filepath.Join(o.Home, "Downloads"),
		"pathSeparator": sep, "/": sep,
	}
	subst := func(s string) string {
		return varRE.ReplaceAllStringFunc(s, func(mm string) string {
			if v, ok := fixed[mm[2:len(mm)-1]]; ok {
				return v
			}
			return mm
		})
	}

	// The values of user_config, as lists (a multiple field has several).
	values := map[string][]string{}
	var missing []catalog.Field
	fields := m.Fields()
	for _, f := range fields {
		opt := m.UserConfig[f.Name]
		var vals []string
		if v, ok := o.Values[f.Name]; ok && v != "" {
			vals = []string{v}
			if opt.Multiple {
				vals = filepath.SplitList(v)
			}
		} else {
			d, _ := opt.defaults()
			for _, x := range d {
				vals = append(vals, subst(x))
			}
		}
		if len(vals) == 0 {
			if opt.Required {
				missing = append(missing, f)
			}
			continue
		}
		for _, v := range vals {
			if err := checkValue(f.Name, opt, v); err != nil {
				return nil, fmt.Errorf("%s: %w", m.Name, err)
			}
		}
		if opt.Sensitive {
			n := catalog.SecretName(name, f.Name)
			plan.Secrets[n] = vals[0]
			vals = []string{"${keyring:" + n + "}"}
		}
		values[f.Name] = vals
	}
	if len(missing) > 0 {
		return nil, &catalog.MissingError{Server: name, Fields: missing}
	}
	userRef := func(s string) (string, bool) {
		mm := varRE.FindStringSubmatch(s)
		if mm == nil || mm[0] != s {
			return "", false
		}
		return strings.CutPrefix(mm[1], "user_config.")
	}
	fill := func(s string) string {
		s = subst(s)
		return varRE.ReplaceAllStringFunc(s, func(mm string) string {
			if k, ok := strings.CutPrefix(mm[2:len(mm)-1], "user_config."); ok {
				return strings.Join(values[k], ",")
			}
			return mm
		})
	}

	cmd, args, env := b.config(o.GOOS)
	srv := &registry.Server{Name: name, Autostart: true, Description: m.Description,
		Source: "mcpb:" + m.Name + "@" + m.Version}
	srv.Command = fill(cmd)
	for _, a := range args {
		// "${user_config.dirs}" alone is one argument per value, as the
		// spec says; an unset optional one is left out.
		if k, ok := userRef(a); ok {
			srv.Args = append(srv.Args, values[k]...)
			continue
		}
		srv.Args = append(srv.Args, fill(a))
	}
	for _, k := range slices.Sorted(maps.Keys(env)) {
		if uk, ok := userRef(env[k]); ok && len(values[uk]) == 0 {
			continue
		}
		if srv.Env == nil {
			srv.Env = map[string]string{}
		}
		srv.Env[k] = fill(env[k])
	}
	if m.Server.Type == "binary" && !filepath.IsAbs(srv.Command) && strings.ContainsAny(srv.Command, `/\`) {
		// A binary's command is relative to the bundle.
		srv.Command = filepath.Join(dir, filepath.FromSlash(srv.Command))
		if o.GOOS == "windows" && filepath.Ext(srv.Command) == "" {
			srv.Command += ".exe"
		}
	}
	srv.Cwd = dir
	if err := srv.Validate(); err != nil {
		return nil, err
	}
	plan.Server = srv
	return plan, nil
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
