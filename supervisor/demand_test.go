//go:build unix

package supervisor

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"mcptray/internal/clock/fakeclock"
	"mcptray/internal/testenv"
	"mcptray/registry"
)

// demandOptions run the real health check on a fake clock that moves only
// when a test says: idle_stop's ten minutes pass in a call.
func demandOptions(t *testing.T) (*Options, *fakeclock.Clock) {
	clock := fakeclock.New()
	o := realOptions(t, clock)
	o.ProbeInterval = 24 * time.Hour // no probe fires while the clock jumps
	return o, clock
}

// useServer runs Use on name and returns the server's name from the
// handshake it hands out.
func useServer(t *testing.T, s *Supervisor, name string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var got string
	err := s.Use(ctx, name, func(_ context.Context, sess Session) error {
		got = sess.Report().ServerInfo.Name
		return nil
	})
	return got, err
}

// Item 6: a lazy server waits for its first client, which starts it; Use
// waits for it; idle_stop stops it once nobody used it for that long (open
// leases do not count), says that mcptray stopped it, and the next client
// starts it again.
func TestLazyStartAndIdleStop(t *testing.T) {
	o, clock := demandOptions(t)
	lazy := mcpServer(t, "lazy")
	lazy.Start, lazy.Autostart, lazy.IdleStop = registry.StartLazy, false, 10*time.Minute
	s := New([]*registry.Server{mcpServer(t, "auto"), lazy}, o)
	runSup(t, s)

	waitState(t, s, "auto", "ready", inState(StateReady))
	st := *s.Snapshot().Server("lazy")
	if st.State != StateStopped || st.Reason != ReasonLazy || !st.WaitsForClient || st.PID != 0 ||
		st.Start != registry.StartLazy || st.IdleStop != 10*time.Minute || st.Level != LevelIdle {
		t.Fatalf("lazy before any client: %s (%s) waits %v pid %d start %q idle %v level %s",
			st.State, st.Reason, st.WaitsForClient, st.PID, st.Start, st.IdleStop, st.Level)
	}
	// Use alone does not start it: it says why.
	var nr *NotReadyError
	if _, err := useServer(t, s, "lazy"); !errors.As(err, &nr) || nr.Reason != ReasonLazy {
		t.Fatalf("Use before Acquire: %v", err)
	}

	if err := s.Acquire("lazy"); err != nil {
		t.Fatal(err)
	}
	if name, err := useServer(t, s, "lazy"); err != nil || name != "test-mcp" {
		t.Fatalf("Use after Acquire: %q, %v", name, err)
	}
	st = waitState(t, s, "lazy", "ready", inState(StateReady))
	if st.PID == 0 || st.Clients != 1 || st.WaitsForClient || !st.LastUse.Equal(clock.Now()) {
		t.Fatalf("lazy with a client: pid %d clients %d waits %v last use %v", st.PID, st.Clients, st.WaitsForClient, st.LastUse)
	}
	first := st.PID

	// A use six minutes in moves the stop to sixteen minutes: the timer
	// set for ten finds it used and waits again.
	clock.WaitTimer(t, 10*time.Minute)
	clock.Advance(6 * time.Minute)
	s.Touch("lazy")
	clock.Advance(5 * time.Minute)
	clock.WaitTimer(t, 5*time.Minute)
	if st := s.Snapshot().Server("lazy"); st.State != StateReady || st.PID != first {
		t.Fatalf("stopped although used 5m ago: %s (%s)", st.State, st.Reason)
	}
	// The client still holds it (Clients 1) but sent nothing for ten
	// minutes: the clock is use, not open sessions.
	clock.Advance(5 * time.Minute)
	st = waitState(t, s, "lazy", "stopped by idle_stop", inState(StateStopped))
	want := "stopped after 10m without use (idle_stop); starts again with its next client"
	if st.Reason != want || IdleReason(10*time.Minute) != want || !st.WaitsForClient || st.Diagnosis != nil || st.Level != LevelIdle || st.Clients != 1 {
		t.Fatalf("after idle_stop: %s (%s) waits %v diag %v level %s clients %d", st.State, st.Reason, st.WaitsForClient, st.Diagnosis, st.Level, st.Clients)
	}
	waitGone(t, first, "idle-stopped server")
	trs, _ := s.Transitions(0)
	var seen []string
	for _, tr := range trs {
		if tr.Server == "lazy" && tr.From.Alive() {
			seen = append(seen, string(tr.From)+">"+string(tr.To)+" "+tr.Reason+" "+string(tr.Event))
		}
	}
	if got := strings.Join(seen, "; "); !strings.Contains(got, "ready>stopping "+want+" ; stopping>stopped "+want+" ") {
		t.Errorf("transitions of the idle stop: %s", got)
	}

	// The same client comes back after its silence: its request starts
	// the server again (Touch before Use, as the gateway relays it).
	s.Touch("lazy")
	if name, err := useServer(t, s, "lazy"); err != nil || name != "test-mcp" {
		t.Fatalf("Use after an idle stop and Touch: %q, %v", name, err)
	}
	second := waitState(t, s, "lazy", "ready again", inState(StateReady)).PID
	if second == first || second == 0 {
		t.Fatalf("pid after the idle stop %d (was %d)", second, first)
	}
	s.Release("lazy")
	if st := s.Snapshot().Server("lazy"); st.Clients != 0 {
		t.Errorf("clients after Release: %d", st.Clients)
	}

	// Stopped by a person: no client starts it.
	s.Stop("lazy")
	waitState(t, s, "lazy", "stopped by request", inState(StateStopped))
	waitGone(t, second, "stopped server")
	if err := s.Acquire("lazy"); err != nil {
		t.Fatal(err)
	}
	if _, err := useServer(t, s, "lazy"); !errors.As(err, &nr) || nr.Reason != "stopped by request" {
		t.Errorf("Use of a server stopped by request: %v", err)
	}
	if st := s.Snapshot().Server("lazy"); st.WaitsForClient || st.PID != 0 {
		t.Errorf("a server stopped by request waits for a client: %+v", st)
	}

	if err := s.Acquire("nope"); !errors.Is(err, ErrUnknownServer) {
		t.Errorf("Acquire of an unknown server: %v", err)
	}
}

// Item 6: idle_stop stops a server that started with the engine; Acquire
// starts it again; a manual server is started by no client; a disabled
// one is an error.
func TestIdleStopOfAnAutoServer(t *testing.T) {
	o, clock := demandOptions(t)
	auto := mcpServer(t, "auto")
	auto.IdleStop = time.Minute
	manual := mcpServer(t, "manual")
	manual.Start = registry.StartManual
	off := mcpServer(t, "off")
	off.Disabled = true
	s := New([]*registry.Server{auto, manual, off}, o)
	runSup(t, s)

	first := waitState(t, s, "auto", "ready", inState(StateReady)).PID
	clock.WaitTimer(t, time.Minute)
	clock.Advance(time.Minute)
	st := waitState(t, s, "auto", "stopped by idle_stop", inState(StateStopped))
	if st.Reason != IdleReason(time.Minute) || st.Reason != "stopped after 1m without use (idle_stop); starts again with its next client" || !st.WaitsForClient {
		t.Fatalf("auto after a minute unused: %s (%s)", st.State, st.Reason)
	}
	waitGone(t, first, "idle-stopped server")
	if err := s.Acquire("auto"); err != nil {
		t.Fatal(err)
	}
	if _, err := useServer(t, s, "auto"); err != nil {
		t.Fatalf("Use after Acquire of an idle-stopped server: %v", err)
	}
	if pid := s.Snapshot().Server("auto").PID; pid == first || pid == 0 {
		t.Errorf("pid %d after the restart (was %d)", pid, first)
	}

	if err := s.Acquire("manual"); err != nil {
		t.Fatal(err)
	}
	var nr *NotReadyError
	if _, err := useServer(t, s, "manual"); !errors.As(err, &nr) || nr.Reason != ReasonManual {
		t.Errorf("Use of a manual server: %v", err)
	}
	if st := s.Snapshot().Server("manual"); st.State != StateStopped || st.WaitsForClient || st.Start != registry.StartManual {
		t.Errorf("manual: %s (%s) waits %v", st.State, st.Reason, st.WaitsForClient)
	}
	if err := s.Acquire("off"); !errors.Is(err, ErrDisabled) {
		t.Errorf("Acquire of a disabled server: %v", err)
	}
}

// Item 5: share = false: each client session gets a process of its own,
// shown as an instance of its server; ending one leaves no process and no
// entry; instances follow their server on reload and end with the engine.
func TestInstances(t *testing.T) {
	o, _ := demandOptions(t)
	browser := mcpServer(t, "browser")
	browser.Start, browser.Autostart, browser.Unshared = registry.StartLazy, false, true
	shared := mcpServer(t, "shared")
	s := New([]*registry.Server{browser, shared}, o)
	stop := runSup(t, s)

	a, err := s.NewInstance("browser")
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.NewInstance("browser")
	if err != nil {
		t.Fatal(err)
	}
	if a != "browser#2" || b != "browser#3" {
		t.Fatalf("instance names %q, %q", a, b)
	}
	for _, name := range []string{a, b} {
		if got, err := useServer(t, s, name); err != nil || got != "test-mcp" {
			t.Fatalf("Use of %s: %q, %v", name, got, err)
		}
	}
	pa := waitState(t, s, a, "ready", inState(StateReady)).PID
	pb := waitState(t, s, b, "ready", inState(StateReady)).PID
	if pa == pb || !alive(pa) || !alive(pb) {
		t.Fatalf("instances' pids %d and %d", pa, pb)
	}
	snap := s.Snapshot()
	var order []string
	for _, st := range snap.Servers {
		order = append(order, st.Name+"<"+st.InstanceOf)
	}
	if got := strings.Join(order, ","); got != "browser<,browser#2<browser,browser#3<browser,shared<" {
		t.Errorf("snapshot order %s", got)
	}
	if base := snap.Server("browser"); base.Instances != 2 || base.PID != 0 || base.State != StateStopped {
		t.Errorf("browser itself: %d instances, pid %d, %s", base.Instances, base.PID, base.State)
	}

	if _, err := s.NewInstance("shared"); !errors.Is(err, ErrShared) {
		t.Errorf("NewInstance of a shared server: %v", err)
	}
	if _, err := s.NewInstance(a); err == nil || !strings.Contains(err.Error(), "is an instance of browser") {
		t.Errorf("NewInstance of an instance: %v", err)
	}
	if _, err := s.NewInstance("nope"); !errors.Is(err, ErrUnknownServer) {
		t.Errorf("NewInstance of an unknown server: %v", err)
	}
	if err := s.EndInstance("browser"); !errors.Is(err, ErrNotInstance) {
		t.Errorf("EndInstance of a configured server: %v", err)
	}
	if err := s.EndInstance("browser#9"); !errors.Is(err, ErrUnknownServer) {
		t.Errorf("EndInstance of an unknown instance: %v", err)
	}

	// Reload does not see instances: an unchanged entry leaves them be.
	s.Reload([]*registry.Server{browser.Clone(), shared.Clone()})
	if st := s.Snapshot().Server(a); st == nil || st.PID != pa {
		t.Fatalf("reload with the same entries touched %s: %+v", a, st)
	}

	if err := s.EndInstance(a); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pa, a)
	testenv.Eventually(t, 20*time.Second, func() bool { return s.Snapshot().Server(a) == nil }, "waited for %s to leave the snapshot", a)
	if st := s.Snapshot().Server(b); st == nil || st.State != StateReady || !alive(pb) {
		t.Fatalf("the other instance: %+v", st)
	}
	if c, err := s.NewInstance("browser"); err != nil || c != "browser#4" {
		t.Errorf("a third instance: %q, %v (numbers are not reused)", c, err)
	}

	stop()
	waitGone(t, pb, b)
	for _, st := range s.Snapshot().Servers {
		if st.InstanceOf != "" {
			t.Errorf("%s outlived the engine", st.Name)
		}
	}
	if _, err := s.NewInstance("browser"); !errors.Is(err, ErrStopped) {
		t.Errorf("NewInstance after the engine stopped: %v", err)
	}
}

// An instance ends with its server's removal from the config.
func TestInstanceEndsWithItsServer(t *testing.T) {
	o, _ := demandOptions(t)
	browser := mcpServer(t, "browser")
	browser.Unshared = true
	s := New([]*registry.Server{browser}, o)
	runSup(t, s)
	inst, err := s.NewInstance("browser")
	if err != nil {
		t.Fatal(err)
	}
	pid := waitState(t, s, inst, "ready", inState(StateReady)).PID
	base := waitState(t, s, "browser", "ready", inState(StateReady)).PID
	s.Reload(nil)
	waitGone(t, pid, inst)
	waitGone(t, base, "browser")
	testenv.Eventually(t, 20*time.Second, func() bool { return len(s.Snapshot().Servers) == 0 }, "waited for %s (and browser) to leave the snapshot", inst)
}
