package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"mcptray/app"
	"mcptray/registry/clients"
)

var installHelp = `With no NAME, install writes ONE entry into the file of --client: mcptray,
which runs "mcptray connect" (every enabled server as one MCP server: their
tools named SERVER__TOOL), or with --profile PROFILE mcptray-PROFILE
("mcptray connect --profile PROFILE"). It replaces the per-server entries
mcptray wrote before (the diff shows them go, and a note names them);
"mcptray uninstall --client X mcptray" puts the file back byte for byte when
nothing changed it since. Direct entries stay (a warning names those of the
profile's servers). --per-server (or NAMEs, --direct, --url) writes one entry
per server, as below.

Per server, install merges the named servers (default: every valid, enabled one) into the file of
--client: only those entries are added or updated; every other key, and the
comments of JSONC files (vscode, zed, gemini, opencode), stay. The file is
replaced atomically, a timestamped backup is kept beside it
(FILE.mcptray-backup-YYYYMMDDTHHMMSSZ) and a unified diff is printed.
Installing twice changes nothing. A file that does not parse is refused and
left untouched, and so is a file the client itself would refuse (a trailing
comma in Gemini's settings.json).

` + routeHelp + `

An entry that changes route is said ("NAME: direct entry (npx -y pkg) →
through mcptray (mcptray connect NAME)", and the reverse with --direct);
--dry-run says it and writes nothing.

Direct entries' secrets: references in the client's syntax; literal values
are written as they are. A reference the client cannot express keeps the
working value the file already holds, else gets a placeholder (Codex:
forwarded by name with env_vars), with a warning. The diff masks the
secrets of every entry in the file, not only the ones written
(--reveal-secrets shows them).
`

const uninstallHelp = `Removes the named entries from the file of --client, keeping everything else,
with the same atomic write, backup and masked diff as install. A name that
is not there is not an error.

Uninstalling the one entry (mcptray, or mcptray-PROFILE) alone restores the
backup install kept, byte for byte, when the file is still what install made
of it (the per-server entries it replaced come back); otherwise only that
entry is removed, and a note says so.`

// printChange prints a change's diff and what it did.
func printChange(env *app.Env, verb string, ch *clients.Change, dryRun bool) {
	if d := ch.Diff(); d != "" {
		fmt.Fprint(env.Stdout, d)
	}
	for _, l := range ch.SwitchLines() {
		fmt.Fprintln(env.Stdout, l)
	}
	var parts []string
	for _, g := range []struct {
		what  string
		names []string
	}{{"added", ch.Added}, {"updated", ch.Updated}, {"removed", ch.Removed}, {"unchanged", ch.Unchanged}} {
		if len(g.names) > 0 {
			parts = append(parts, g.what+" "+strings.Join(g.names, ", "))
		}
	}
	summary := strings.Join(parts, "; ")
	switch {
	case !ch.Changed():
		fmt.Fprintf(env.Stdout, "%s: nothing to change (%s)\n", ch.Path, summary)
	case dryRun:
		fmt.Fprintf(env.Stdout, "%s: would be changed (%s); dry run, nothing written\n", ch.Path, summary)
	case ch.Backup != "":
		fmt.Fprintf(env.Stdout, "%s: %s; backup: %s\n", ch.Path, summary, ch.Backup)
	default:
		fmt.Fprintf(env.Stdout, "%s: created (%s)\n", ch.Path, summary)
	}
	printAdvice(env.Stderr, verb, ch.Warnings, ch.Notes)
}

func fileError(err error) error {
	var pe *clients.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%w\nthe file was left untouched: fix it (or move it aside) and run again", err)
	}
	return err
}

func cmdInstall(fs *flag.FlagSet) runFunc {
	cfgPath := configFlag(fs)
	cf := addClientFlags(fs, false)
	dryRun := fs.Bool("dry-run", false, "print the diff without writing")
	path := fs.String("path", "", "install into this file instead of the client's own")
	cf.reveal = fs.Bool("reveal-secrets", false, "show literal secrets in the diff; write referenced variables' values for clients without references")
	cf.noResolve = fs.Bool("no-resolve", false, "keep commands as written instead of resolving them on the login shell's PATH")
	route := addRouteFlags(fs)
	return func(ctx context.Context, env *app.Env, args []string) error {
		c, err := cf.lookup()
		if err != nil {
			return err
		}
		if !c.HasFile() && *path == "" {
			return app.Usagef("%s has no config file: use 'mcptray export --client %s' or --path", c.ID, c.ID)
		}
		if _, err := route.request(args); err != nil {
			return err
		}
		o, err := cf.options(ctx, env)
		if err != nil {
			return err
		}
		cfg, err := app.LoadConfig(env, *cfgPath, true)
		if err != nil {
			return err
		}
		entries, err := route.plan(env, cfg, o, args, "install")
		if err != nil {
			return err
		}
		ch, err := entries.Install(c, &clients.FileOptions{Path: *path, DryRun: *dryRun})
		if err != nil {
			return fileError(err)
		}
		printChange(env, "install", ch, *dryRun)
		return nil
	}
}

func cmdUninstall(fs *flag.FlagSet) runFunc {
	cf := addClientFlags(fs, false)
	dryRun := fs.Bool("dry-run", false, "print the diff without writing")
	path := fs.String("path", "", "remove from this file instead of the client's own")
	return func(ctx context.Context, env *app.Env, args []string) error {
		c, err := cf.lookup()
		if err != nil {
			return err
		}
		if len(args) == 0 {
			return app.Usagef("name the servers to remove")
		}
		if !c.HasFile() && *path == "" {
			return app.Usagef("%s has no config file: pass --path", c.ID)
		}
		o, err := cf.options(ctx, env)
		if err != nil {
			return err
		}
		fo := &clients.FileOptions{Path: *path, DryRun: *dryRun}
		if len(args) == 1 && (args[0] == clients.OneEntryName("") || strings.HasPrefix(args[0], "mcptray-")) {
			// The one entry: the file comes back as it was before it
			// was installed, when nothing changed it since.
			ch, err := c.UninstallOne(strings.TrimPrefix(strings.TrimPrefix(args[0], "mcptray"), "-"), o, fo)
			if err != nil {
				return fileError(err)
			}
			printChange(env, "uninstall", ch, *dryRun)
			return nil
		}
		ch, err := c.Uninstall(args, o, fo)
		if err != nil {
			return fileError(err)
		}
		printChange(env, "uninstall", ch, *dryRun)
		return nil
	}
}
