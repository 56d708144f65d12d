package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"mcptray/registry"
	"mcptray/registry/clients"
)

func init() {
	register(&command{
		name:    "import",
		summary: "copy the servers an AI client has configured into servers.toml",
		help: `Reads the file of --client (or --path) and adds its servers to servers.toml.
Names are kept (characters servers.toml does not allow become '-'); a name
servers.toml already has is reported and skipped unless --replace. The
client's secret syntax becomes ${env:VAR} (${VAR:-default} becomes
${env:VAR:-default}), and so do mcptray's own <VAR> placeholders; a literal
secret is kept, with a warning; fields mcptray does not model are reported.
The diff masks the secrets of every server, the ones already in
servers.toml included. An mcp-remote bridge
entry becomes the remote server it reaches. servers.toml is saved atomically
and the previous version kept as servers.toml.bak.

` + clientTable(),
		flags: cmdImport,
	})
}

func cmdImport(flagSet *flag.FlagSet) func(context.Context, *Env, []string) error {
	cfgPath := configFlag(flagSet)
	cf := addClientFlags(flagSet, false)
	path := flagSet.String("path", "", "read this file instead of the client's own")
	dryRun := flagSet.Bool("dry-run", false, "print what would change in servers.toml without writing")
	replace := flagSet.Bool("replace", false, "replace servers that already exist in servers.toml")
	return func(ctx context.Context, env *Env, args []string) error {
		if len(args) > 0 {
			return usagef("takes no arguments")
		}
		c, err := cf.lookup()
		if err != nil {
			return err
		}
		o, err := cf.options(ctx, env)
		if err != nil {
			return err
		}
		file := *path
		if file == "" {
			if file, err = c.Path(o); err != nil {
				return err
			}
		}
		data, err := os.ReadFile(file)
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s has no config file at %s (pass --path to read another)", c.Name, file)
		}
		if err != nil {
			return err
		}
		im, err := c.Import(file, data, o)
		if err != nil {
			return err
		}
		for _, w := range im.Warnings {
			fmt.Fprintf(env.Stderr, "mcptray import: warning: %s\n", w)
		}
		if c.Unverified != "" {
			fmt.Fprintf(env.Stderr, "mcptray import: note: unverified: %s.\n", c.Unverified)
		}
		cfg, err := LoadConfig(env, *cfgPath, true)
		if err != nil {
			return err
		}
		old, err := os.ReadFile(cfg.Path)
		if err != nil {
			return err
		}
		// Every server's secrets, the ones replaced and the neighbours'
		// included, are masked in the diff.
		var secrets []string
		for _, s := range append(slices.Clone(cfg.Servers), im.Servers...) {
			secrets = append(secrets, s.Secrets()...)
		}
		var added, replaced, skipped []string
		for _, s := range im.Servers {
			if i := indexServer(cfg, s.Name); i >= 0 {
				if !*replace {
					skipped = append(skipped, s.Name)
					fmt.Fprintf(env.Stderr, "mcptray import: conflict: servers.toml already has %q: skipped (--replace to overwrite)\n", s.Name)
					continue
				}
				cfg.Servers[i] = s
				replaced = append(replaced, s.Name)
				continue
			}
			cfg.Servers = append(cfg.Servers, s)
			added = append(added, s.Name)
		}
		next := registry.Encode(cfg)
		if d := clients.UnifiedDiff(cfg.Path, cfg.Path, old, next); d != "" && len(added)+len(replaced) > 0 {
			fmt.Fprint(env.Stdout, registry.MaskSecrets(d, secrets))
		}
		summary := fmt.Sprintf("%d found in %s: %d added, %d replaced, %d skipped", len(im.Servers), file, len(added), len(replaced), len(skipped))
		switch {
		case len(added)+len(replaced) == 0:
			fmt.Fprintf(env.Stdout, "%s: nothing to change (%s)\n", cfg.Path, summary)
			return nil
		case *dryRun:
			fmt.Fprintf(env.Stdout, "%s: would be changed (%s); dry run, nothing written\n", cfg.Path, summary)
			return nil
		}
		if err := registry.Save(cfg); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "%s: %s; previous version: %s.bak\n", cfg.Path, summary, cfg.Path)
		if len(added) > 0 {
			fmt.Fprintf(env.Stdout, "added: %s\n", strings.Join(added, ", "))
		}
		return nil
	}
}

func indexServer(cfg *registry.Config, name string) int {
	for i, s := range cfg.Servers {
		if s.Name == name {
			return i
		}
	}
	return -1
}
