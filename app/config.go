package app

import (
	"fmt"
	"strings"

	"mcptray/registry"
)

// ConfigError is a config that cannot be used at all (missing explicit file,
// syntax error): exit code 2.
type ConfigError struct{ Err error }

func (e ConfigError) Error() string { return e.Err.Error() }

func (e ConfigError) Unwrap() error { return e.Err }

// LoadConfig finds and loads the config, writing the default one on first
// run. Warnings and per-server errors are printed to stderr unless quiet; the
// config is returned even when some servers are invalid.
func LoadConfig(env *Env, flagPath string, quiet bool) (*registry.Config, error) {
	loc, err := registry.Locate(flagPath)
	if err != nil {
		return nil, ConfigError{err}
	}
	cfg, created, err := registry.Open(loc, env.Exe)
	if err != nil {
		return nil, ConfigError{err}
	}
	if created {
		fmt.Fprintf(env.Stderr, "mcptray: wrote a default config with the built-in demo server to %s\n", loc.Path)
	}
	if !quiet {
		for _, d := range cfg.Diagnostics {
			fmt.Fprintln(env.Stderr, d.String())
		}
	}
	return cfg, nil
}

// SelectServers picks the named servers (all when names is empty), in file
// order; an unknown name is a usage error.
func SelectServers(cfg *registry.Config, names []string) ([]*registry.Server, error) {
	if len(names) == 0 {
		return cfg.Servers, nil
	}
	want := map[string]bool{}
	for _, n := range names {
		if cfg.Server(n) == nil {
			var known []string
			for _, s := range cfg.Servers {
				known = append(known, s.Name)
			}
			return nil, Usagef("no server named %q in %s (it has: %s)", n, cfg.Path, strings.Join(known, ", "))
		}
		want[n] = true
	}
	var out []*registry.Server
	for _, s := range cfg.Servers {
		if want[s.Name] {
			out = append(out, s)
		}
	}
	return out, nil
}
