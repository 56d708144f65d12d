package app

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"mcptray/healthcheck"
	"mcptray/registry"
	"mcptray/supervisor"
)

func init() {
	register(&command{
		name:    "check",
		args:    "[NAME...]",
		summary: "start, handshake, discover and probe servers once; report what works and why not",
		help: `Runs the selected servers (default: every enabled one) through the same
engine as the desktop app, all at once: spawn or connect, protocol era and
version, handshake, discovery (tools, resources, prompts) and one liveness
probe. Prints the result, stops everything it started, and exits:
  0  every selected server is ready
  1  at least one is not (degraded, failed, or still starting at --timeout)
  2  usage or config errors

--json prints an array with one object per server: name, transport, status,
era, protocolVersion, serverInfo, capabilities, instructions, tools,
resources, resourceTemplates, prompts, latencyMs {connect, probe},
diagnostics [{code, message, evidence, fix}] and stderrTail. Env and header
values never appear in the output.`,
		flags: func(fs *flag.FlagSet) func(context.Context, *Env, []string) error {
			cfgPath := configFlag(fs)
			asJSON := fs.Bool("json", false, "print the results as a JSON array")
			timeout := fs.Duration("timeout", 30*time.Second, "give up on servers not settled after this long")
			return func(ctx context.Context, env *Env, args []string) error {
				if *timeout <= 0 {
					return usagef("--timeout must be positive")
				}
				cfg, err := LoadConfig(env, *cfgPath, *asJSON)
				if err != nil {
					return err
				}
				servers, err := checkSelection(cfg, args)
				if err != nil {
					return err
				}
				results := runCheck(ctx, cfg, servers, *timeout)
				if *asJSON {
					now := time.Now()
					out := make([]serverReport, len(results))
					for i := range results {
						out[i] = newServerReport(&results[i], false, now)
					}
					writeJSON(env.Stdout, out)
				} else {
					printCheckTable(env.Stdout, results)
				}
				for _, r := range results {
					if r.State != supervisor.StateReady {
						return ExitError{1}
					}
				}
				return nil
			}
		},
	})
}

// checkSelection is the named servers, or every enabled one. A named server
// is checked even when disabled or set not to autostart.
func checkSelection(cfg *registry.Config, names []string) ([]*registry.Server, error) {
	sel, err := selectServers(cfg, names)
	if err != nil {
		return nil, err
	}
	var out []*registry.Server
	for _, s := range sel {
		if s.Disabled && len(names) == 0 {
			continue
		}
		c := s.Clone()
		c.Autostart, c.Disabled = true, false
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, configError{fmt.Errorf("%s has no enabled servers to check", cfg.Path)}
	}
	return out, nil
}

// Check-specific engine tuning: a check must not wait on servers that ignore
// stdin EOF, nor leave log files of its own, nor retry for long.
const (
	checkStopGrace = 200 * time.Millisecond
	checkKillGrace = time.Second
)

// runCheck runs the engine until every server has settled (ready or
// degraded with one probe done, or failed) or timeout passes, then stops it
// and returns the last state of each server, in order.
func runCheck(ctx context.Context, cfg *registry.Config, servers []*registry.Server, timeout time.Duration) []supervisor.ServerState {
	return runCheckWith(ctx, terminalEngineOptions(cfg), servers, timeout)
}

// CheckServer checks one server that need not be in any config (the
// desktop app's form tests what it holds before saving): the same run as
// `mcptray check`, with the engine options the desktop app runs servers
// with (cfg's settings; nil for the defaults).
func CheckServer(ctx context.Context, cfg *registry.Config, s *registry.Server, timeout time.Duration) supervisor.ServerState {
	if cfg == nil {
		cfg = &registry.Config{}
	}
	c := s.Clone()
	c.Autostart, c.Disabled = true, false
	return runCheckWith(ctx, EngineOptions(cfg), []*registry.Server{c}, timeout)[0]
}

func runCheckWith(ctx context.Context, opts *supervisor.Options, servers []*registry.Server, timeout time.Duration) []supervisor.ServerState {
	opts.StopGrace = checkStopGrace
	opts.KillGrace = checkKillGrace
	opts.NoLogFiles = true
	// The handshake gives up a little before the check does, so a silent
	// server gets the health check's own diagnosis (nothing written, or
	// non-JSON) rather than a bare "gave up".
	if limit := timeout - min(timeout/10, 2*time.Second); opts.StartupTimeout <= 0 || opts.StartupTimeout > limit {
		opts.StartupTimeout = limit
	}
	sup := supervisor.New(servers, opts)

	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = sup.Run(runCtx)
	}()

	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	probed := map[string]bool{} // servers asked for their first probe
	final := map[string]supervisor.ServerState{}
	for len(final) < len(servers) {
		snap := sup.Snapshot()
		for _, st := range snap.Servers {
			if _, ok := final[st.Name]; ok {
				continue
			}
			switch {
			case settled(&st):
				final[st.Name] = st
			case (st.State == supervisor.StateReady || st.State == supervisor.StateDegraded) && !probed[st.Name]:
				// The handshake is done; probe now rather than after the
				// probe interval.
				probed[st.Name] = true
				_ = sup.CheckNow(st.Name)
			}
		}
		if len(final) == len(servers) {
			break
		}
		select {
		case <-sup.Changes():
		case <-deadline.C:
			for _, st := range sup.Snapshot().Servers {
				if _, ok := final[st.Name]; !ok {
					final[st.Name] = timedOut(st, timeout)
				}
			}
		case <-ctx.Done():
			for _, st := range sup.Snapshot().Servers {
				if _, ok := final[st.Name]; !ok {
					final[st.Name] = st
				}
			}
		}
	}
	stop()
	<-done
	out := make([]supervisor.ServerState, 0, len(servers))
	for _, s := range servers {
		out = append(out, final[s.Name])
	}
	return out
}

// settled reports whether a server's check has an outcome.
func settled(st *supervisor.ServerState) bool {
	switch st.State {
	case supervisor.StateReady, supervisor.StateDegraded:
		return st.Probes.Count > 0 || st.Probes.ConsecutiveFailures > 0
	case supervisor.StateFailed, supervisor.StateCrashLooping, supervisor.StateUnhealthy:
		return true
	case supervisor.StateBackoff:
		// A failed start: its diagnosis is the outcome.
		return true
	case supervisor.StateStopped:
		return st.LastExit != nil || st.Diagnosis != nil
	}
	return false
}

// timedOut is a server still starting when the check gave up.
func timedOut(st supervisor.ServerState, timeout time.Duration) supervisor.ServerState {
	if st.Diagnosis == nil {
		st.Diagnosis = &healthcheck.Diagnosis{
			Code:    healthcheck.CodeHandshakeTimeout,
			Message: fmt.Sprintf("%s was still %s when the check gave up after %s.", st.Name, st.State, timeout),
			Fix:     "Run the check again with a longer --timeout, or look at the server's stderr below.",
		}
	}
	return st
}

func printCheckTable(w io.Writer, results []supervisor.ServerState) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATUS\tPROTOCOL\tSERVER\tTOOLS/RES/PROMPTS\tLATENCY\tDIAGNOSIS")
	var details []string
	for i := range results {
		st := &results[i]
		proto, server, counts, latency := "–", "–", "–", "–"
		if r := st.Report; r != nil {
			proto = string(r.Era) + " " + r.ProtocolVersion
			server = strings.TrimSpace(r.ServerInfo.Name + " " + r.ServerInfo.Version)
			counts = fmt.Sprintf("%d/%d/%d", len(r.Tools), len(r.Resources)+len(r.ResourceTemplates), len(r.Prompts))
			latency = FormatLatency(r.ConnectLatency)
		}
		if st.Probes.Count > 0 {
			latency += " / " + FormatLatency(st.Probes.Last)
		}
		rep := newServerReport(st, false, time.Time{})
		diag := "–"
		if len(rep.Diagnostics) > 0 {
			d := rep.Diagnostics[0]
			diag = string(d.Code)
			details = append(details, checkDetail(st.Name, rep))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", st.Name, rep.Status, proto, server, counts, latency, diag)
	}
	tw.Flush()
	if len(details) > 0 {
		fmt.Fprintln(w)
		fmt.Fprint(w, strings.Join(details, "\n"))
	}
}

// checkDetail explains a server's diagnoses under the table.
func checkDetail(name string, rep serverReport) string {
	var b strings.Builder
	for _, d := range rep.Diagnostics {
		fmt.Fprintf(&b, "%s: %s: %s\n", name, d.Code, d.Message)
		for _, e := range d.Evidence {
			fmt.Fprintf(&b, "    %s\n", e)
		}
		if d.Fix != "" {
			fmt.Fprintf(&b, "    fix: %s\n", d.Fix)
		}
	}
	if rep.Status != "ready" && len(rep.StderrTail) > 0 {
		fmt.Fprintf(&b, "    last stderr lines:\n")
		tail := rep.StderrTail
		if len(tail) > 5 {
			tail = tail[len(tail)-5:]
		}
		for _, l := range tail {
			fmt.Fprintf(&b, "      %s\n", l)
		}
	}
	return b.String()
}
