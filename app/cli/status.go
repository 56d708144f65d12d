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
	"mcptray/internal/human"
	"mcptray/supervisor"
)

const statusHelp = `Prints one line per server: state, pid, uptime, restarts and why. With
--json, an array with one object per server: the fields of "check --json"
(name, transport, status, era, serverInfo, capabilities, tools, …,
diagnostics, stderrTail) plus state, reason, pid, restarts,
uptimeSeconds, and how clients use it: start (auto, lazy or manual),
idleStopSeconds, waitsForClient (stopped, and its next client starts it),
clients, and instanceOf for a share = false server's per-session
instances (NAME#2, …). Needs a running daemon ("mcptray daemon").`

func statusFlags(fs *flag.FlagSet) runFunc {
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
		fmt.Fprintf(env.Stdout, "daemon pid %d, up %s, config %s\n", info.PID, human.Duration(snap.Time.Sub(info.Started)), info.ConfigPath)
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
				up = human.Duration(u)
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
