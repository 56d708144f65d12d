package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/healthcheck"
	"mcptray/registry"
	"mcptray/supervisor"
)

// Check-specific engine tuning: a check must not wait on servers that ignore
// stdin EOF, nor leave log files of its own, nor retry for long.
const (
	checkStopGrace = 200 * time.Millisecond
	checkKillGrace = time.Second
)

// RunCheck runs the engine until every server has settled (ready or
// degraded with one probe done, or failed) or timeout passes, then stops it
// and returns the last state of each server, in order.
func RunCheck(ctx context.Context, cfg *registry.Config, servers []*registry.Server, timeout time.Duration) []supervisor.ServerState {
	return runCheckWith(ctx, NewEngineOptions(cfg, EngineSetup{Terminal: true, Client: CheckHandlers()}), servers, timeout)
}

// CheckHandlers are the client a check is to a server: it declares what
// the daemon's gateway declares (sampling, elicitation, roots), so that
// a check lists what clients reach through mcptray (a server can offer
// some tools only to a client that can answer them: server-everything
// lists 17 tools so, 13 otherwise). What the server asks during a check
// has no person to answer it: an elicitation is declined, a sampling
// request refused, and the roots are none.
func CheckHandlers() *healthcheck.ClientHandlers {
	return &healthcheck.ClientHandlers{
		Elicit: func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
		Sample: func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			return nil, errCheckSampling
		},
		ListRoots: func(context.Context) (*mcp.ListRootsResult, error) {
			return &mcp.ListRootsResult{Roots: []*mcp.Root{}}, nil
		},
	}
}

var errCheckSampling = errors.New("mcptray is checking this server: there is no model to sample from during a check")

// CheckServer checks one server that need not be in any config (the
// desktop app's form tests what it holds before saving): the same run as
// `mcptray check`, with the engine options the desktop app runs servers
// with (cfg's settings; nil for the defaults).
func CheckServer(ctx context.Context, cfg *registry.Config, s *registry.Server, timeout time.Duration) supervisor.ServerState {
	if cfg == nil {
		cfg = &registry.Config{}
	}
	c := s.Clone()
	c.Start, c.Autostart, c.Disabled = registry.StartAuto, true, false
	return runCheckWith(ctx, NewEngineOptions(cfg, EngineSetup{Client: CheckHandlers()}), []*registry.Server{c}, timeout)[0]
}

func runCheckWith(ctx context.Context, opts *supervisor.Options, servers []*registry.Server, timeout time.Duration) []supervisor.ServerState {
	opts.StopGrace = checkStopGrace
	opts.ProbeAtReady = true
	opts.KillGrace = checkKillGrace
	opts.NoLogFiles = true
	// The handshake gives up a little before the check does, so a silent
	// server gets the health check's own diagnosis (nothing written, or
	// non-JSON) rather than a bare "gave up".
	// The same margin bounds every probe: an unanswered probe is then a
	// probe-timeout the check reports, not a server "still ready" when the
	// check gave up.
	limit := timeout - min(timeout/10, 2*time.Second)
	if opts.StartupTimeout <= 0 || opts.StartupTimeout > limit {
		opts.StartupTimeout = limit
	}
	began := time.Now()
	opts.Deadline = began.Add(limit)
	sup := supervisor.New(servers, opts)

	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = sup.Run(runCtx)
	}()

	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	final := map[string]supervisor.ServerState{}
	var seen supervisor.Snapshot // the last one taken before a cancel
	for len(final) < len(servers) {
		if ctx.Err() != nil {
			interruptedAll(final, seen, sup.Snapshot(), context.Cause(ctx), time.Since(began))
			break
		}
		seen = sup.Snapshot()
		for _, st := range seen.Servers {
			if _, ok := final[st.Name]; !ok && settled(&st) {
				final[st.Name] = st
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
			// Said at the top of the loop.
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

// interruptedAll fills final for the servers without an outcome when the
// check was stopped (Ctrl-C, a signal, a cancel). The engine stops its
// servers as the check's own context ends, so now (taken after the stop)
// may show that stop, not the server: a server that settled on its own
// keeps that outcome; the others are interrupted in the state seen (taken
// before the stop) gave them.
func interruptedAll(final map[string]supervisor.ServerState, seen, now supervisor.Snapshot, cause error, took time.Duration) {
	before := map[string]supervisor.ServerState{}
	for _, st := range seen.Servers {
		before[st.Name] = st
	}
	for _, st := range now.Servers {
		if _, ok := final[st.Name]; ok {
			continue
		}
		if settled(&st) && st.State != supervisor.StateStopping && st.State != supervisor.StateStopped {
			final[st.Name] = st
			continue
		}
		if b, ok := before[st.Name]; ok {
			st = b
		}
		final[st.Name] = interrupted(st, cause, took)
	}
}

// interrupted is the state of a server that had no outcome when the check
// was stopped by cause (a signal, a cancel) after took. A server that was
// ready but not yet probed stays ready: its handshake and discovery are
// done.
func interrupted(st supervisor.ServerState, cause error, took time.Duration) supervisor.ServerState {
	if st.State == supervisor.StateReady || st.State == supervisor.StateDegraded {
		return st
	}
	by := "cancelled"
	if cause != nil && !errors.Is(cause, context.Canceled) {
		by = fmt.Sprintf("stopped (%v)", cause) // "interrupt signal received"
	}
	d := &healthcheck.Diagnosis{
		Code:    healthcheck.CodeInterrupted,
		Message: fmt.Sprintf("The check was %s after %s, while %s was %s: it has no outcome yet.", by, took.Round(time.Millisecond), st.Name, st.State),
		Fix:     "Run the check again and let it finish: it gives up on a server after --timeout (30s by default) and then says why.",
	}
	if st.Diagnosis != nil {
		// What an earlier attempt said stays as evidence.
		d.Evidence = append(d.Evidence, "before: "+st.Diagnosis.Message)
	}
	st.Diagnosis = d
	return st
}

// settled reports whether a server's check has an outcome.
func settled(st *supervisor.ServerState) bool {
	switch st.State {
	case supervisor.StateReady, supervisor.StateDegraded:
		return st.Probes.Count > 0 || st.Probes.ConsecutiveFailures > 0
	case supervisor.StateFailed, supervisor.StateCrashLooping, supervisor.StateUnhealthy, supervisor.StateSignIn:
		return true
	case supervisor.StateBackoff:
		// A failed start: its diagnosis is the outcome.
		return true
	case supervisor.StateStopped:
		return st.LastExit != nil || st.Diagnosis != nil
	}
	return false
}

// timedOut is a server not settled when the check gave up.
func timedOut(st supervisor.ServerState, timeout time.Duration) supervisor.ServerState {
	if st.State == supervisor.StateReady || st.State == supervisor.StateDegraded {
		// Connected, but its probe had no answer: not ready.
		st.State = supervisor.StateUnhealthy
		st.Diagnosis = &healthcheck.Diagnosis{
			Code:    healthcheck.CodeProbeTimeout,
			Message: fmt.Sprintf("%s answered the handshake, but its liveness probe had no answer when the check gave up after %s.", st.Name, timeout),
			Fix:     "Run the check again with a longer --timeout, or look at the server's stderr below.",
		}
		return st
	}
	if st.Diagnosis == nil {
		st.Diagnosis = &healthcheck.Diagnosis{
			Code:    healthcheck.CodeHandshakeTimeout,
			Message: fmt.Sprintf("%s was still %s when the check gave up after %s.", st.Name, st.State, timeout),
			Fix:     "Run the check again with a longer --timeout, or look at the server's stderr below.",
		}
	}
	return st
}
