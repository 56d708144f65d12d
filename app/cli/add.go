package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"mcptray/app"
	"mcptray/registry"
	"mcptray/registry/catalog"
	"mcptray/supervisor"
)

const addHelp = `Adds a server to servers.toml without writing TOML, checks it at once (as
"mcptray check NAME" does) and prints the result. From:

  REGISTRY-NAME[@VERSION]  a server of the MCP Registry (see "mcptray search";
                    --registry, else [settings] registry, else the official
                    one): npm runs as npx -y PACKAGE@VERSION, PyPI as uvx
                    PACKAGE==VERSION, an OCI image as docker run -i --rm IMAGE
                    (podman when there is no docker), an MCP bundle is
                    downloaded, checked against its SHA-256 and unpacked, a
                    remote becomes its URL with its headers. --package picks
                    one when the server offers several.
  FILE.mcpb         an MCP bundle: verified (no path leaving its folder, a
                    valid manifest, this platform, its runtime on the login
                    shell's PATH) and unpacked into mcptray's data folder
                    under its name and version.
  --json            a snippet on standard input in any client's format
                    mcptray imports (Claude Desktop mcpServers, VS Code
                    servers, Codex TOML) or command lines (npx -y PACKAGE),
                    one server or many.

The values a server declares (environment variables, headers, arguments,
a bundle's user_config) come from --set NAME=VALUE, else are asked on a
terminal (required ones and secrets); a secret is kept in the OS keyring and
servers.toml refers to it as ${keyring:SERVER.NAME}. A required one missing
is an error naming it. The runtime the server needs (npx, uvx, docker, node,
python, uv) must be on the login shell's PATH; what to install is said when
it is not. The entry records where it came from: source =
"registry:NAME@VERSION" or "mcpb:NAME@VERSION".

--update NAME asks the registry for a newer version of a server added from
it and replaces the entry with it (asked on a terminal, or --yes).

Exit status: 0 added and ready, 1 added but the check failed (the entry
stays: fix it and run "mcptray check NAME"), 2 usage or config errors or
nothing added.`

// addOpts are add's flags.
type addOpts struct {
	cfgPath, regURL, name, kind, update *string
	fromJSON, dryRun, replace, yes      *bool
	noCheck                             *bool
	timeout                             *time.Duration
	set                                 repeated
}

func addFlags(fs *flag.FlagSet) runFunc {
	o := &addOpts{
		cfgPath:  configFlag(fs),
		regURL:   fs.String("registry", "", "the MCP Registry's base URL (default: [settings] registry, else the official one)"),
		name:     fs.String("name", "", "the entry's name in servers.toml (default: from the registry name, the bundle or the snippet)"),
		kind:     fs.String("package", "", "how to run a registry server that offers several ways: npm, pypi, oci, mcpb or remote"),
		update:   fs.String("update", "", "offer the newer registry version of the server NAME added from the registry"),
		fromJSON: fs.Bool("json", false, "read a snippet (any client's JSON, Codex TOML, command lines) from standard input"),
		dryRun:   fs.Bool("dry-run", false, "print the entry and write nothing"),
		replace:  fs.Bool("replace", false, "replace an entry of the same name"),
		yes:      fs.Bool("yes", false, "with --update: replace without asking"),
		noCheck:  fs.Bool("no-check", false, "do not check the new entry"),
		timeout:  fs.Duration("timeout", 60*time.Second, "give up on the check after this long (npx and uvx may download the package first)"),
	}
	fs.Var(&o.set, "set", "a value the server needs, NAME=VALUE (repeatable)")
	return func(ctx context.Context, env *app.Env, args []string) error { return runAdd(ctx, env, o, args) }
}

func runAdd(ctx context.Context, env *app.Env, o *addOpts, args []string) error {
	sources := 0
	for _, on := range []bool{len(args) > 0, *o.fromJSON, *o.update != ""} {
		if on {
			sources++
		}
	}
	if sources != 1 || len(args) > 1 {
		return app.Usagef("name one thing to add: a REGISTRY-NAME[@VERSION], a FILE.mcpb, --json (a snippet on stdin) or --update NAME")
	}
	if *o.timeout <= 0 {
		return app.Usagef("--timeout must be positive")
	}
	values := map[string]string{}
	for _, kv := range o.set {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return app.Usagef("--set %q: want NAME=VALUE", kv)
		}
		values[k] = v
	}
	loc, err := registry.Locate(*o.cfgPath)
	if err != nil {
		return app.ConfigError{Err: err}
	}
	cfg, err := registry.OpenForUpdate(loc, env.Exe)
	if err != nil {
		return app.ConfigError{Err: err}
	}
	ao := &app.AddOptions{Name: *o.name, Kind: *o.kind, Values: values}
	if terminal(env) {
		ao.Ask = func(f catalog.Field) (string, error) { return askField(env, f) }
	}
	replace := *o.replace
	var add *app.Addition
	switch {
	case *o.update != "":
		add, err = planUpdate(ctx, env, cfg, o, ao)
		replace = true
	case *o.fromJSON:
		text, rerr := io.ReadAll(io.LimitReader(env.Stdin, 4<<20))
		if rerr != nil {
			return fmt.Errorf("read the snippet from stdin: %w", rerr)
		}
		add, err = app.PlanSnippetAdd(string(text), ao)
	case strings.HasSuffix(strings.ToLower(args[0]), ".mcpb") || strings.HasSuffix(strings.ToLower(args[0]), ".dxt"):
		add, err = app.PlanBundleAdd(ctx, args[0], ao)
	default:
		c, cerr := app.RegistryClient(cfg, *o.regURL)
		if cerr != nil {
			return cerr
		}
		add, _, err = app.PlanRegistryAdd(ctx, c, args[0], ao)
	}
	if err != nil {
		return err
	}
	if add == nil {
		return nil // --update: already the latest, said so
	}
	defer add.Close()
	for _, w := range add.Warnings {
		fmt.Fprintf(env.Stderr, "mcptray add: warning: %s\n", w)
	}
	var b bytes.Buffer
	for i, s := range add.Servers {
		if i > 0 {
			b.WriteString("\n")
		}
		registry.EncodeServer(&b, s.Redacted())
	}
	if *o.dryRun {
		fmt.Fprintf(env.Stdout, "would add to %s:\n\n%s", cfg.Path, b.String())
		if n := len(add.Secrets); n > 0 {
			fmt.Fprintf(env.Stdout, "\nwould keep %d secret(s) in %s\n", n, app.SecretsWhere(env))
		}
		if add.Folder != "" {
			fmt.Fprintf(env.Stdout, "would unpack the bundle into %s\n", add.Folder)
		}
		fmt.Fprintln(env.Stdout, "dry run: nothing written")
		return nil
	}
	if err := add.Commit(env, cfg, replace); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "added to %s:\n\n%s\n", cfg.Path, b.String())
	if n := len(add.Secrets); n > 0 {
		fmt.Fprintf(env.Stdout, "kept %d secret(s) in %s (servers.toml refers to them as ${keyring:NAME})\n", n, app.SecretsWhere(env))
	}
	if add.Folder != "" {
		fmt.Fprintf(env.Stdout, "unpacked the bundle into %s\n", add.Folder)
	}
	if *o.noCheck {
		return nil
	}
	results := app.RunCheck(ctx, cfg, add.Servers, *o.timeout)
	printCheckTable(env.Stdout, results)
	for _, r := range results {
		if r.State != supervisor.StateReady {
			fmt.Fprintf(env.Stderr, "mcptray add: %s was added but is not ready: fix it and run `mcptray check %s`\n", r.Name, r.Name)
			return ExitError{Code: 1}
		}
	}
	return nil
}

// planUpdate makes the newer registry version of the entry o.update, with
// its values kept.
func planUpdate(ctx context.Context, env *app.Env, cfg *registry.Config, o *addOpts, ao *app.AddOptions) (*app.Addition, error) {
	old := cfg.Server(*o.update)
	if old == nil {
		return nil, fmt.Errorf("servers.toml has no server %q", *o.update)
	}
	c, err := app.RegistryClient(cfg, *o.regURL)
	if err != nil {
		return nil, err
	}
	u, err := c.CheckUpdate(ctx, old.Source)
	if errors.Is(err, catalog.ErrNoSource) {
		return nil, fmt.Errorf("%s was %s", old.Name, err)
	}
	if err != nil {
		return nil, err
	}
	if !u.Newer {
		fmt.Fprintf(env.Stdout, "%s runs %s %s, the latest in %s\n", old.Name, u.Name, u.Installed, c.BaseURL())
		return nil, nil
	}
	fmt.Fprintf(env.Stdout, "%s runs %s %s; %s has %s\n", old.Name, u.Name, u.Installed, c.BaseURL(), u.Latest.Server.Version)
	if !*o.yes && !askYesNo(env, fmt.Sprintf("Replace %s with %s?", u.Installed, u.Latest.Server.Version)) {
		return nil, errors.New("not updated (pass --yes to update without a terminal)")
	}
	// The values the entry has keep applying: its env and headers by name
	// (secrets stay the keyring references they are).
	ao.Keep = map[string]string{}
	for k, v := range old.Env {
		ao.Keep[k] = v
	}
	for k, v := range old.Headers {
		ao.Keep[k] = v
	}
	ao.Name = old.Name
	if ao.Kind == "" {
		ao.Kind = updateKind(old)
	}
	add, _, err := app.PlanRegistryAdd(ctx, c, u.Name+"@"+u.Latest.Server.Version, ao)
	return add, err
}

// updateKind is how the entry runs now, so an update keeps it.
func updateKind(s *registry.Server) string {
	switch {
	case s.IsRemote():
		return "remote"
	case s.Command == "npx":
		return "npm"
	case s.Command == "uvx":
		return "pypi"
	case s.Command == "docker" || s.Command == "podman":
		return "oci"
	}
	return ""
}

func terminal(env *app.Env) bool {
	f, ok := env.Stdin.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// askField asks one value on the terminal: a secret without echo.
func askField(env *app.Env, f catalog.Field) (string, error) {
	label := f.Name
	if f.Description != "" {
		label += " (" + f.Description + ")"
	}
	if len(f.Choices) > 0 {
		label += " [" + strings.Join(f.Choices, "|") + "]"
	}
	if f.Default != "" && !f.Secret {
		label += " [default " + f.Default + "]"
	}
	if !f.Required {
		label += " (optional)"
	}
	in := env.Stdin.(*os.File)
	if f.Secret {
		b, err := readHidden(env.Stderr, in, label+", not shown: ")
		if err != nil {
			return "", fmt.Errorf("read %s: %w", f.Name, err)
		}
		return string(b), nil
	}
	fmt.Fprintf(env.Stderr, "%s: ", label)
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && line == "" {
		return "", fmt.Errorf("read %s: %w", f.Name, err)
	}
	return strings.TrimSpace(line), nil
}
