//go:build unix

package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"mcptray/healthcheck"
	"mcptray/registry"
)

// fakeChecker hands out fakeSessions; connect decides per attempt n (0-based).
type fakeChecker struct {
	mu      sync.Mutex
	targets []healthcheck.Target
	connect func(ctx context.Context, t healthcheck.Target, n int) (Session, error)
}

func (f *fakeChecker) Connect(ctx context.Context, t healthcheck.Target) (Session, error) {
	f.mu.Lock()
	n := len(f.targets)
	f.targets = append(f.targets, t)
	f.mu.Unlock()
	return f.connect(ctx, t, n)
}

func (f *fakeChecker) attempts() []healthcheck.Target {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]healthcheck.Target(nil), f.targets...)
}

type fakeSession struct {
	report *healthcheck.Report
	probe  func(ctx context.Context) (time.Duration, error)
	closed atomic.Int32
}

func (s *fakeSession) Report() *healthcheck.Report { return s.report }
func (s *fakeSession) Close() error                { s.closed.Add(1); return nil }
func (s *fakeSession) Probe(ctx context.Context) (time.Duration, error) {
	if s.probe == nil {
		return 3 * time.Millisecond, nil
	}
	return s.probe(ctx)
}

func report(era healthcheck.Era) *healthcheck.Report {
	return &healthcheck.Report{Era: era, ProtocolVersion: "2025-11-25", ServerInfo: healthcheck.ServerInfo{Name: "fake", Version: "1.0"},
		Capabilities: json.RawMessage(`{}`)}
}

func healthOptions(t *testing.T, c Checker) *Options {
	o := testOptions(t)
	o.Checker = c
	o.ProbeInterval = 20 * time.Millisecond
	o.ProbeTimeout = 200 * time.Millisecond
	o.StartupTimeout = 300 * time.Millisecond
	o.BackoffBase = 10 * time.Millisecond
	return o
}

func TestHealthReady(t *testing.T) {
	var sessions []*fakeSession
	var mu sync.Mutex
	fc := &fakeChecker{connect: func(ctx context.Context, tg healthcheck.Target, n int) (Session, error) {
		if tg.Stdin == nil || tg.Stdout == nil || tg.Exited == nil {
			return nil, errors.New("stdio target without pipes")
		}
		s := &fakeSession{report: report(healthcheck.EraModern)}
		mu.Lock()
		sessions = append(sessions, s)
		mu.Unlock()
		return s, nil
	}}
	s := New([]*registry.Server{childServer(t, "srv", "serve")}, healthOptions(t, fc))
	runSup(t, s)
	st := waitState(t, s, "srv", "ready with probes", func(st *ServerState) bool { return st.State == StateReady && st.Probes.Count >= 3 })
	if st.Report == nil || st.Era != healthcheck.EraModern || st.Diagnosis != nil {
		t.Errorf("report %v era %q diag %v", st.Report, st.Era, st.Diagnosis)
	}
	if st.Probes.Median != 3*time.Millisecond || st.Probes.ConsecutiveFailures != 0 || len(st.Probes.Recent) < 3 {
		t.Errorf("probe stats %+v", st.Probes)
	}
	if !strings.Contains(st.Reason, "fake 1.0 ready") {
		t.Errorf("reason %q", st.Reason)
	}
	s.Stop("srv")
	waitState(t, s, "srv", "stopped", inState(StateStopped))
	mu.Lock()
	defer mu.Unlock()
	if len(sessions) != 1 || sessions[0].closed.Load() == 0 {
		t.Errorf("the session was not closed on stop")
	}
}

func TestHealthPaths(t *testing.T) {
	failProbe := func(ctx context.Context) (time.Duration, error) { return 0, errors.New("method not found") }
	hangProbe := func(ctx context.Context) (time.Duration, error) { <-ctx.Done(); return 0, ctx.Err() }
	tests := []struct {
		name    string
		connect func(ctx context.Context, tg healthcheck.Target, n int) (Session, error)
		state   State // reached after the first attempt
		code    healthcheck.Code
	}{
		{"degraded", func(ctx context.Context, tg healthcheck.Target, n int) (Session, error) {
			r := report(healthcheck.EraLegacy)
			r.Diagnoses = []healthcheck.Diagnosis{{Code: healthcheck.CodeListFailed, Message: "tools/list failed"}}
			return &fakeSession{report: r}, nil
		}, StateDegraded, healthcheck.CodeListFailed},
		{"handshake error", func(ctx context.Context, tg healthcheck.Target, n int) (Session, error) {
			return nil, &healthcheck.Diagnosis{Code: healthcheck.CodeStdoutNoise, Message: "the server printed non-JSON on stdout"}
		}, StateBackoff, healthcheck.CodeStdoutNoise},
		{"plain error", func(ctx context.Context, tg healthcheck.Target, n int) (Session, error) {
			return nil, errors.New("EOF")
		}, StateBackoff, healthcheck.CodeNotMCP},
		{"startup timeout", func(ctx context.Context, tg healthcheck.Target, n int) (Session, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}, StateBackoff, healthcheck.CodeHandshakeTimeout},
		{"probes fail", func(ctx context.Context, tg healthcheck.Target, n int) (Session, error) {
			return &fakeSession{report: report(healthcheck.EraModern), probe: failProbe}, nil
		}, StateBackoff, healthcheck.CodeProbeFailed},
		{"probe hangs", func(ctx context.Context, tg healthcheck.Target, n int) (Session, error) {
			return &fakeSession{report: report(healthcheck.EraModern), probe: hangProbe}, nil
		}, StateBackoff, healthcheck.CodeProbeTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fc := &fakeChecker{connect: tt.connect}
			s := New([]*registry.Server{childServer(t, "srv", "serve")}, healthOptions(t, fc))
			runSup(t, s)
			waitState(t, s, "srv", string(tt.state), func(st *ServerState) bool {
				return st.State == tt.state && st.Diagnosis != nil && st.Diagnosis.Code == tt.code
			})
			if tt.state == StateBackoff {
				// A failed start stops the process and tries again.
				waitFirstExit(t, fc)
				waitState(t, s, "srv", "a retry", func(st *ServerState) bool { return st.Restarts >= 1 && len(fc.attempts()) >= 2 })
			}
		})
	}
}

// waitFirstExit waits until the process of the first attempt has exited.
func waitFirstExit(t *testing.T, fc *fakeChecker) {
	t.Helper()
	select {
	case <-fc.attempts()[0].Exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the process of the failed start never exited")
	}
}

func TestDiedDuringDiscover(t *testing.T) {
	fc := &fakeChecker{connect: func(ctx context.Context, tg healthcheck.Target, n int) (Session, error) {
		if tg.EraHint != healthcheck.EraLegacy {
			// A legacy server that dies on server/discover.
			fmt.Fprintln(tg.Stdin, "exit 1")
			<-tg.Exited
			return nil, fmt.Errorf("discover: %w", healthcheck.ErrDiedDuringDiscover)
		}
		return &fakeSession{report: report(healthcheck.EraLegacy)}, nil
	}}
	s := New([]*registry.Server{childServer(t, "srv", "serve")}, healthOptions(t, fc))
	var states []State
	var mu sync.Mutex
	go func() {
		for range s.Changes() {
			if st := s.Snapshot().Server("srv"); st != nil {
				mu.Lock()
				states = append(states, st.State)
				mu.Unlock()
			}
		}
	}()
	runSup(t, s)
	st := waitState(t, s, "srv", "ready", inState(StateReady))
	if st.Era != healthcheck.EraLegacy {
		t.Errorf("era %q", st.Era)
	}
	tgs := fc.attempts()
	if len(tgs) != 2 || tgs[0].EraHint != "" || tgs[1].EraHint != healthcheck.EraLegacy {
		t.Fatalf("connect hints: %v", hints(tgs))
	}
	mu.Lock()
	for _, s := range states {
		if s == StateBackoff || s == StateCrashLooping {
			t.Errorf("went through %s: not a crash", s)
		}
	}
	mu.Unlock()
	// The era is remembered across restarts.
	s.Restart("srv")
	waitState(t, s, "srv", "ready again", func(st *ServerState) bool { return st.State == StateReady && len(fc.attempts()) == 3 })
	if h := fc.attempts()[2].EraHint; h != healthcheck.EraLegacy {
		t.Errorf("after restart: hint %q, want legacy", h)
	}
}

func hints(tgs []healthcheck.Target) []healthcheck.Era {
	var h []healthcheck.Era
	for _, t := range tgs {
		h = append(h, t.EraHint)
	}
	return h
}

func TestRemote(t *testing.T) {
	t.Setenv("MCPTRAY_TEST_HOST", "127.0.0.1:9")
	remote := &registry.Server{Name: "web", URL: "http://${env:MCPTRAY_TEST_HOST}/mcp", Autostart: true}

	t.Run("no checker", func(t *testing.T) {
		s := New([]*registry.Server{remote}, testOptions(t))
		runSup(t, s)
		waitState(t, s, "web", "stopped", func(st *ServerState) bool {
			return st.State == StateStopped && st.Reason == "no health check configured"
		})
	})
	t.Run("reconnect", func(t *testing.T) {
		var up atomic.Bool
		fc := &fakeChecker{connect: func(ctx context.Context, tg healthcheck.Target, n int) (Session, error) {
			if tg.Stdin != nil || tg.Server.URL != "http://127.0.0.1:9/mcp" {
				return nil, fmt.Errorf("bad remote target: %+v", tg)
			}
			if !up.Load() {
				return nil, &healthcheck.Diagnosis{Code: healthcheck.CodeConnectionRefused, Message: "connection refused"}
			}
			return &fakeSession{report: report(healthcheck.EraModern)}, nil
		}}
		o := healthOptions(t, fc)
		o.Environ = func(context.Context) []string { return []string{"MCPTRAY_TEST_HOST=127.0.0.1:9"} }
		o.BackoffBase = time.Hour // only CheckNow brings it back
		s := New([]*registry.Server{remote}, o)
		runSup(t, s)
		st := waitState(t, s, "web", "backoff", inState(StateBackoff))
		if !strings.Contains(st.Reason, "reconnecting in") || st.Diagnosis.Code != healthcheck.CodeConnectionRefused {
			t.Errorf("reason %q diag %v", st.Reason, st.Diagnosis)
		}
		up.Store(true)
		s.CheckNow("web")
		st = waitState(t, s, "web", "ready", inState(StateReady))
		if st.StartedAt.IsZero() || st.PID != 0 || st.Restarts != 1 {
			t.Errorf("remote ready: %+v", st)
		}
	})
}

func TestCheckNowProbes(t *testing.T) {
	fc := &fakeChecker{connect: func(ctx context.Context, tg healthcheck.Target, n int) (Session, error) {
		return &fakeSession{report: report(healthcheck.EraModern)}, nil
	}}
	o := healthOptions(t, fc)
	o.ProbeInterval = time.Hour
	s := New([]*registry.Server{childServer(t, "srv", "serve")}, o)
	runSup(t, s)
	waitState(t, s, "srv", "ready", inState(StateReady))
	if err := s.CheckNow(""); err != nil {
		t.Fatal(err)
	}
	waitState(t, s, "srv", "a probe", func(st *ServerState) bool { return st.Probes.Count == 1 })
	if err := s.CheckNow("nope"); !errors.Is(err, ErrUnknownServer) {
		t.Errorf("CheckNow(nope) = %v", err)
	}
}

// SetTimings applies to a running server from its next probe: a server
// probed hourly is probed every 20 ms after the change.
func TestSetTimingsAppliesToTheNextProbe(t *testing.T) {
	fc := &fakeChecker{connect: func(ctx context.Context, tg healthcheck.Target, n int) (Session, error) {
		return &fakeSession{report: report(healthcheck.EraModern)}, nil
	}}
	o := healthOptions(t, fc)
	o.ProbeInterval = time.Hour
	s := New([]*registry.Server{childServer(t, "srv", "serve")}, o)
	runSup(t, s)
	waitState(t, s, "srv", "ready", inState(StateReady))
	if got := s.timing().ProbeInterval; got != time.Hour {
		t.Fatalf("probe interval %s before SetTimings, want the options' 1h", got)
	}
	s.SetTimings(Timings{ProbeInterval: 20 * time.Millisecond, ProbeTimeout: 200 * time.Millisecond, StartupTimeout: time.Second})
	// The hourly timer set before the change runs out once, now.
	if err := s.CheckNow("srv"); err != nil {
		t.Fatal(err)
	}
	waitState(t, s, "srv", "probes every 20 ms", func(st *ServerState) bool { return st.Probes.Count >= 4 })
	if got := s.timing(); got.LogLimitLines != registry.DefaultLogLimitLines || got.LogLimitBytes != registry.DefaultLogLimitBytes {
		t.Errorf("unset log limits are %d lines, %d bytes; want the defaults", got.LogLimitLines, got.LogLimitBytes)
	}
}
