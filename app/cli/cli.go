// Package cli is mcptray's command line: one file per command, named after
// it, each a named run function over the application layer (package app);
// the command table (commands.go) is data. The words it prints come from
// app/present, shared with the desktop app; cli never imports app/gui.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"

	"mcptray/app"
	"mcptray/app/present"
)

// command is one subcommand. Subcommands with children (config ...) set
// children instead of run.
type command struct {
	name     string
	args     string // argument synopsis after the flags, e.g. "[NAME...]"
	summary  string
	help     string // longer text shown by --help
	clients  bool   // the help ends with the table of clients (see helpText)
	flags    func(fs *flag.FlagSet) runFunc
	children []*command
	hidden   bool
	// command: the arguments after "--" are a command line of their own,
	// handed to run after a "--" (names -- command args).
	command bool
}

// helpText is the command's longer text. The table of clients is built
// when asked for, not when the program starts.
func (c *command) helpText() string {
	h := strings.TrimSpace(c.help)
	if c.clients {
		h += "\n\n" + strings.TrimSpace(clientTable())
	}
	return h
}

// runFunc runs a command with the arguments its flags left.
type runFunc func(ctx context.Context, env *app.Env, args []string) error

// Main runs mcptray with args (without the program name) and returns the exit
// code: 0 success, 1 failure, 2 usage or config errors.
func Main(args []string, env *app.Env) int {
	if env.LookupEnv == nil {
		env.LookupEnv = os.LookupEnv
	}
	if env.Exe == "" {
		env.Exe, _ = os.Executable()
	}
	ctx, stop := signalContext(context.Background())
	defer stop()
	return run(ctx, args, env)
}

// signalContext is signal.NotifyContext for SIGINT and SIGTERM, with the
// signals taken over beside the command rather than before it: Go's first
// signal.Notify waits for the runtime to start a thread of its own for the
// signal mask, a quarter of a millisecond that a one-server check would
// otherwise spend before it starts its server. A signal in that moment
// ends the process as one a moment earlier, during Go's own start, does.
// Once a signal came, the next ones are caught and do nothing until stop,
// as with NotifyContext.
func signalContext(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	notified := make(chan struct{})
	go func() {
		signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
		close(notified)
		select {
		case s := <-ch:
			cancel(errors.New(s.String() + " signal received"))
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		cancel(context.Canceled)
		// Handing the signals back waits on that thread too (a tenth of a
		// millisecond): the command is done, and does not wait for it.
		go func() {
			<-notified
			signal.Stop(ch)
		}()
	}
}

func run(ctx context.Context, args []string, env *app.Env) int {
	global, args, err := globalFlags(args)
	if err != nil {
		fmt.Fprintf(env.Stderr, "mcptray: %v\n\n", err)
		printUsage(env.Stderr, nil, commands)
		return 2
	}
	if len(args) == 0 {
		return launchDesktop(env, global)
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		if len(args) > 1 {
			return run(ctx, append(args[1:], "--help"), env)
		}
		printUsage(env.Stdout, nil, commands)
		return 0
	case "-v", "--version":
		args = []string{"version"}
	}
	if args[0] != "gui" {
		// The desktop build's toolkit locks main to the main thread as it
		// initialises (its event loop must run there). A command does not
		// need that, and a locked goroutine that blocks wakes by a hand-off
		// to its own thread each time. (No lock, as in the headless build:
		// a no-op.)
		runtime.UnlockOSThread()
	}
	return dispatch(ctx, nil, commands, args, env, global)
}

// globalFlags takes the flags given before the command ("mcptray --config
// FILE check"): only --config, which then goes to the command as if given
// after it. It returns them as command-line arguments and the rest.
func globalFlags(args []string) (global, rest []string, err error) {
	for len(args) > 0 {
		name, value, hasValue := strings.Cut(strings.TrimLeft(args[0], "-"), "=")
		if !strings.HasPrefix(args[0], "-") || name != "config" {
			break
		}
		if !hasValue {
			if len(args) < 2 || args[1] == "" {
				return nil, nil, errors.New("--config needs a file: mcptray --config FILE [command]")
			}
			value, args = args[1], args[1:]
		}
		if value == "" {
			return nil, nil, errors.New("--config needs a file: mcptray --config FILE [command]")
		}
		global = append(global, "--config", value)
		args = args[1:]
	}
	return global, args, nil
}

func dispatch(ctx context.Context, parents []string, list []*command, args []string, env *app.Env, global []string) int {
	var c *command
	for _, cand := range list {
		if cand.name == args[0] {
			c = cand
		}
	}
	if c == nil {
		fmt.Fprintf(env.Stderr, "mcptray: unknown command %q\n\n", strings.Join(append(slices.Clone(parents), args[0]), " "))
		printUsage(env.Stderr, parents, list)
		return 2
	}
	path := append(slices.Clone(parents), c.name)
	if c.children != nil {
		if len(args) < 2 || args[1] == "-h" || args[1] == "--help" || args[1] == "help" {
			w := env.Stdout
			code := 0
			if len(args) < 2 {
				w, code = env.Stderr, 2
				fmt.Fprintf(w, "mcptray %s: which one?\n\n", strings.Join(path, " "))
			}
			printUsage(w, path, c.children)
			return code
		}
		return dispatch(ctx, path, c.children, args[1:], env, global)
	}
	fs := flag.NewFlagSet("mcptray "+strings.Join(path, " "), flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	runFn := c.flags(fs)
	printHelp := func(w io.Writer) {
		fmt.Fprintf(w, "Usage: mcptray %s", strings.Join(path, " "))
		hasFlags := false
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprint(w, " [flags]")
		}
		if c.args != "" {
			fmt.Fprint(w, " "+c.args)
		}
		fmt.Fprintf(w, "\n\n%s\n", c.summary)
		if h := c.helpText(); h != "" {
			fmt.Fprintf(w, "\n%s\n", h)
		}
		if hasFlags {
			fmt.Fprintln(w, "\nFlags:")
			fs.SetOutput(w)
			fs.PrintDefaults()
			fs.SetOutput(io.Discard)
		}
	}
	for i := 0; i < len(global); i += 2 {
		if fs.Lookup(strings.TrimLeft(global[i], "-")) == nil {
			fmt.Fprintf(env.Stderr, "mcptray %s: %s given before the command, but this command has no such flag\n\n", strings.Join(path, " "), global[i])
			printHelp(env.Stderr)
			return 2
		}
	}
	// Global flags come first, so the command's own (later) win.
	if err := fs.Parse(interleave(fs, append(slices.Clone(global), args[1:]...), c.command)); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printHelp(env.Stdout)
			return 0
		}
		fmt.Fprintf(env.Stderr, "mcptray %s: %v\n\n", strings.Join(path, " "), err)
		printHelp(env.Stderr)
		return 2
	}
	err := runFn(ctx, env, fs.Args())
	var ue app.UsageError
	var ee ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.Code
	case errors.As(err, &ue):
		fmt.Fprintf(env.Stderr, "mcptray %s: %s\n\n", strings.Join(path, " "), ue.Msg)
		printHelp(env.Stderr)
		return 2
	default:
		fmt.Fprintf(env.Stderr, "mcptray %s: %s\n", strings.Join(path, " "), present.Visible(err.Error()))
		var ce app.ConfigError
		if errors.As(err, &ce) {
			return 2
		}
		return 1
	}
}

// interleave lets flags follow positional arguments ("check demo --json"),
// which the flag package alone stops at. "--" ends flag parsing; with
// keepDash it stays among the positional arguments, before what follows it.
func interleave(fs *flag.FlagSet, args []string, keepDash bool) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			if keepDash {
				pos = append(pos, a)
			}
			pos = append(pos, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		if f := fs.Lookup(name); f != nil {
			if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
				continue
			}
			if i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
		}
	}
	return append(append(flags, "--"), pos...)
}

func printUsage(w io.Writer, parents []string, list []*command) {
	if len(parents) == 0 {
		fmt.Fprintf(w, "mcptray %s: run and check MCP servers on this machine.\n\n", app.Version)
		fmt.Fprintln(w, "Usage: mcptray [--config FILE] [command] [flags]")
		fmt.Fprintln(w, "With no command, mcptray starts the desktop app (the headless build has none).")
		fmt.Fprintln(w, "--config before the command is the command's own --config (or the desktop")
		fmt.Fprintln(w, "app's, with no command).")
	} else {
		fmt.Fprintf(w, "Usage: mcptray %s <command> [flags]\n", strings.Join(parents, " "))
	}
	fmt.Fprintln(w, "\nCommands:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range list {
		if !c.hidden {
			fmt.Fprintf(tw, "  %s\t%s\n", c.name, c.summary)
		}
	}
	tw.Flush()
	fmt.Fprintf(w, "\nRun 'mcptray %s --help' for a command's flags.\n", strings.Join(append(slices.Clone(parents), "COMMAND"), " "))
}

// ExitError carries an exit code to Main without printing anything more.
type ExitError struct{ Code int }

func (e ExitError) Error() string { return fmt.Sprintf("exit %d", e.Code) }
