//go:build unix

package supervisor

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"mcptray/healthcheck"
	"mcptray/internal/clock/fakeclock"
	"mcptray/registry"
)

// realChecker is the real health check, as the app plugs it in, on the
// test's clock.
type realChecker struct{ clock Clock }

func (c realChecker) Connect(ctx context.Context, t healthcheck.Target) (Session, error) {
	s, err := healthcheck.Connect(ctx, t, &healthcheck.Options{Clock: c.clock})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// realOptions run the real health check on a fake clock.
func realOptions(t *testing.T, clock *fakeclock.Clock) *Options {
	o := testOptions(t)
	o.Checker = realChecker{clock}
	o.Clock = clock
	o.StartupTimeout = 4500 * time.Millisecond
	o.ProbeInterval = 30 * time.Second
	o.ProbeTimeout = 10 * time.Second
	return o
}

func mcpServer(t *testing.T, name string, env ...string) *registry.Server {
	return childServer(t, name, "mcp", env...)
}

// waitProcState waits until /proc says pid is in state (Linux; elsewhere
// it returns at once).
func waitProcState(t *testing.T, pid int, state byte) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return
		}
		if i := strings.LastIndexByte(string(b), ')'); i >= 0 && i+2 < len(b) && b[i+2] == state {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d never reached state %c: %s", pid, state, b)
		}
	}
}

// waitLine waits until file (a server's log of what it received) has n
// lines containing what: the request is on its way, its clock started.
func waitLine(t *testing.T, file, what string, n int) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(time.Millisecond) {
		if b, _ := os.ReadFile(file); strings.Count(string(b), what) >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never got %d× %s", file, n, what)
		}
	}
}

// Item 1: a server that never answers and exits when its stdin closes is
// ended by mcptray at the startup deadline; the diagnosis says so.
func TestStartupDeadlineIsMcptrays(t *testing.T) {
	clock := fakeclock.New()
	o := realOptions(t, clock)
	log := filepath.Join(t.TempDir(), "stdin")
	s := New([]*registry.Server{childServer(t, "silent", "serve", "SERVE_LOG="+log)}, o)
	runSup(t, s)
	waitState(t, s, "silent", "starting", inState(StateStarting))
	waitLine(t, log, "jsonrpc", 1) // the handshake has begun
	clock.WaitTimer(t, o.StartupTimeout)
	clock.Advance(o.StartupTimeout)
	st := waitState(t, s, "silent", "backoff", inState(StateBackoff))
	if st.Diagnosis == nil || st.Diagnosis.Code != healthcheck.CodeHandshakeTimeout {
		t.Fatalf("diagnosis %v, want handshake-timeout", st.Diagnosis)
	}
	if !strings.Contains(st.Diagnosis.Message, "wrote nothing on stdout within 4.5s") {
		t.Errorf("message %q does not say what the server wrote in how long", st.Diagnosis.Message)
	}
	if !strings.Contains(st.Reason, "mcptray gave up on the handshake after 4.5s") {
		t.Errorf("reason %q does not name mcptray's deadline", st.Reason)
	}
	ev := strings.Join(st.Diagnosis.Evidence, "\n")
	if !strings.Contains(ev, "then mcptray stopped the process: exited with code 0") {
		t.Errorf("evidence %q lacks the exit that followed", ev)
	}
	if st.LastExit == nil || st.LastExit.Code != 0 {
		t.Errorf("LastExit %+v", st.LastExit)
	}
}

// Item 2: a legacy server that dies on server/discover is started again
// with initialize, every time, and its era is remembered.
func TestDiesOnDiscoverAlwaysComesUp(t *testing.T) {
	runs := 100
	if testing.Short() {
		runs = 10
	}
	for i := range runs {
		clock := fakeclock.New()
		s := New([]*registry.Server{mcpServer(t, "old", "MCP_ON_DISCOVER=die")}, realOptions(t, clock))
		stop := runSup(t, s)
		st := waitState(t, s, "old", "ready", func(st *ServerState) bool { return st.State != StateStarting && st.State != StateStopped })
		if st.State != StateReady || st.Era != healthcheck.EraLegacy {
			t.Fatalf("run %d: %s (%s) era %q diag %v", i, st.State, st.Reason, st.Era, st.Diagnosis)
		}
		stop()
	}
}

func TestDiesOnDiscoverTwentyAtOnce(t *testing.T) {
	clock := fakeclock.New()
	var servers []*registry.Server
	for i := range 20 {
		servers = append(servers, mcpServer(t, fmt.Sprintf("old%d", i), "MCP_ON_DISCOVER=die"))
	}
	s := New(servers, realOptions(t, clock))
	runSup(t, s)
	for _, srv := range servers {
		st := waitState(t, s, srv.Name, "settled", func(st *ServerState) bool { return st.State != StateStarting && st.State != StateStopped })
		if st.State != StateReady || st.Era != healthcheck.EraLegacy {
			t.Errorf("%s: %s (%s) era %q diag %v", srv.Name, st.State, st.Reason, st.Era, st.Diagnosis)
		}
	}
}

func TestEraRememberedAcrossRestartAndReload(t *testing.T) {
	clock := fakeclock.New()
	log := filepath.Join(t.TempDir(), "methods")
	srv := mcpServer(t, "old", "MCP_ON_DISCOVER=die", "MCP_METHODS="+log)
	s := New([]*registry.Server{srv}, realOptions(t, clock))
	runSup(t, s)
	first := waitState(t, s, "old", "ready", inState(StateReady))
	countDiscover := func() int {
		b, _ := os.ReadFile(log)
		return strings.Count(string(b), "server/discover")
	}
	if n := countDiscover(); n != 1 {
		t.Fatalf("%d server/discover before the first ready, want 1", n)
	}
	s.Restart("old")
	second := waitState(t, s, "old", "ready after restart", func(st *ServerState) bool { return st.State == StateReady && st.PID != first.PID })
	changed := srv.Clone()
	changed.Env["SOMETHING"] = "changed"
	s.Reload([]*registry.Server{changed})
	waitState(t, s, "old", "ready after reload", func(st *ServerState) bool { return st.State == StateReady && st.PID != second.PID })
	if n := countDiscover(); n != 1 {
		t.Errorf("server/discover sent %d times: the legacy era was forgotten", n)
	}
}

// Item 3: an unanswered probe makes the server unhealthy once probe_timeout
// passes, and it is restarted as a crash.
func TestHungProbeIsUnhealthyThenRestarted(t *testing.T) {
	clock := fakeclock.New()
	o := realOptions(t, clock)
	methods := filepath.Join(t.TempDir(), "methods")
	s := New([]*registry.Server{mcpServer(t, "hang", "MCP_PING=hang", "MCP_METHODS="+methods)}, o)
	runSup(t, s)
	st := waitState(t, s, "hang", "ready", inState(StateReady))
	clock.WaitTimer(t, o.ProbeInterval)
	clock.Advance(o.ProbeInterval)
	waitLine(t, methods, "ping", 1)
	clock.WaitTimer(t, o.ProbeTimeout)
	clock.Advance(o.ProbeTimeout)
	st2 := waitState(t, s, "hang", "backoff", inState(StateBackoff))
	if st2.Diagnosis == nil || st2.Diagnosis.Code != healthcheck.CodeProbeTimeout || !strings.Contains(st2.Diagnosis.Message, "10s") {
		t.Fatalf("diagnosis %v, want probe-timeout saying how long it waited", st2.Diagnosis)
	}
	trs, _ := s.Transitions(0)
	var path []string
	for _, tr := range trs {
		path = append(path, string(tr.To))
	}
	if !strings.Contains(strings.Join(path, ","), "ready,unhealthy,backoff") {
		t.Errorf("transitions %v, want ready → unhealthy → backoff", path)
	}
	clock.WaitTimer(t, time.Second) // the backoff
	clock.Advance(time.Second)
	waitState(t, s, "hang", "restarted", func(n *ServerState) bool { return n.State == StateReady && n.PID != st.PID })
}

// Item 3: a SIGSTOPped process is found within probe_interval +
// probe_timeout and restarted.
func TestStoppedProcessRestarted(t *testing.T) {
	clock := fakeclock.New()
	o := realOptions(t, clock)
	s := New([]*registry.Server{mcpServer(t, "frozen")}, o)
	runSup(t, s)
	st := waitState(t, s, "frozen", "ready", inState(StateReady))
	start := clock.Now()
	if err := syscall.Kill(st.PID, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(st.PID, syscall.SIGKILL)
	waitProcState(t, st.PID, 'T') // every thread has stopped
	clock.WaitTimer(t, o.ProbeInterval)
	clock.Advance(o.ProbeInterval)
	clock.WaitTimer(t, o.ProbeTimeout)
	clock.Advance(o.ProbeTimeout)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("pending at the end: %v; probes %+v", clock.Pending(), s.Snapshot().Server("frozen").Probes)
		}
	})
	got := waitState(t, s, "frozen", "unhealthy", func(st *ServerState) bool { return st.State != StateReady })
	if got.State != StateUnhealthy || got.Diagnosis == nil || got.Diagnosis.Code != healthcheck.CodeProbeTimeout {
		t.Fatalf("after the probe: %s (%s)", got.State, got.Reason)
	}
	if took := got.Since.Sub(start); took > o.ProbeInterval+o.ProbeTimeout {
		t.Errorf("detected after %v, more than interval + timeout", took)
	}
	// Stopping a frozen process takes the grace periods (stdin closed,
	// SIGTERM, SIGKILL), then the backoff; then it starts again.
	for _, d := range []time.Duration{o.StopGrace, o.KillGrace} {
		clock.WaitTimer(t, d)
		clock.Advance(d)
	}
	// The backoff is a second; the health check's own bounds can be a
	// second too, so a pending 1s timer may be another's: move the clock
	// on while the server is in backoff, until it starts again.
	waitState(t, s, "frozen", "ready again", func(st *ServerState) bool {
		if st.State == StateBackoff && slices.Contains(clock.Pending(), time.Second) {
			clock.Advance(time.Second)
		}
		return st.State == StateReady
	})
	waitGone(t, st.PID, "the frozen process")
}

// Item 8: a spawn that fails for want of file descriptors is retried, and
// coded as what it is.
func TestSpawnOutOfFilesRetried(t *testing.T) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir("/proc/self/fd")
	if len(ents) == 0 {
		t.Skip("needs /proc/self/fd")
	}
	low := rl
	low.Cur = uint64(len(ents) + 64)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Skip("cannot lower RLIMIT_NOFILE:", err)
	}
	var hogs []*os.File
	release := sync.OnceFunc(func() {
		for _, f := range hogs {
			f.Close()
		}
		syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl)
	})
	defer release()
	for {
		f, err := os.Open(os.DevNull)
		if err != nil {
			break
		}
		hogs = append(hogs, f)
	}
	// Leave none: the spawn's first pipe fails.
	clock := fakeclock.New()
	o := testOptions(t)
	o.Clock = clock
	srv := childServer(t, "srv", "serve")
	srv.Restart = registry.RestartNever // not the server's failure: retried anyway
	s := New([]*registry.Server{srv}, o)
	runSup(t, s)
	st := waitState(t, s, "srv", "backoff", func(st *ServerState) bool { return st.State != StateStopped })
	release()
	if st.State != StateBackoff || st.Diagnosis == nil || st.Diagnosis.Code != CodeOutOfResources {
		t.Fatalf("%s (%s) diag %v, want backoff with %s", st.State, st.Reason, st.Diagnosis, CodeOutOfResources)
	}
	if !strings.Contains(st.Diagnosis.Message, "too many open files") {
		t.Errorf("message %q", st.Diagnosis.Message)
	}
	clock.Next(t)
	waitState(t, s, "srv", "running after the retry", inState(StateRunning))
}

// Item 8: the run of failed probes belongs to one process.
func TestProbeFailuresResetPerProcess(t *testing.T) {
	clock := fakeclock.New()
	o := realOptions(t, clock)
	o.FailureThreshold = 3
	s := New([]*registry.Server{mcpServer(t, "bad", "MCP_PING=error")}, o)
	runSup(t, s)
	probeOnce := func(want int) {
		t.Helper()
		clock.WaitTimer(t, o.ProbeInterval)
		clock.Advance(o.ProbeInterval)
		waitState(t, s, "bad", fmt.Sprintf("%d failed probes", want), func(st *ServerState) bool { return st.Probes.ConsecutiveFailures == want })
	}
	first := waitState(t, s, "bad", "ready", inState(StateReady))
	probeOnce(1)
	probeOnce(2)
	syscall.Kill(first.PID, syscall.SIGKILL)
	waitState(t, s, "bad", "backoff", inState(StateBackoff))
	clock.Next(t)
	waitState(t, s, "bad", "ready again", func(st *ServerState) bool { return st.State == StateReady && st.PID != first.PID })
	probeOnce(1)
	if st := s.Snapshot().Server("bad"); st.State != StateReady {
		t.Errorf("the new process was restarted after its first failed probe: %s (%s)", st.State, st.Reason)
	}
}

// Item 4: stdout noise is a warning in the snapshot.
func TestNoiseIsAWarning(t *testing.T) {
	clock := fakeclock.New()
	s := New([]*registry.Server{mcpServer(t, "noisy", "MCP_BANNER=Welcome to the noisy server v1")}, realOptions(t, clock))
	runSup(t, s)
	st := waitState(t, s, "noisy", "ready", inState(StateReady))
	if st.Level != LevelWarn || len(st.Warnings) == 0 || st.Warnings[0].Code != healthcheck.CodeStdoutNoise {
		t.Fatalf("level %s warnings %v, want warn with stdout-noise", st.Level, st.Warnings)
	}
	quiet := New([]*registry.Server{mcpServer(t, "quiet")}, realOptions(t, fakeclock.New()))
	runSup(t, quiet)
	if st := waitState(t, quiet, "quiet", "ready", inState(StateReady)); st.Level != LevelOK || len(st.Warnings) != 0 {
		t.Errorf("a clean server: level %s warnings %v", st.Level, st.Warnings)
	}
}

// Items 4 and 14: a server that keeps crashing is not green between crashes
// and is said to recover once; then it is flapping.
func TestFlappingTransitions(t *testing.T) {
	clock := fakeclock.New()
	s := New([]*registry.Server{mcpServer(t, "flappy")}, realOptions(t, clock))
	runSup(t, s)
	pid := 0
	for round := range 4 {
		st := waitState(t, s, "flappy", "ready", func(st *ServerState) bool { return st.State == StateReady && st.PID != pid })
		switch {
		case round >= 2 && st.Level != LevelWarn:
			t.Errorf("round %d: ready between crashes shows %s, warnings %v", round, st.Level, st.Warnings)
		case round < 2 && st.Level != LevelOK:
			t.Errorf("round %d: level %s", round, st.Level)
		}
		pid = st.PID
		syscall.Kill(pid, syscall.SIGKILL)
		waitState(t, s, "flappy", "backoff", inState(StateBackoff))
		clock.Next(t)
	}
	waitState(t, s, "flappy", "ready", func(st *ServerState) bool { return st.State == StateReady && st.PID != pid })
	trs, _ := s.Transitions(0)
	var events []string
	var last uint64
	for _, tr := range trs {
		if tr.Seq <= last {
			t.Errorf("seq %d after %d", tr.Seq, last)
		}
		last = tr.Seq
		if tr.Event != "" {
			events = append(events, string(tr.Event))
		}
	}
	want := "crashed,recovered,crashed,flapping,crashed,crashed"
	if got := strings.Join(events, ","); got != want {
		t.Errorf("events %s, want %s", got, want)
	}
}

// Item 14: any number of watchers wake on a change.
func TestWatchBroadcast(t *testing.T) {
	s := New([]*registry.Server{childServer(t, "a", "serve")}, testOptions(t))
	var chans []<-chan struct{}
	for range 3 {
		chans = append(chans, s.Watch())
	}
	runSup(t, s)
	for i, ch := range chans {
		select {
		case <-ch:
		case <-time.After(20 * time.Second):
			t.Fatalf("watcher %d not woken", i)
		}
	}
	trs, next := s.Transitions(0)
	if len(trs) == 0 || trs[0].Seq != 1 || trs[0].Server != "a" || next != trs[len(trs)-1].Seq+1 {
		t.Fatalf("transitions %+v next %d", trs, next)
	}
	if more, n := s.Transitions(next); len(more) != 0 || n != next {
		t.Errorf("since next: %v, %d", more, n)
	}
}

// Item 5: a stopped server's facts are marked with when they were last
// seen live.
func TestLastLive(t *testing.T) {
	clock := fakeclock.New()
	s := New([]*registry.Server{mcpServer(t, "srv")}, realOptions(t, clock))
	runSup(t, s)
	st := waitState(t, s, "srv", "ready", inState(StateReady))
	if st.LastLive.IsZero() {
		t.Fatal("ready without LastLive")
	}
	clock.Advance(time.Minute)
	s.Stop("srv")
	st = waitState(t, s, "srv", "stopped", inState(StateStopped))
	if st.Report == nil || !st.LastLive.Equal(clock.Now()) {
		t.Errorf("stopped: report %v, last live %v (now %v)", st.Report != nil, st.LastLive, clock.Now())
	}
}

// Item 5: a remote server that keeps failing to connect is red, and its
// restarts are reconnects.
func TestRemoteDownForGood(t *testing.T) {
	clock := fakeclock.New()
	o := realOptions(t, clock)
	s := New([]*registry.Server{{Name: "web", URL: "http://127.0.0.1:9/mcp", Autostart: true}}, o)
	runSup(t, s)
	for i := 0; i < o.withDefaults().CrashLoopCount; i++ {
		st := waitState(t, s, "web", "backoff", func(st *ServerState) bool { return st.State == StateBackoff && st.Failures == i+1 })
		if !strings.Contains(st.Reason, "reconnecting in") {
			t.Errorf("reason %q", st.Reason)
		}
		if i+1 < 5 && st.Level != LevelWarn {
			t.Errorf("after %d failures: level %s", i+1, st.Level)
		}
		if i+1 == 5 && st.Level != LevelError {
			t.Errorf("after %d failures: level %s, want error", i+1, st.Level)
		}
		clock.Next(t)
	}
	trs, _ := s.Transitions(0)
	for _, tr := range trs {
		if tr.Event == EventCrashed {
			t.Errorf("a remote server %s", tr.Event)
		}
	}
}

// Item 3, check side: with a deadline, the probe gives up by then and is a
// probe-timeout that says how long it waited.
func TestProbeFitsTheDeadline(t *testing.T) {
	clock := fakeclock.New()
	o := realOptions(t, clock)
	o.Deadline = clock.Now().Add(3 * time.Second)
	methods := filepath.Join(t.TempDir(), "methods")
	s := New([]*registry.Server{mcpServer(t, "hang", "MCP_PING=hang", "MCP_METHODS="+methods)}, o)
	runSup(t, s)
	waitState(t, s, "hang", "ready", inState(StateReady))
	s.CheckNow("hang")
	waitLine(t, methods, "ping", 1)
	clock.WaitTimer(t, 3*time.Second)
	clock.Advance(3 * time.Second)
	// Unhealthy, then (quickly) stopped and in backoff: either shows it.
	st := waitState(t, s, "hang", "unhealthy", func(st *ServerState) bool { return st.State != StateReady })
	if (st.State != StateUnhealthy && st.State != StateBackoff) || st.Diagnosis == nil || st.Diagnosis.Code != healthcheck.CodeProbeTimeout {
		t.Fatalf("%s (%s) diag %v, want unhealthy with probe-timeout", st.State, st.Reason, st.Diagnosis)
	}
	if !strings.Contains(st.Diagnosis.Message, "within 3s") || !strings.Contains(strings.Join(st.Diagnosis.Evidence, "\n"), "the time left before the deadline") {
		t.Errorf("diagnosis %v does not say how long it waited and why", st.Diagnosis)
	}
}

// A process that dies during the handshake before any era is known gets
// one more start in the other era: straight with initialize after a
// server/discover, with server/discover after an initialize (a checker
// that offers initialize first). A guess no handshake confirmed is dropped
// when that start fails too, so a server that crashed once is not pinned
// to an era, and it is not tried again on every restart: a server that
// dies of something else is started once per restart, not twice.
func TestUnconfirmedEraGuessIsDropped(t *testing.T) {
	for _, tc := range []struct {
		name        string
		legacyFirst bool
		guess       healthcheck.Era
		says        string
	}{
		{"server/discover first", false, healthcheck.EraLegacy, "starting once more with the initialize handshake"},
		{"initialize first", true, healthcheck.EraModern, "starting once more with server/discover first"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fc := &fakeChecker{connect: func(ctx context.Context, tg healthcheck.Target, n int) (Session, error) {
				tg.Stdin.Write([]byte("{}\n")) // read before it crashes: it may have died of it
				<-tg.Exited
				d := &healthcheck.Diagnosis{Code: healthcheck.CodeExitedDuringStartup, Message: "The server exited during the MCP handshake."}
				if tg.EraHint == healthcheck.EraModern || (tg.EraHint == "" && !tc.legacyFirst) {
					// What the health check says of a death with
					// server/discover first and pending.
					d.Err = healthcheck.ErrDiedDuringDiscover
				}
				return nil, d
			}}
			var c Checker = fc
			if tc.legacyFirst {
				c = legacyFirstChecker{fc}
			}
			clock := fakeclock.New()
			o := healthOptions(t, c)
			o.Clock = clock
			said := &reasons{}
			o.Logger = slog.New(said)
			s := New([]*registry.Server{childServer(t, "crashy", "read-crash")}, o)
			runSup(t, s)
			st := waitState(t, s, "crashy", "backoff", inState(StateBackoff))
			if st.Diagnosis == nil || st.Diagnosis.Code != healthcheck.CodeExitedDuringStartup || !strings.Contains(strings.Join(st.Diagnosis.Evidence, "\n"), "fatal: boom") {
				t.Fatalf("diagnosis %v", st.Diagnosis)
			}
			clock.Next(t)
			waitState(t, s, "crashy", "second backoff", func(st *ServerState) bool { return st.State == StateBackoff && st.Restarts == 2 })
			clock.Next(t)
			waitState(t, s, "crashy", "third backoff", func(st *ServerState) bool { return st.State == StateBackoff && st.Restarts == 3 })
			if got := hints(fc.attempts()); len(got) != 4 || got[0] != "" || got[1] != tc.guess || got[2] != "" || got[3] != "" {
				t.Errorf("hints %q, want \"\", %s, \"\", \"\"", got, tc.guess)
			}
			if st := s.Snapshot().Server("crashy"); st.Era != "" {
				t.Errorf("era %q shown without a handshake", st.Era)
			}
			if got := said.all(); !strings.Contains(got, tc.says) {
				t.Errorf("the restart in the other era was not said (%q); reasons:\n%s", tc.says, got)
			}
		})
	}
}

// reasons keeps the reason of every state the engine logs.
type reasons struct {
	mu   sync.Mutex
	list []string
}

func (r *reasons) Enabled(context.Context, slog.Level) bool { return true }
func (r *reasons) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *reasons) WithGroup(string) slog.Handler            { return r }
func (r *reasons) Handle(_ context.Context, rec slog.Record) error {
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key == "reason" {
			r.mu.Lock()
			r.list = append(r.list, a.Value.String())
			r.mu.Unlock()
		}
		return true
	})
	return nil
}

func (r *reasons) all() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.list, "\n")
}

// legacyFirstChecker is a checker that offers initialize first.
type legacyFirstChecker struct{ *fakeChecker }

func (legacyFirstChecker) PrefersLegacy() bool { return true }

// A server that exits at once is explained by its exit and stderr, also
// when the health check only saw a write meet the closed pipe.
func TestCrashAtStartIsTheExit(t *testing.T) {
	for i := range 5 {
		clock := fakeclock.New()
		s := New([]*registry.Server{childServer(t, "crashy", "crash")}, realOptions(t, clock))
		stop := runSup(t, s)
		st := waitState(t, s, "crashy", "backoff", inState(StateBackoff))
		if st.Diagnosis == nil || st.Diagnosis.Code != healthcheck.CodeExitedDuringStartup || !strings.Contains(st.Reason, "exited with code 3") ||
			!strings.Contains(strings.Join(st.Diagnosis.Evidence, "\n"), "fatal: boom") {
			t.Fatalf("run %d: %s diag %v", i, st.Reason, st.Diagnosis)
		}
		stop()
	}
}

// Stdout noise written after the handshake is counted too: the next
// probe's state shows it.
func TestNoiseAfterHandshakeCounted(t *testing.T) {
	clock := fakeclock.New()
	o := realOptions(t, clock)
	s := New([]*registry.Server{mcpServer(t, "late", "MCP_NOISE_AFTER=a late banner")}, o)
	runSup(t, s)
	waitState(t, s, "late", "ready", inState(StateReady))
	for i := 1; ; i++ {
		clock.WaitTimer(t, o.ProbeInterval)
		clock.Advance(o.ProbeInterval)
		st := waitState(t, s, "late", "a probe", func(st *ServerState) bool { return st.Probes.Count >= i })
		if len(st.Warnings) > 0 {
			if st.Level != LevelWarn || st.Warnings[0].Code != healthcheck.CodeStdoutNoise || !strings.Contains(st.Warnings[0].Message, "printed 1 line(s)") {
				t.Fatalf("level %s warnings %v, want the late line counted", st.Level, st.Warnings)
			}
			return
		}
		if i == 5 {
			t.Fatalf("after %d probes: level %s, no warning for the line printed after the handshake", i, st.Level)
		}
	}
}

// A server remembered as modern that then dies on server/discover is
// started once more with initialize; when that fails too, the guess is
// dropped and the next start detects the era again: the server is not
// pinned to the era of a guess that failed.
func TestRememberedEraIsNotPinnedByAGuess(t *testing.T) {
	fc := &fakeChecker{connect: func(ctx context.Context, tg healthcheck.Target, n int) (Session, error) {
		switch n {
		case 0, 3:
			if n == 0 {
				// Ready, then it crashes: it reads a line and exits.
				go func() {
					time.Sleep(50 * time.Millisecond)
					tg.Stdin.Write([]byte("{}\n"))
				}()
			}
			return &fakeSession{report: report(healthcheck.EraModern)}, nil
		case 1:
			tg.Stdin.Write([]byte("{}\n"))
			<-tg.Exited
			return nil, &healthcheck.Diagnosis{Code: healthcheck.CodeExitedDuringStartup, Message: "The server exited during the MCP handshake.",
				Err: healthcheck.ErrDiedDuringDiscover}
		}
		// A server of 2026-07-28 alone, offered initialize only.
		tg.Stdin.Write([]byte("{}\n"))
		return nil, &healthcheck.Diagnosis{Code: healthcheck.CodeHandshakeFailed, Message: "The server refused initialize: this server speaks 2026-07-28."}
	}}
	clock := fakeclock.New()
	o := healthOptions(t, legacyFirstChecker{fc})
	o.Clock = clock
	o.ProbeInterval = time.Hour
	s := New([]*registry.Server{childServer(t, "modern", "read-crash")}, o)
	runSup(t, s)
	waitState(t, s, "modern", "ready", inState(StateReady))
	waitState(t, s, "modern", "crashed after ready", inState(StateBackoff))
	clock.Next(t)
	waitState(t, s, "modern", "the guess failed", func(st *ServerState) bool { return st.State == StateBackoff && len(fc.attempts()) == 3 })
	clock.Next(t)
	st := waitState(t, s, "modern", "ready again", func(st *ServerState) bool { return st.State == StateReady && len(fc.attempts()) == 4 })
	if got := hints(fc.attempts()); len(got) != 4 || got[0] != "" || got[1] != healthcheck.EraModern || got[2] != healthcheck.EraLegacy || got[3] != "" {
		t.Errorf("hints %q, want \"\", modern, legacy, \"\"", got)
	}
	if st.Era != healthcheck.EraModern {
		t.Errorf("era %q, want modern", st.Era)
	}
}
