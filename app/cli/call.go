package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/term"

	"mcptray/app"
	"mcptray/app/present"
	"mcptray/control"
	"mcptray/healthcheck"
	"mcptray/registry"
	"mcptray/supervisor"
)

const targetHelp = `TARGET is a server of the config (its NAME), a URL (Streamable HTTP, or the
old HTTP+SSE transport), or, after the other arguments, "-- COMMAND
[ARGS...]" for a local server that is not in the config. When a daemon
runs the same config file and serves NAME, the command uses the daemon's
instance of the server, through its gateway (the call is then in the
server's protocol trace: "mcptray trace NAME"). Otherwise (a URL, a
command, no daemon, or a daemon of another config) the server is started
(or connected to) for this command alone and stopped after it, as "mcptray
check" does. A remote
server's stored sign-in ("mcptray auth login") is used.`

const interactionHelp = `While the server works, its progress notifications show as a progress line
(plain lines when stderr is not a terminal) and its log messages go to
stderr. Ctrl-C sends the server notifications/cancelled and stops.

What the server asks back:
  elicitation  a form (mode "form") is asked field by field on the
               terminal, with the schema's titles, defaults, choices and
               checks; --elicit accept-defaults|decline|cancel answers
               without asking (with no terminal the default is decline).
               A URL (mode "url") opens in the browser ($BROWSER).
  sampling     declined, unless --sampling CMD names a command: it gets the
               sampling/createMessage params as JSON on stdin and prints
               either a CreateMessageResult as JSON ({"role":"assistant",
               "content":{"type":"text","text":"…"},"model":"…"}) or plain
               text, which becomes the text of the reply. A non-zero exit
               declines, with its stderr as the reason.
  roots        none are offered unless --root DIR is given (repeatable).`

const callHelp = `Calls TOOL with the arguments JSON-ARGS (a JSON object) and --arg
key=value pairs on top, each value typed by the tool's input schema
(numbers, true/false, JSON for arrays and objects, a,b,c for an array of
scalars). The arguments are checked against the schema before anything is
sent. The result's text is printed; images and audio are saved to files
(in --out, default the current folder) whose names are printed; embedded
resources are shown; structuredContent is checked against the tool's
outputSchema.

A configured server's tool held for approval (its definition changed
since it was approved, it was held by hand, or its server is new under
approve_new_servers) is refused, as every client session through mcptray
is refused it, with why: see "mcptray tools diff", then "mcptray tools
approve SERVER TOOL". The call records the tools it sees, as the daemon
does, so a change is held even when no daemon saw it.

` + targetHelp + `

` + interactionHelp + `

Exit status: 0 the tool succeeded, 1 the result has isError, does not
match the outputSchema, or the call failed, 2 usage errors (an unknown
tool, arguments that do not fit the schema).
--json prints the result as the server sent it.`

func callFlags(fs *flag.FlagSet) runFunc {
	o := addCallFlags(fs, true)
	o.skip = healthcheck.ListResources | healthcheck.ListPrompts
	var kv repeated
	fs.Var(&kv, "arg", "an argument, key=value, typed by the input schema (repeatable)")
	return func(ctx context.Context, env *app.Env, args []string) error {
		return o.run(ctx, env, args, 1, 2, func(ctx context.Context, sess *healthcheck.Session, pos []string) error {
			if o.target != nil && o.target.Line > 0 && o.cfg != nil && o.cfg.Path != "" {
				// A configured server's tool held for approval is refused
				// here as in every client session (through the daemon
				// the tool is not even listed; on an instance of the
				// command's own nothing else would stop it).
				if err := app.HeldCallError(o.cfg, o.target.Name, pos[0], sess.Report()); err != nil {
					return err
				}
			}
			tool, err := sess.Tool(pos[0])
			if err != nil {
				return usageOf(err)
			}
			in, err := healthcheck.ParseSchema(tool.InputSchema)
			if err != nil {
				return fmt.Errorf("tool %s: %w", tool.Name, err)
			}
			jsonArgs := ""
			if len(pos) > 1 {
				jsonArgs = pos[1]
			}
			callArgs, err := in.ToolArgs(jsonArgs, kv)
			if err != nil {
				return usageOf(err)
			}
			res, err := sess.CallTool(ctx, tool.Name, callArgs)
			o.progress.done()
			if err != nil {
				return usageOf(err)
			}
			return o.printCall(env, tool.Name, res)
		})
	}
}

const readHelp = `Reads the resource at URI (listed, or made from a template) and prints its
text; binary contents are saved to files (in --out, default the current
folder) whose names are printed. --json prints the result as sent.

` + targetHelp

func readFlags(fs *flag.FlagSet) runFunc {
	o := addCallFlags(fs, false)
	o.skip = healthcheck.ListAll
	return func(ctx context.Context, env *app.Env, args []string) error {
		return o.run(ctx, env, args, 1, 1, func(ctx context.Context, sess *healthcheck.Session, pos []string) error {
			res, err := sess.ReadResource(ctx, pos[0])
			o.progress.done()
			if err != nil {
				return err
			}
			if *o.asJSON {
				writeJSON(env.Stdout, res)
				return nil
			}
			sv := o.saver(pos[0])
			for _, c := range res.Contents {
				printResourceContents(env.Stdout, sv, c, len(res.Contents) > 1)
			}
			return sv.Err()
		})
	}
}

const promptHelp = `Gets the prompt NAME with the arguments JSON-ARGS (an object of strings)
and --arg key=value pairs, and prints its messages. Missing required
arguments and unknown ones are usage errors (exit 2), found before anything
is sent. --json prints the result as sent.

` + targetHelp

func promptFlags(fs *flag.FlagSet) runFunc {
	o := addCallFlags(fs, false)
	o.skip = healthcheck.ListTools | healthcheck.ListResources
	var kv repeated
	fs.Var(&kv, "arg", "an argument, key=value (repeatable)")
	return func(ctx context.Context, env *app.Env, args []string) error {
		return o.run(ctx, env, args, 1, 2, func(ctx context.Context, sess *healthcheck.Session, pos []string) error {
			pargs := map[string]string{}
			if len(pos) > 1 {
				if err := json.Unmarshal([]byte(pos[1]), &pargs); err != nil {
					return app.Usagef("JSON-ARGS of a prompt must be an object of strings: %v", err)
				}
			}
			for _, a := range kv {
				k, v, ok := strings.Cut(a, "=")
				if !ok || k == "" {
					return app.Usagef("--arg %q wants key=value", a)
				}
				pargs[k] = v
			}
			res, err := sess.GetPrompt(ctx, pos[0], pargs)
			o.progress.done()
			if err != nil {
				return usageOf(err)
			}
			if *o.asJSON {
				writeJSON(env.Stdout, res)
				return nil
			}
			if res.Description != "" {
				fmt.Fprintf(env.Stdout, "%s\n\n", present.Visible(res.Description))
			}
			sv := o.saver(pos[0])
			for _, m := range res.Messages {
				fmt.Fprintf(env.Stdout, "[%s]\n", present.VisibleLine(string(m.Role)))
				printContent(env.Stdout, sv, []mcp.Content{m.Content})
			}
			return sv.Err()
		})
	}
}

const completeHelp = `Asks the server (completion/complete) for the values of argument ARG of the
prompt --prompt NAME, or of the resource template --resource URI-TEMPLATE,
that complete VALUE (default ""), and prints one per line. --known
key=value passes arguments already chosen (repeatable).

` + targetHelp

func completeFlags(fs *flag.FlagSet) runFunc {
	o := addCallFlags(fs, false)
	o.skip = healthcheck.ListAll
	prompt := fs.String("prompt", "", "the prompt whose argument to complete")
	resource := fs.String("resource", "", "the resource template whose argument to complete")
	var known repeated
	fs.Var(&known, "known", "an argument already chosen, key=value (repeatable)")
	return func(ctx context.Context, env *app.Env, args []string) error {
		var ref *mcp.CompleteReference
		switch {
		case *prompt != "" && *resource != "":
			return app.Usagef("give --prompt or --resource, not both")
		case *prompt != "":
			ref = &mcp.CompleteReference{Type: "ref/prompt", Name: *prompt}
		case *resource != "":
			ref = &mcp.CompleteReference{Type: "ref/resource", URI: *resource}
		default:
			return app.Usagef("name what to complete: --prompt NAME or --resource URI-TEMPLATE")
		}
		ctxArgs := map[string]string{}
		for _, a := range known {
			k, v, ok := strings.Cut(a, "=")
			if !ok || k == "" {
				return app.Usagef("--known %q wants key=value", a)
			}
			ctxArgs[k] = v
		}
		return o.run(ctx, env, args, 1, 2, func(ctx context.Context, sess *healthcheck.Session, pos []string) error {
			value := ""
			if len(pos) > 1 {
				value = pos[1]
			}
			res, err := sess.Complete(ctx, ref, pos[0], value, ctxArgs)
			if err != nil {
				return err
			}
			if *o.asJSON {
				writeJSON(env.Stdout, res.Completion)
				return nil
			}
			for _, v := range res.Completion.Values {
				fmt.Fprintln(env.Stdout, present.VisibleLine(v))
			}
			if res.Completion.HasMore {
				fmt.Fprintf(env.Stderr, "(more values: %d in all)\n", res.Completion.Total)
			}
			return nil
		})
	}
}

// callOpts are the flags call, read, prompt and complete share.
type callOpts struct {
	cfgPath  *string
	asJSON   *bool
	timeout  *time.Duration
	elicit   *string
	sampling *string
	out      *string
	headers  repeated
	envs     repeated
	roots    repeated

	// skip names the lists the command does not need read before it asks
	// (a call needs the tools, to check its arguments; a read, nothing).
	skip healthcheck.Lists

	progress *progressLine // set by run

	cfg    *registry.Config // the config and server run works on, set by run
	target *registry.Server
}

func addCallFlags(fs *flag.FlagSet, withOut bool) *callOpts {
	o := &callOpts{
		cfgPath:  configFlag(fs),
		asJSON:   fs.Bool("json", false, "print the result as JSON, as the server sent it"),
		timeout:  fs.Duration("timeout", 2*time.Minute, "give up (and cancel the request) after this long"),
		elicit:   fs.String("elicit", "", "answer elicitation without asking: accept-defaults, decline or cancel (default: ask on a terminal, else decline)"),
		sampling: fs.String("sampling", "", "a command that answers sampling requests (request JSON on stdin, reply on stdout)"),
	}
	o.out = fs.String("out", "", "the folder where images, audio and binary resources are saved (default: the current folder)")
	fs.Var(&o.roots, "root", "a folder offered to the server as a root (repeatable)")
	fs.Var(&o.headers, "header", "with a URL: an HTTP header to send, 'Name: value' (repeatable)")
	fs.Var(&o.envs, "env", "with -- COMMAND: an environment variable to set, NAME=value (repeatable)")
	return o
}

// usageOf makes the errors found before anything was sent (an unknown
// name, arguments that do not fit) usage errors, exit 2.
func usageOf(err error) error {
	var ae *healthcheck.ArgsError
	var ue *healthcheck.UnknownError
	if errors.As(err, &ae) || errors.As(err, &ue) {
		return sessionUsage{app.UsageError{Msg: err.Error()}, err}
	}
	return err
}

// sessionUsage is a usage error found with what the server offers.
type sessionUsage struct {
	app.UsageError
	err error
}

func (e sessionUsage) Unwrap() []error { return []error{e.UsageError, e.err} }

func isSessionUsage(err error) bool {
	var su sessionUsage
	return errors.As(err, &su)
}

// callTarget splits the arguments into the server and the rest.
func (o *callOpts) callTarget(env *app.Env, args []string) (*registry.Config, *registry.Server, []string, error) {
	if dash := slices.Index(args, "--"); dash >= 0 {
		srv, err := adhocServer(args[dash:], o.headers, o.envs)
		if err != nil {
			return nil, nil, nil, err
		}
		cfg, err := o.settings(env)
		return cfg, srv, args[:dash], err
	}
	if len(args) == 0 {
		return nil, nil, nil, app.Usagef("name the server: NAME, URL, or -- COMMAND [ARGS...] after the other arguments")
	}
	if strings.Contains(args[0], "://") {
		srv, err := adhocServer(args[:1], o.headers, o.envs)
		if err != nil {
			return nil, nil, nil, err
		}
		cfg, err := o.settings(env)
		return cfg, srv, args[1:], err
	}
	if _, err := adhocServer(nil, o.headers, o.envs); err != nil {
		return nil, nil, nil, err
	}
	cfg, err := app.LoadConfig(env, *o.cfgPath, true)
	if err != nil {
		return nil, nil, nil, err
	}
	sel, err := app.SelectServers(cfg, args[:1])
	if err != nil {
		return nil, nil, nil, app.Usagef("%v", err)
	}
	return cfg, sel[0], args[1:], nil
}

// settings is the config's [settings] when --config is given, else none.
func (o *callOpts) settings(env *app.Env) (*registry.Config, error) {
	if *o.cfgPath == "" {
		return &registry.Config{}, nil
	}
	return app.LoadConfig(env, *o.cfgPath, true)
}

// run starts the target server on an engine of its own, waits for its
// session and runs fn with it and the positional arguments (between min
// and max of them), then stops the server.
func (o *callOpts) run(ctx context.Context, env *app.Env, args []string, minPos, maxPos int, fn func(context.Context, *healthcheck.Session, []string) error) error {
	if *o.timeout <= 0 {
		return app.Usagef("--timeout must be positive")
	}
	switch *o.elicit {
	case "", "accept-defaults", "decline", "cancel":
	default:
		return app.Usagef("--elicit is accept-defaults, decline or cancel, not %q", *o.elicit)
	}
	cfg, srv, pos, err := o.callTarget(env, args)
	if err != nil {
		return err
	}
	o.cfg, o.target = cfg, srv
	if len(pos) < minPos || len(pos) > maxPos {
		return app.Usagef("wrong number of arguments (%s)", strings.Join(pos, " "))
	}
	var roots []*mcp.Root
	for _, dir := range o.roots {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return app.Usagef("--root %s: %v", dir, err)
		}
		if st, err := os.Stat(abs); err != nil || !st.IsDir() {
			return app.Usagef("--root %s is not a folder", dir)
		}
		roots = append(roots, &mcp.Root{URI: (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String(), Name: filepath.Base(abs)})
	}
	o.progress = newProgressLine(env.Stderr)
	asker := newElicitor(env, *o.elicit)
	handlers := &healthcheck.ClientHandlers{
		Progress:            o.progress.show,
		Log:                 func(p *mcp.LoggingMessageParams) { o.progress.above(present.LogLine(p)) },
		Elicit:              asker.elicit,
		ElicitationComplete: asker.completed,
		Sample:              sampler(env, *o.sampling),
		Roots:               roots,
	}

	ctx, cancel := context.WithTimeout(ctx, *o.timeout)
	defer cancel()
	err = o.session(ctx, env, cfg, srv, handlers, pos, fn)
	var sre *healthcheck.SignInRequiredError
	if errors.As(err, &sre) && sre.Scope != "" && srv.IsRemote() && canSignIn(env) {
		// Step-up: the server wants a scope the sign-in lacks. Sign in
		// again asking for it, and make the request again on a new
		// connection, which reads the new sign-in.
		fmt.Fprintf(env.Stderr, "%s wants more access (scope %s): signing in again…\n", present.VisibleLine(srv.Name), present.VisibleLine(sre.Scope))
		exp, xerr := srv.Expand(env.LookupEnv)
		if xerr != nil {
			return xerr
		}
		if _, _, serr := app.SignIn(ctx, env, exp, &app.SignInOptions{
			Scopes: strings.Fields(sre.Scope),
			OnBrowser: func(authURL string) {
				fmt.Fprintf(env.Stderr, "Opening your browser. If it does not open, visit:\n  %s\n", authURL)
			},
		}); serr != nil {
			return fmt.Errorf("signing in again for scope %s: %w", sre.Scope, serr)
		}
		err = o.session(ctx, env, cfg, srv, handlers, pos, fn)
	}
	return err
}

// canSignIn reports whether a sign-in can run now: someone at a terminal,
// or $BROWSER set to open the page.
func canSignIn(env *app.Env) bool {
	if b, ok := env.LookupEnv("BROWSER"); ok && strings.TrimSpace(b) != "" {
		return true
	}
	f, ok := env.Stdin.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// session runs srv on an engine of its own, waits for its session, runs fn
// with it and stops the server.
func (o *callOpts) session(ctx context.Context, env *app.Env, cfg *registry.Config, srv *registry.Server, handlers *healthcheck.ClientHandlers, pos []string, fn func(context.Context, *healthcheck.Session, []string) error) error {
	if srv.Line > 0 && cfg != nil && cfg.Path != "" {
		// A configured server a daemon runs: use the daemon's instance.
		if handled, err := o.viaDaemon(ctx, cfg, srv, handlers, pos, fn); handled {
			var ue app.UsageError
			if errors.As(err, &ue) && isSessionUsage(err) {
				fmt.Fprintf(env.Stderr, "mcptray: %s\n", present.Visible(ue.Msg))
				return ExitError{Code: 2}
			}
			return err
		}
	}
	// The engine outlives ctx: after Ctrl-C the request is cancelled
	// first, and only then the server stopped.
	trial := app.StartTrialWith(cfg, srv, app.EngineSetup{Terminal: true, Client: handlers, Skip: o.skip}, *o.timeout)
	defer trial.Close()
	used := false
	err := trial.Use(ctx, func(ctx context.Context, s *healthcheck.Session) error {
		used = true
		return fn(ctx, s, pos)
	})
	o.progress.done()
	var nr *supervisor.NotReadyError
	var ue app.UsageError
	switch {
	case errors.As(err, &ue) && isSessionUsage(err):
		// Found with the server's lists: the command line was fine.
		fmt.Fprintf(env.Stderr, "mcptray: %s\n", present.Visible(ue.Msg))
		return ExitError{Code: 2}
	case errors.As(err, &nr):
		var sre *healthcheck.SignInRequiredError
		if errors.As(err, &sre) && sre.Scope != "" {
			return err // a step-up, for run
		}
		present.PrintNotReady(env.Stderr, nr)
		return ExitError{Code: 1}
	case err != nil && ctx.Err() != nil && !used:
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("%s did not become ready within --timeout %s", srv.Name, *o.timeout)
		}
		return errors.New("interrupted while the server was starting")
	case err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("no answer within --timeout %s: %w", *o.timeout, err)
	}
	return err
}

// printCall prints a tool's result and decides the exit status.
func (o *callOpts) printCall(env *app.Env, tool string, res *healthcheck.CallResult) error {
	if *o.asJSON {
		writeJSON(env.Stdout, res.CallToolResult)
	} else {
		sv := o.saver(tool)
		printContent(env.Stdout, sv, res.Content)
		if res.StructuredContent != nil && !hasText(res.Content) {
			b, _ := json.MarshalIndent(res.StructuredContent, "", "  ")
			fmt.Fprintf(env.Stdout, "%s\n", present.Visible(string(b)))
		}
		if sv.Err() != nil {
			return sv.Err()
		}
	}
	switch {
	case res.IsError:
		fmt.Fprintf(env.Stderr, "mcptray call: %s reported an error (isError)\n", present.VisibleLine(tool))
		return ExitError{Code: 1}
	case res.OutputError != nil:
		fmt.Fprintf(env.Stderr, "mcptray call: %s: %s\n", present.VisibleLine(tool), present.Visible(res.OutputError.Error()))
		return ExitError{Code: 1}
	}
	return nil
}

func hasText(cs []mcp.Content) bool {
	return slices.ContainsFunc(cs, func(c mcp.Content) bool { _, ok := c.(*mcp.TextContent); return ok })
}

func (o *callOpts) saver(what string) *app.Saver {
	dir := *o.out
	if dir == "" {
		dir = "."
	}
	return app.NewSaver(dir, what)
}

// printContent prints content blocks: text as text, images and audio saved
// to files, links and embedded resources described.
func printContent(w io.Writer, sv *app.Saver, cs []mcp.Content) {
	for _, c := range cs {
		switch c := c.(type) {
		case *mcp.TextContent:
			fmt.Fprintln(w, strings.TrimSuffix(present.Visible(c.Text), "\n"))
		case *mcp.ImageContent:
			fmt.Fprintf(w, "[image %s, %s: %s]\n", present.VisibleLine(c.MIMEType), byteCount(len(c.Data)), sv.Save(c.Data, c.MIMEType))
		case *mcp.AudioContent:
			fmt.Fprintf(w, "[audio %s, %s: %s]\n", present.VisibleLine(c.MIMEType), byteCount(len(c.Data)), sv.Save(c.Data, c.MIMEType))
		case *mcp.ResourceLink:
			fmt.Fprintf(w, "[resource link %s", present.VisibleLine(c.URI))
			if name := cmp.Or(c.Title, c.Name); name != "" {
				fmt.Fprintf(w, " %q", present.VisibleLine(name))
			}
			if c.MIMEType != "" {
				fmt.Fprintf(w, " %s", present.VisibleLine(c.MIMEType))
			}
			fmt.Fprintln(w, "]")
			if c.Description != "" {
				fmt.Fprintf(w, "  %s\n", present.VisibleLine(c.Description))
			}
		case *mcp.EmbeddedResource:
			if c.Resource != nil {
				printResourceContents(w, sv, c.Resource, true)
			}
		default:
			b, _ := json.Marshal(c)
			fmt.Fprintf(w, "%s\n", present.VisibleLine(string(b)))
		}
	}
}

// printResourceContents prints one resource's contents; header says
// which resource it is first.
func printResourceContents(w io.Writer, sv *app.Saver, c *mcp.ResourceContents, header bool) {
	if c.Blob != nil || c.Text == "" && c.MIMEType != "" && !strings.HasPrefix(c.MIMEType, "text/") {
		fmt.Fprintf(w, "[resource %s %s, %s: %s]\n", present.VisibleLine(c.URI), present.VisibleLine(cmp.Or(c.MIMEType, "application/octet-stream")), byteCount(len(c.Blob)), sv.Save(c.Blob, c.MIMEType))
		return
	}
	if header {
		fmt.Fprintf(w, "[resource %s", present.VisibleLine(c.URI))
		if c.MIMEType != "" {
			fmt.Fprintf(w, " %s", present.VisibleLine(c.MIMEType))
		}
		fmt.Fprintln(w, "]")
	}
	fmt.Fprintln(w, strings.TrimSuffix(present.Visible(c.Text), "\n"))
}

func byteCount(n int) string {
	if n == 1 {
		return "1 byte"
	}
	return fmt.Sprintf("%d bytes", n)
}

// viaDaemon runs fn with a session of the daemon's own instance of srv,
// through its gateway, when a daemon runs srv's config file: the call is
// then one of the server every client uses, and in its protocol trace.
// handled is false when no daemon runs that file or serves srv (fn then
// runs on an instance of the command's own).
func (o *callOpts) viaDaemon(ctx context.Context, cfg *registry.Config, srv *registry.Server, handlers *healthcheck.ClientHandlers, pos []string, fn func(context.Context, *healthcheck.Session, []string) error) (handled bool, err error) {
	sock, err := control.DefaultSocket()
	if err != nil {
		return false, nil
	}
	dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	c, err := control.Dial(dctx, &control.ClientOptions{Socket: sock})
	cancel()
	if err != nil || filepath.Clean(c.Info().ConfigPath) != filepath.Clean(cfg.Path) {
		return false, nil
	}
	conn, err := c.Connect(ctx, srv.Name, os.Getpid())
	if err != nil {
		return false, nil // not the daemon's (yet): run it here
	}
	defer conn.Close()
	// The gateway is a stdio server to its clients, whatever srv is.
	bridged := &registry.Server{Name: srv.Name, Command: "mcptray", Args: []string{"connect", srv.Name}}
	s, err := healthcheck.Connect(ctx, healthcheck.Target{Server: bridged, Stdin: conn, Stdout: conn}, &healthcheck.Options{
		ClientName: "mcptray", ClientVersion: app.Version, Client: handlers, Skip: o.skip, PreferLegacy: true,
	})
	if err != nil {
		return true, fmt.Errorf("%s, through the daemon: %w", srv.Name, err)
	}
	defer s.Close()
	err = fn(ctx, s, pos)
	o.progress.done()
	return true, err
}
