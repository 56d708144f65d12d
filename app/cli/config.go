package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"mcptray/app"
	"mcptray/app/present"
	"mcptray/registry"
	"mcptray/registry/clients"
)

// configFlag adds --config to a command.
func configFlag(fs *flag.FlagSet) *string {
	return fs.String("config", "", "the servers.toml to use (default: $MCPTRAY_CONFIG, else the user config folder)")
}

const configValidateHelp = "Exit status: 0 when the config has no errors (warnings allowed), 1 when it has errors, 2 when it cannot be read."

func cmdConfigPath(fs *flag.FlagSet) runFunc {
	cfgPath := configFlag(fs)
	return func(_ context.Context, env *app.Env, args []string) error {
		if len(args) > 0 {
			return app.Usagef("takes no arguments")
		}
		loc, err := registry.Locate(*cfgPath)
		if err != nil {
			return app.ConfigError{Err: err}
		}
		fmt.Fprintln(env.Stdout, loc.Path)
		return nil
	}
}

func cmdConfigValidate(fs *flag.FlagSet) runFunc {
	cfgPath := configFlag(fs)
	asJSON := fs.Bool("json", false, "print the diagnostics as JSON")
	return func(_ context.Context, env *app.Env, args []string) error {
		if len(args) > 0 {
			return app.Usagef("takes no arguments")
		}
		cfg, err := app.LoadConfig(env, *cfgPath, true)
		var diags []registry.Diagnostic
		var se *registry.SyntaxError
		switch {
		case errors.As(err, &se):
			diags = []registry.Diagnostic{se.Diagnostic}
		case err != nil:
			return err
		default:
			diags = append(cfg.Diagnostics, unsetVarDiagnostics(cfg, env.LookupEnv)...)
		}
		errs := 0
		for _, d := range diags {
			if d.Severity == registry.SeverityError {
				errs++
			}
		}
		if *asJSON {
			out := struct {
				File        string                `json:"file"`
				Valid       bool                  `json:"valid"`
				Servers     int                   `json:"servers"`
				Diagnostics []registry.Diagnostic `json:"diagnostics"`
			}{File: configPathOf(cfg, *cfgPath), Valid: errs == 0, Diagnostics: diags}
			if out.Diagnostics == nil {
				out.Diagnostics = []registry.Diagnostic{}
			}
			if cfg != nil {
				out.Servers = len(cfg.Servers)
			}
			writeJSON(env.Stdout, out)
		} else {
			for _, d := range diags {
				fmt.Fprintln(env.Stdout, d.Long())
			}
			switch {
			case errs > 0:
				fmt.Fprintf(env.Stdout, "%d error(s), %d warning(s)\n", errs, len(diags)-errs)
			default:
				fmt.Fprintf(env.Stdout, "%s: ok, %d server(s), %d warning(s)\n", cfg.Path, len(cfg.Servers), len(diags))
			}
		}
		if errs > 0 {
			return ExitError{Code: 1}
		}
		return nil
	}
}

func configPathOf(cfg *registry.Config, flagPath string) string {
	if cfg != nil {
		return cfg.Path
	}
	loc, _ := registry.Locate(flagPath)
	return loc.Path
}

// unsetVarDiagnostics reports ${env:VAR} references to variables not set in
// mcptray's environment: those servers would fail to start.
func unsetVarDiagnostics(cfg *registry.Config, lookup registry.LookupFunc) []registry.Diagnostic {
	var out []registry.Diagnostic
	for _, s := range cfg.Servers {
		if !s.Valid() {
			continue
		}
		if _, err := s.Expand(lookup); err != nil {
			var uv *registry.UnsetVarError
			if errors.As(err, &uv) {
				out = append(out, registry.Diagnostic{Severity: registry.SeverityError, File: cfg.Path, Line: s.Line,
					Server: s.Name, Field: "servers." + s.Name + "." + uv.Field, Message: uv.Error()})
			}
		}
	}
	return out
}

func cmdConfigList(fs *flag.FlagSet) runFunc {
	cfgPath := configFlag(fs)
	asJSON := fs.Bool("json", false, "print the servers as JSON")
	showSecrets := fs.Bool("show-secrets", false, "show env and header values instead of masking them")
	return func(_ context.Context, env *app.Env, args []string) error {
		if len(args) > 0 {
			return app.Usagef("takes no arguments")
		}
		cfg, err := app.LoadConfig(env, *cfgPath, false)
		if err != nil {
			return err
		}
		entries := []registry.ServerJSON{}
		for _, s := range cfg.Servers {
			if !*showSecrets {
				s = s.Redacted()
			}
			entries = append(entries, s.JSON())
		}
		if *asJSON {
			writeJSON(env.Stdout, entries)
			return nil
		}
		if len(entries) == 0 {
			fmt.Fprintf(env.Stdout, "no servers in %s\n", cfg.Path)
			return nil
		}
		tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tKIND\tCOMMAND / URL\tSTATUS")
		for _, e := range entries {
			target := e.URL + " (" + string(e.Transport) + ")"
			if e.Kind == "stdio" {
				target = clients.ShellJoin(append([]string{e.Command}, e.Args...))
			}
			if len(e.Env) > 0 {
				target = envPrefix(e.Env) + target
			}
			if len(e.Headers) > 0 {
				target += " " + headerList(e.Headers)
			}
			status := "ok"
			switch {
			case !e.Valid:
				status = "invalid: " + e.Error
			case e.Disabled:
				status = "disabled"
			case e.Start == registry.StartLazy:
				status = "ok (starts with its first client)"
			case !e.Autostart:
				status = "ok (manual start)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.Name, e.Kind, target, status)
		}
		return tw.Flush()
	}
}

func envPrefix(env map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(env)) {
		b.WriteString(k + "=" + clients.ShellQuote(env[k]) + " ")
	}
	return b.String()
}

func headerList(h map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(h)) {
		parts = append(parts, fmt.Sprintf("[%s: %s]", k, h[k]))
	}
	return strings.Join(parts, " ")
}

func writeJSON(w io.Writer, v any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	w.Write(present.EscapeJSONControls(b.Bytes()))
}
