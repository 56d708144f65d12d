package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"mcptray/app"
	"mcptray/registry"
	"mcptray/registry/clients"
)

var importHelp = `Reads the file of --client (or --path) and adds its servers to servers.toml.
Names are kept (characters servers.toml does not allow become '-'); a name
servers.toml already has is reported and skipped unless --replace. The
client's secret syntax becomes ${env:VAR} (${VAR:-default} becomes
${env:VAR:-default}), and so do mcptray's own <VAR> placeholders; a literal
secret is kept, with a warning; fields mcptray does not model are reported.
The diff masks the secrets of every server, the ones already in
servers.toml included. An mcp-remote bridge
entry becomes the remote server it reaches. servers.toml is saved atomically
and the previous version kept as servers.toml.bak.
`

// importOpts are import's flags.
type importOpts struct {
	cfgPath, path              *string
	client                     *clientFlags
	dryRun, replace, toKeyring *bool
}

func importFlags(flagSet *flag.FlagSet) runFunc {
	o := &importOpts{
		cfgPath:   configFlag(flagSet),
		client:    addClientFlags(flagSet, false),
		path:      flagSet.String("path", "", "read this file instead of the client's own"),
		dryRun:    flagSet.Bool("dry-run", false, "print what would change in servers.toml without writing"),
		replace:   flagSet.Bool("replace", false, "replace servers that already exist in servers.toml"),
		toKeyring: flagSet.Bool("keyring", false, "move the literal secrets of the imported servers (env and header values) into the OS keyring and write ${keyring:NAME} references (asked on a terminal)"),
	}
	return func(ctx context.Context, env *app.Env, args []string) error { return runImport(ctx, env, o, args) }
}

// runImport is `mcptray import`: the servers of an AI client's file into
// servers.toml.
func runImport(ctx context.Context, env *app.Env, opts *importOpts, args []string) error {
	cfgPath, cf, path, dryRun, replace, toKeyring := opts.cfgPath, opts.client, opts.path, opts.dryRun, opts.replace, opts.toKeyring
	if len(args) > 0 {
		return app.Usagef("takes no arguments")
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
	data, err := registry.ReadFile(file)
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
	// Nothing is written before the save: a dry run leaves no trace, and
	// a config that does not exist yet is created (with the default
	// comments) by the save, as first run does.
	loc, err := registry.Locate(*cfgPath)
	if err != nil {
		return app.ConfigError{Err: err}
	}
	cfg, err := registry.OpenForUpdate(loc, env.Exe)
	if err != nil {
		return app.ConfigError{Err: err}
	}
	old := cfg.Saved()
	// Every server's secrets, the ones replaced and the neighbours'
	// included, are masked in the diff.
	var secrets []string
	for _, s := range append(slices.Clone(cfg.Servers), im.Servers...) {
		secrets = append(secrets, s.Secrets()...)
	}
	lits := app.LiteralSecrets(im.Servers)
	if len(lits) > 0 && !*toKeyring {
		*toKeyring = askYesNo(env, fmt.Sprintf("%d literal secret(s) in what is imported (%s). Keep them in the keyring instead of servers.toml?", len(lits), strings.Join(lits, ", ")))
		if !*toKeyring {
			fmt.Fprintf(env.Stderr, "mcptray import: note: %d literal secret(s) will be written into servers.toml; pass --keyring to keep them in the OS keyring\n", len(lits))
		}
	}
	merged := app.MergeImported(cfg, im.Servers, *replace)
	added, replaced, skipped := merged.Added, merged.Replaced, merged.Skipped
	for _, name := range skipped {
		fmt.Fprintf(env.Stderr, "mcptray import: conflict: servers.toml already has %q: skipped (--replace to overwrite)\n", name)
	}
	// Only the secrets of the servers written move: a skipped server's
	// would take the keyring name of the one it did not replace.
	var moved *app.MovedSecrets
	if *toKeyring && len(app.LiteralSecrets(merged.Written)) > 0 {
		st, err := app.OpenSecrets(env)
		if err != nil {
			return err
		}
		moved = app.MoveToKeyring(merged.Written, st)
	}
	for _, w := range im.Warnings {
		if moved != nil && strings.Contains(w, "holds a literal secret") {
			continue // it is going to the keyring
		}
		fmt.Fprintf(env.Stderr, "mcptray import: warning: %s\n", w)
	}
	if c.Unverified != "" {
		fmt.Fprintf(env.Stderr, "mcptray import: note: unverified: %s.\n", c.Unverified)
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
		if moved != nil {
			fmt.Fprintf(env.Stdout, "would keep %d secret(s) in %s: %s\n", moved.Len(), moved.Where(), strings.Join(moved.Names(), ", "))
		}
		return nil
	}
	if moved != nil {
		if err := moved.Persist(); err != nil {
			return err
		}
	}
	if err := registry.Save(cfg); err != nil {
		if moved != nil {
			moved.Undo()
		}
		return err
	}
	if moved != nil {
		fmt.Fprintf(env.Stdout, "kept %d secret(s) in %s: %s (servers.toml refers to them as ${keyring:NAME})\n", moved.Len(), moved.Where(), strings.Join(moved.Names(), ", "))
	}
	if old == nil {
		fmt.Fprintf(env.Stdout, "%s: created with the default config (%s)\n", cfg.Path, summary)
	} else {
		fmt.Fprintf(env.Stdout, "%s: %s; previous version: %s.bak\n", cfg.Path, summary, cfg.Path)
	}
	if len(added) > 0 {
		fmt.Fprintf(env.Stdout, "added: %s\n", strings.Join(added, ", "))
	}
	return nil
}
