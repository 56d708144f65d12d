package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"mcptray/app"
	"mcptray/app/present"
	"mcptray/control"
	"mcptray/supervisor"
)

// The command-line front ends of a running daemon.
func init() {
	register(&command{
		name:    "status",
		args:    "[NAME...]",
		summary: "show what the running daemon's servers are doing",
		help: `Prints one line per server: state, pid, uptime, restarts and why. With
--json, an array with one object per server: the fields of "check --json"
(name, transport, status, era, serverInfo, capabilities, tools, …,
diagnostics, stderrTail) plus state, reason, pid, restarts,
uptimeSeconds, and how clients use it: start (auto, lazy or manual),
idleStopSeconds, waitsForClient (stopped, and its next client starts it),
clients, and instanceOf for a share = false server's per-session
instances (NAME#2, …). Needs a running daemon ("mcptray daemon").`,
		flags: func(fs *flag.FlagSet) func(context.Context, *app.Env, []string) error {
			asJSON := fs.Bool("json", false, "print a JSON array with one object per server")
			return func(ctx context.Context, env *app.Env, args []string) error {
				c, err := app.DialDaemon(ctx)
				if err != nil {
					return err
				}
				snap, err := c.FetchSnapshot(ctx)
				if err != nil {
					return err
				}
				states, err := pickStates(snap, args)
				if err != nil {
					return err
				}
				status := c.Status()
				if *asJSON {
					out := make([]serverReport, 0, len(states))
					for _, st := range states {
						out = append(out, newServerReport(st, true, snap.Time))
					}
					writeJSON(env.Stdout, out)
					// The array is the servers; the daemon's own trouble goes
					// where a script's reader looks for trouble.
					for _, l := range engineProblems(status) {
						fmt.Fprintf(env.Stderr, "mcptray status: %s\n", l)
					}
					return nil
				}
				info := c.Info()
				fmt.Fprintf(env.Stdout, "daemon pid %d, up %s, config %s\n", info.PID, present.RoundDur(snap.Time.Sub(info.Started)), info.ConfigPath)
				for _, l := range engineProblems(status) {
					fmt.Fprintln(env.Stdout, l)
				}
				fmt.Fprintln(env.Stdout)
				tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tSTATE\tPID\tUPTIME\tRESTARTS\tDETAIL")
				for _, st := range states {
					pid, up := "-", "-"
					if st.PID > 0 {
						pid = fmt.Sprint(st.PID)
					}
					if u := st.Uptime(snap.Time); u > 0 {
						up = present.RoundDur(u)
					}
					detail := st.Reason
					words := *st
					words.WaitsForClient = false // the reason says so
					if d := present.StateDetail(&words); d != string(st.State) {
						detail = strings.TrimPrefix(strings.TrimPrefix(d, string(st.State)), ", ") + "; " + st.Reason
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", present.VisibleCell(st.Name), st.State, pid, up, st.Restarts, present.VisibleCell(detail))
				}
				return tw.Flush()
			}
		},
	})
	register(&command{
		name:    "logs",
		args:    "NAME",
		summary: "print a server's stderr from the running daemon",
		help: `Prints the last lines (-n, default 100; 0 for every line kept) that server
NAME wrote to stderr. -f keeps printing new lines until Ctrl-C.`,
		flags: func(fs *flag.FlagSet) func(context.Context, *app.Env, []string) error {
			follow := fs.Bool("f", false, "keep printing new lines as they are written")
			n := fs.Int("n", 100, "how many of the last lines to print (0: all)")
			withTime := fs.Bool("t", false, "prefix each line with its time")
			return func(ctx context.Context, env *app.Env, args []string) error {
				if len(args) != 1 {
					return app.Usagef("name one server")
				}
				if *n < 0 {
					return app.Usagef("-n must be 0 or more, not %d", *n)
				}
				c, err := app.DialDaemon(ctx)
				if err != nil {
					return err
				}
				page, err := c.LogPage(ctx, args[0], 0)
				if err != nil {
					return err
				}
				lines := page.Lines
				if *n > 0 && len(lines) > *n {
					lines = lines[len(lines)-*n:]
				}
				print := func(l supervisor.LogLine) {
					// A server's stderr may hold terminal escapes: show them,
					// do not obey them.
					if *withTime {
						fmt.Fprintf(env.Stdout, "%s  %s\n", l.Time.Local().Format("2006-01-02 15:04:05.000"), present.VisibleLine(l.Text))
						return
					}
					fmt.Fprintln(env.Stdout, present.VisibleLine(l.Text))
				}
				for _, l := range lines {
					print(l)
				}
				if !*follow {
					return nil
				}
				return c.FollowLog(ctx, args[0], page.Next, print)
			}
		},
	})
	for _, verb := range []struct{ name, summary, past string }{
		{"start", "start servers in the running daemon", "started"},
		{"stop", "stop servers in the running daemon (they stay stopped)", "stopped"},
		{"restart", "restart servers in the running daemon", "restarted"},
	} {
		register(&command{
			name:    verb.name,
			args:    "NAME...",
			summary: verb.summary,
			help: `Waits (up to --timeout) until each server has ` + verb.past + ` and prints where it
is; exits 1 if one did not get there (failed, crash-looping, in backoff).
--no-wait returns once the daemon has the command.`,
			flags: func(fs *flag.FlagSet) func(context.Context, *app.Env, []string) error {
				noWait := fs.Bool("no-wait", false, "return without waiting for the servers")
				timeout := fs.Duration("timeout", 60*time.Second, "how long to wait for each server")
				return func(ctx context.Context, env *app.Env, args []string) error {
					if len(args) == 0 {
						return app.Usagef("name at least one server")
					}
					return runCommandVerb(ctx, env, verb.name, verb.past, args, !*noWait, *timeout)
				}
			},
		})
	}
	register(&command{
		name:    "reload",
		summary: "make the running daemon read its servers.toml again",
		help: `Added servers start, removed ones stop, changed ones restart, the rest are
left alone. A file with a syntax error changes nothing; servers with errors
are kept but not started (exit 1).`,
		flags: func(fs *flag.FlagSet) func(context.Context, *app.Env, []string) error {
			return func(ctx context.Context, env *app.Env, args []string) error {
				if len(args) > 0 {
					return app.Usagef("takes no arguments")
				}
				c, err := app.DialDaemon(ctx)
				if err != nil {
					return err
				}
				res, err := c.Reload(ctx)
				if err != nil {
					return err
				}
				for _, d := range res.Diagnostics {
					fmt.Fprintln(env.Stderr, present.Visible(d))
				}
				fmt.Fprintf(env.Stdout, "reloaded %s: %d servers\n", res.ConfigPath, res.Servers)
				if res.Errors > 0 {
					fmt.Fprintf(env.Stderr, "mcptray reload: %d errors; those servers do not run (fix them: mcptray config validate)\n", res.Errors)
					return ExitError{Code: 1}
				}
				return nil
			}
		},
	})
}

// engineProblems says, one line each, what is wrong with the engine itself:
// its config file does not load, or its edits are not followed.
func engineProblems(st control.Status) []string {
	var out []string
	if d := st.ConfigProblem; d != nil {
		out = append(out, "config does not load: "+present.VisibleLine(d.String()),
			"  the servers below run as the file last loaded; fix it and save (or run `mcptray reload`)")
	}
	if st.WatchProblem != "" {
		out = append(out, "config edits are not applied as they are saved: "+present.VisibleLine(st.WatchProblem)+"; run `mcptray reload` after an edit")
	}
	return out
}

// pickStates returns the named servers' states (all when names is empty).
func pickStates(snap supervisor.Snapshot, names []string) ([]*supervisor.ServerState, error) {
	var out []*supervisor.ServerState
	if len(names) == 0 {
		for i := range snap.Servers {
			out = append(out, &snap.Servers[i])
		}
		return out, nil
	}
	for _, n := range names {
		st := snap.Server(n)
		if st == nil {
			var known []string
			for _, s := range snap.Servers {
				known = append(known, s.Name)
			}
			return nil, app.Usagef("the daemon has no server named %q (it has: %s)", n, strings.Join(known, ", "))
		}
		out = append(out, st)
	}
	return out, nil
}

// runCommandVerb sends start, stop or restart for each name and, with wait,
// follows each server until it settles.
func runCommandVerb(ctx context.Context, env *app.Env, verb, past string, names []string, wait bool, timeout time.Duration) error {
	c, err := app.DialDaemon(ctx)
	if err != nil {
		return err
	}
	before, err := c.FetchSnapshot(ctx)
	if err != nil {
		return err
	}
	if _, err := pickStates(before, names); err != nil {
		return err
	}
	failed := 0
	for _, name := range names {
		if err := c.Command(ctx, name, verb); err != nil {
			fmt.Fprintf(env.Stderr, "mcptray %s: %s\n", verb, present.Visible(err.Error()))
			failed++
			continue
		}
		if !wait {
			fmt.Fprintf(env.Stdout, "%s: %s requested\n", name, verb)
			continue
		}
		old := before.Server(name)
		st, err := settle(ctx, c, name, verb, old, timeout)
		if err != nil {
			fmt.Fprintf(env.Stderr, "mcptray %s: %s: %s\n", verb, name, present.Visible(err.Error()))
			failed++
			continue
		}
		switch {
		case st.State == supervisor.StateStopped && verb == "stop":
			fmt.Fprintf(env.Stdout, "%s: stopped\n", name)
		case st.State == supervisor.StateStopped || !st.State.Alive():
			fmt.Fprintf(env.Stderr, "mcptray %s: %s is %s: %s\n", verb, name, st.State, present.VisibleLine(st.Reason))
			if d := st.Diagnosis; d != nil && d.Fix != "" {
				fmt.Fprintf(env.Stderr, "  fix: %s\n", present.Visible(d.Fix))
			}
			failed++
		case verb == "restart" && old.PID > 0 && st.PID > 0:
			fmt.Fprintf(env.Stdout, "%s: %s, %s (pid %d → %d)\n", name, past, st.State, old.PID, st.PID)
		case st.PID > 0:
			fmt.Fprintf(env.Stdout, "%s: %s, %s (pid %d)\n", name, past, st.State, st.PID)
		default:
			fmt.Fprintf(env.Stdout, "%s: %s, %s\n", name, past, st.State)
		}
	}
	if failed > 0 {
		return ExitError{Code: 1}
	}
	return nil
}

// settle waits until server name has done verb: stopped for stop; for
// start and restart, a new process or connection that is up, or a state it
// will not leave by itself.
func settle(ctx context.Context, c *control.Client, name, verb string, old *supervisor.ServerState, timeout time.Duration) (*supervisor.ServerState, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last *supervisor.ServerState
	for {
		snap, err := c.FetchSnapshot(ctx)
		if err == nil {
			st := snap.Server(name)
			if st == nil {
				return nil, errors.New("removed from the daemon's config")
			}
			last = st
			if done(st, verb, old) {
				return st, nil
			}
		}
		select {
		case <-ctx.Done():
			if last != nil {
				return nil, fmt.Errorf("still %s after %s (%s)", last.State, timeout, last.Reason)
			}
			return nil, fmt.Errorf("no answer from the daemon: %w", err)
		case <-tick.C:
		}
	}
}

func done(st *supervisor.ServerState, verb string, old *supervisor.ServerState) bool {
	// A state entered after the command is the command's outcome; the old
	// state may still show while the engine takes the command up.
	changed := st.Since.After(old.Since)
	if verb == "stop" {
		return st.State == supervisor.StateStopped || st.State == supervisor.StateFailed
	}
	switch st.State {
	case supervisor.StateStopped, supervisor.StateFailed, supervisor.StateCrashLooping, supervisor.StateBackoff, supervisor.StateSignIn:
		return changed
	case supervisor.StateReady, supervisor.StateRunning, supervisor.StateDegraded:
		return verb == "start" || !st.StartedAt.Equal(old.StartedAt)
	}
	return false
}
