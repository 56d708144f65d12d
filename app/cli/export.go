package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"

	"mcptray/app"
	"mcptray/registry/clients"
)

var exportHelp = `Prints the entries install would write, the way the client --client expects
them: with no NAME the one entry mcptray, with --per-server or NAMEs one per
server (default: every valid, enabled one).

` + routeHelp + `

Output:

  --format snippet   the entries under the client's top-level key, exactly as
                     they go into its file (JSON; TOML for codex; YAML for
                     goose and continue); the default
  --format cli       the client's own add command (claude, codex, gemini, code)
  --format deeplink  an install link (cursor, vscode, lmstudio, goose)
  --format file      the path of the file 'mcptray install' writes

Direct entries' secrets: a ${env:VAR} reference (or ${env:VAR:-default})
becomes the client's own syntax; a client without one gets the placeholder
<VAR> and a warning, unless --reveal-secrets writes the variable's value.
Literal env and header values, and credentials in URLs, are printed as
<hidden> with a warning (it is not a working value: paste it and the server
fails), unless --reveal-secrets prints them. For gemini, prefer 'mcptray
install': gemini mcp add writes the values of every reference in
settings.json back into it. Commands are resolved to absolute paths on the
login shell's PATH (GUI clients lack it) unless --no-resolve; --os windows
runs npx and other .cmd tools through "cmd /c" (and names mcptray.exe bare,
for the target's PATH: this machine's path means nothing there). Remote
servers for a client whose file runs stdio only (claude-desktop) go through
npx -y mcp-remote.
`

// clientTable lists the clients for --help, with what is unverified.
func clientTable() string {
	var b strings.Builder
	b.WriteString("Clients:\n")
	for _, c := range clients.All() {
		extra := []string{string(c.Format)}
		if c.HasCLI() {
			extra = append(extra, "cli")
		}
		if c.HasDeepLink() {
			extra = append(extra, "deeplink")
		}
		fmt.Fprintf(&b, "  %-15s %s (%s)\n", c.ID, c.Name, strings.Join(extra, ", "))
		if c.Unverified != "" {
			fmt.Fprintf(&b, "  %-15s   unverified: %s\n", "", c.Unverified)
		}
	}
	return b.String()
}

// clientFlags are the flags export, install, uninstall and import share.
type clientFlags struct {
	client, scope, osName *string
	reveal, noResolve     *bool
}

func addClientFlags(fs *flag.FlagSet, withOS bool) *clientFlags {
	f := &clientFlags{
		client: fs.String("client", "", "the AI client: "+strings.Join(clients.IDs(), ", ")),
		scope:  fs.String("scope", "", "which of the client's files: user (default), project (this folder) or local (claude-code)"),
	}
	if withOS {
		f.osName = fs.String("os", runtime.GOOS, "target operating system: linux, darwin or windows")
	}
	return f
}

func (f *clientFlags) lookup() (*clients.Client, error) {
	if *f.client == "" {
		return nil, app.Usagef("--client is required (one of: %s)", strings.Join(clients.IDs(), ", "))
	}
	c, err := clients.Lookup(*f.client)
	if err != nil {
		return nil, app.Usagef("%v", err)
	}
	return c, nil
}

// options builds the clients options: paths from this machine's home and
// environment, commands resolved on the login shell's PATH.
func (f *clientFlags) options(ctx context.Context, env *app.Env) (*clients.Options, error) {
	o := app.ClientOptions(ctx, env)
	o.Scope = clients.Scope(*f.scope)
	if f.osName != nil {
		o.OS = *f.osName
		if err := clients.CheckOS(o.OS); err != nil {
			return nil, app.Usagef("--os: %v", err)
		}
	}
	switch o.Scope {
	case "", clients.ScopeUser, clients.ScopeProject, clients.ScopeLocal:
	default:
		return nil, app.Usagef("--scope must be user, project or local, not %q", *f.scope)
	}
	if f.reveal != nil {
		o.RevealSecrets = *f.reveal
	}
	if f.noResolve != nil && *f.noResolve {
		o.Resolve = nil
	}
	return o, nil
}

func printAdvice(w io.Writer, verb string, warnings, notes []string) {
	for _, m := range warnings {
		fmt.Fprintf(w, "mcptray %s: warning: %s\n", verb, m)
	}
	for _, m := range notes {
		fmt.Fprintf(w, "mcptray %s: note: %s\n", verb, m)
	}
}

func cmdExport(fs *flag.FlagSet) runFunc {
	cfgPath := configFlag(fs)
	cf := addClientFlags(fs, true)
	format := fs.String("format", "snippet", "snippet, cli, deeplink or file")
	cf.reveal = fs.Bool("reveal-secrets", false, "write literal secrets and referenced variables' values instead of masks and placeholders")
	cf.noResolve = fs.Bool("no-resolve", false, "keep commands as written instead of resolving them on the login shell's PATH")
	route := addRouteFlags(fs)
	return func(ctx context.Context, env *app.Env, args []string) error {
		c, err := cf.lookup()
		if err != nil {
			return err
		}
		o, err := cf.options(ctx, env)
		if err != nil {
			return err
		}
		if *format == "file" {
			p, err := c.Path(o)
			if err != nil {
				return err
			}
			fmt.Fprintln(env.Stdout, p)
			if c.Unverified != "" {
				printAdvice(env.Stderr, "export", nil, []string{"unverified: " + c.Unverified + "."})
			}
			return nil
		}
		cfg, err := app.LoadConfig(env, *cfgPath, true)
		if err != nil {
			return err
		}
		out := clients.Output(*format)
		if !slices.Contains([]clients.Output{clients.OutputSnippet, clients.OutputCLI, clients.OutputDeepLink}, out) {
			return app.Usagef("--format must be snippet, cli, deeplink or file, not %q", *format)
		}
		entries, err := route.plan(env, cfg, o, args, "export")
		if err != nil {
			return err
		}
		res, err := entries.Render(c, out)
		if errors.Is(err, clients.ErrUnsupported) {
			return app.Usagef("%v", err)
		}
		if err != nil {
			return err
		}
		env.Stdout.Write(res.Data)
		printAdvice(env.Stderr, "export", res.Warnings, res.Notes)
		return nil
	}
}
