//go:build unix

package supervisor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"mcptray/healthcheck"
	"mcptray/internal/clock/fakeclock"
	"mcptray/registry"
)

func TestCrashBackoffAndCrashLoop(t *testing.T) {
	clock := fakeclock.New()
	opts := testOptions(t)
	opts.Clock = clock
	srv := childServer(t, "crashy", "crash")
	s := New([]*registry.Server{srv}, opts)
	runSup(t, s)

	// 1 s, 2 s, 4 s, 8 s, then the fifth crash within 2 minutes gives up.
	for i, want := range []time.Duration{1, 2, 4, 8} {
		st := waitState(t, s, "crashy", "backoff", inState(StateBackoff))
		if got := st.NextAttempt.Sub(clock.Now()); got != want*time.Second {
			t.Fatalf("crash %d: next attempt in %v, want %v", i+1, got, want*time.Second)
		}
		if st.Diagnosis == nil || st.Diagnosis.Code != healthcheck.CodeExitedDuringStartup {
			t.Fatalf("crash %d: diagnosis %v, want exited-during-startup", i+1, st.Diagnosis)
		}
		if !strings.Contains(st.Reason, "exited with code 3") || !strings.Contains(st.Reason, "restarting in") {
			t.Errorf("crash %d: reason %q", i+1, st.Reason)
		}
		if !strings.Contains(strings.Join(st.Diagnosis.Evidence, "\n"), "fatal: boom") {
			t.Errorf("crash %d: evidence %q lacks the last stderr line", i+1, st.Diagnosis.Evidence)
		}
		if st.LastExit == nil || st.LastExit.Code != 3 {
			t.Errorf("crash %d: LastExit %+v", i+1, st.LastExit)
		}
		if st.Restarts != i {
			t.Errorf("crash %d: Restarts = %d, want %d", i+1, st.Restarts, i)
		}
		clock.Advance(want * time.Second)
		waitState(t, s, "crashy", "the restart", func(st *ServerState) bool { return st.Restarts == i+1 })
	}
	st := waitState(t, s, "crashy", "crash-looping", inState(StateCrashLooping))
	if !strings.Contains(st.Reason, "5 failures") {
		t.Errorf("reason %q", st.Reason)
	}
	// Given up: no timer is left to restart it, and time passing does not.
	if p := clock.Pending(); len(p) != 0 {
		t.Fatalf("crash-looping with timers pending: %v", p)
	}
	clock.Advance(10 * time.Minute)
	if got := s.Snapshot().Server("crashy"); got.State != StateCrashLooping || got.Restarts != 4 {
		t.Fatalf("after 10 min: %s, %d restarts", got.State, got.Restarts)
	}
	// Starting it again forgets the history: the next backoff is 1 s.
	if err := s.Start("crashy"); err != nil {
		t.Fatal(err)
	}
	st = waitState(t, s, "crashy", "backoff after Start", func(st *ServerState) bool { return st.State == StateBackoff && st.Restarts == 5 })
	if got := st.NextAttempt.Sub(clock.Now()); got != time.Second {
		t.Errorf("after Start: next attempt in %v, want 1s", got)
	}
}

func TestStableRunResetsBackoff(t *testing.T) {
	clock := fakeclock.New()
	opts := testOptions(t)
	opts.Clock = clock
	s := New([]*registry.Server{childServer(t, "srv", "serve")}, opts)
	runSup(t, s)

	kill := func(restarts int, up time.Duration) ServerState {
		t.Helper()
		st := waitState(t, s, "srv", "running", func(st *ServerState) bool { return st.State == StateRunning && st.Restarts == restarts })
		clock.Advance(up)
		syscall.Kill(st.PID, syscall.SIGKILL)
		st = waitState(t, s, "srv", "backoff", inState(StateBackoff))
		if st.Diagnosis == nil || st.LastExit == nil || st.LastExit.Signal != "SIGKILL" {
			t.Fatalf("diagnosis %v, exit %+v", st.Diagnosis, st.LastExit)
		}
		return st
	}
	st := kill(0, 2*time.Second) // past the startup settle time
	if d := st.NextAttempt.Sub(clock.Now()); d != time.Second {
		t.Fatalf("first backoff %v", d)
	}
	if st.Diagnosis.Code != healthcheck.CodeCrashed {
		t.Errorf("code %s, want crashed", st.Diagnosis.Code)
	}
	clock.Advance(time.Second)
	st = kill(1, 2*time.Second)
	if d := st.NextAttempt.Sub(clock.Now()); d != 2*time.Second {
		t.Fatalf("second backoff %v", d)
	}
	clock.Advance(2 * time.Second)
	st = kill(2, 31*time.Second) // a stable run
	if d := st.NextAttempt.Sub(clock.Now()); d != time.Second {
		t.Fatalf("backoff after a stable run: %v, want 1s", d)
	}
}

func TestRestartPolicy(t *testing.T) {
	tests := []struct {
		policy registry.RestartPolicy
		mode   string
		want   State
	}{
		{registry.RestartOnFailure, "exit0", StateBackoff}, // exiting at once is a failed start
		{registry.RestartNever, "crash", StateStopped},
		{registry.RestartAlways, "exit0", StateBackoff},
	}
	for _, tt := range tests {
		t.Run(string(tt.policy)+"/"+tt.mode, func(t *testing.T) {
			clock := fakeclock.New()
			opts := testOptions(t)
			opts.Clock = clock
			srv := childServer(t, "srv", tt.mode)
			srv.Restart = tt.policy
			s := New([]*registry.Server{srv}, opts)
			runSup(t, s)
			st := waitState(t, s, "srv", string(tt.want), func(st *ServerState) bool { return st.LastExit != nil && st.State == tt.want })
			if st.Diagnosis == nil || st.Reason == "" {
				t.Errorf("no diagnosis or reason: %+v", st)
			}
		})
	}
	t.Run("on-failure/clean exit after a while", func(t *testing.T) {
		clock := fakeclock.New()
		opts := testOptions(t)
		opts.Clock = clock
		s := New([]*registry.Server{childServer(t, "srv", "serve")}, opts)
		runSup(t, s)
		st := waitState(t, s, "srv", "running", inState(StateRunning))
		clock.Advance(2 * time.Second) // past the startup settle time
		// The server is told to exit 0 through its stdin; find its pipe
		// through /proc is not portable, so kill it politely instead.
		syscall.Kill(st.PID, syscall.SIGTERM) // Go's default: exit by signal
		st = waitState(t, s, "srv", "backoff", inState(StateBackoff))
		if st.LastExit.Signal != "SIGTERM" {
			t.Errorf("exit %+v", st.LastExit)
		}
	})
}

func TestFailedStart(t *testing.T) {
	dir := t.TempDir()
	noexec := filepath.Join(dir, "server.sh")
	os.WriteFile(noexec, []byte("#!/bin/sh\n"), 0o644)
	tests := []struct {
		name   string
		srv    *registry.Server
		code   healthcheck.Code
		reason string
	}{
		{"missing command", &registry.Server{Command: "no-such-mcp-server-xyz"}, healthcheck.CodeCommandNotFound, `command "no-such-mcp-server-xyz" not found`},
		{"not executable", &registry.Server{Command: noexec}, healthcheck.CodePermissionDenied, "is not executable"},
		{"bad cwd", &registry.Server{Command: "sh", Cwd: filepath.Join(dir, "nope")}, healthcheck.CodeBadCwd, "does not exist"},
		{"cwd is a file", &registry.Server{Command: "sh", Cwd: noexec}, healthcheck.CodeBadCwd, "is not a folder"},
		{"unset variable", &registry.Server{Command: "sh", Env: map[string]string{"TOKEN": "${env:MCPTRAY_TEST_UNSET_VAR}"}}, healthcheck.CodeUnsetVariable, "${env:MCPTRAY_TEST_UNSET_VAR}"},
		{"invalid entry", &registry.Server{Command: "sh", Invalid: &registry.ServerError{}}, healthcheck.CodeInvalidConfig, "invalid config"},
	}
	var servers []*registry.Server
	for i, tt := range tests {
		tt.srv.Name = strings.ReplaceAll(tt.name, " ", "-")
		tt.srv.Autostart = true
		tests[i] = tt
		servers = append(servers, tt.srv)
	}
	good := childServer(t, "good", "serve")
	servers = append(servers, good)
	clock := fakeclock.New()
	opts := testOptions(t)
	opts.Clock = clock
	s := New(servers, opts)
	runSup(t, s)
	healthy := waitState(t, s, "good", "running", inState(StateRunning))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := waitState(t, s, tt.srv.Name, "failed", inState(StateFailed))
			if st.Diagnosis == nil || st.Diagnosis.Code != tt.code {
				t.Fatalf("diagnosis %v, want %s", st.Diagnosis, tt.code)
			}
			if !strings.Contains(st.Reason, tt.reason) {
				t.Errorf("reason %q lacks %q", st.Reason, tt.reason)
			}
			if st.Diagnosis.Fix == "" && tt.code != healthcheck.CodeInvalidConfig {
				t.Errorf("no fix offered")
			}
			if st.Restarts != 0 || !st.NextAttempt.IsZero() {
				t.Errorf("failed start is retried: %+v", st)
			}
		})
	}
	// Nothing is scheduled to retry them, however long one waits.
	if p := clock.Pending(); len(p) != 0 {
		t.Errorf("timers pending after failed starts: %v", p)
	}
	clock.Advance(time.Hour)
	if st := s.Snapshot().Server("good"); st.State != StateRunning || st.PID != healthy.PID {
		t.Errorf("the good server was disturbed: %s pid %d (was %d)", st.State, st.PID, healthy.PID)
	}
	for _, tt := range tests {
		if st := s.Snapshot().Server(tt.srv.Name); st.State != StateFailed || st.Restarts != 0 {
			t.Errorf("%s: %s after a while, %d restarts", tt.name, st.State, st.Restarts)
		}
	}
}

func TestStopLeavesNothing(t *testing.T) {
	tests := []struct {
		mode       string
		wantSignal string // how the server ended
	}{
		{"serve", ""},              // exits on stdin EOF
		{"ignore-eof", "SIGTERM"},  // needs SIGTERM
		{"ignore-term", "SIGKILL"}, // needs SIGKILL
		{"grandchild", "SIGKILL"},  // and its grandchild ignores SIGTERM too
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			pf, gpf := pidFile(t, "child"), pidFile(t, "grandchild")
			srv := childServer(t, "srv", tt.mode, "SUPERVISOR_TEST_PIDFILE="+pf, "SUPERVISOR_TEST_GRANDPIDFILE="+gpf)
			s := New([]*registry.Server{srv}, testOptions(t))
			runSup(t, s)
			st := waitState(t, s, "srv", "running", inState(StateRunning))
			pid := readPid(t, pf)
			if pid != st.PID {
				t.Fatalf("pid %d, snapshot says %d", pid, st.PID)
			}
			grand := 0
			if tt.mode == "grandchild" {
				grand = readPid(t, gpf)
			}
			if err := s.Stop("srv"); err != nil {
				t.Fatal(err)
			}
			st = waitState(t, s, "srv", "stopped", inState(StateStopped))
			if st.PID != 0 || st.LastExit == nil || st.LastExit.Signal != tt.wantSignal {
				t.Errorf("after stop: pid %d, exit %+v; want signal %q", st.PID, st.LastExit, tt.wantSignal)
			}
			if st.Reason != "stopped by request" {
				t.Errorf("reason %q", st.Reason)
			}
			waitGone(t, pid, "server")
			if grand != 0 {
				waitGone(t, grand, "grandchild")
			}
		})
	}
}

func TestQuitStopsAllInParallel(t *testing.T) {
	var servers []*registry.Server
	var pfs []string
	for _, name := range []string{"a", "b", "c", "d"} {
		pf := pidFile(t, name)
		pfs = append(pfs, pf)
		servers = append(servers, childServer(t, name, "ignore-term", "SUPERVISOR_TEST_PIDFILE="+pf))
	}
	opts := testOptions(t)
	s := New(servers, opts)
	stop := runSup(t, s)
	var pids []int
	for _, pf := range pfs {
		pids = append(pids, readPid(t, pf))
	}
	start := time.Now()
	stop()
	// Each needs the full grace and kill grace (0.5 s); in sequence four
	// would need 2 s. The bound is loose: this machine is shared.
	if d := time.Since(start); d > 1900*time.Millisecond {
		t.Errorf("quitting took %v: servers stopped one after another?", d)
	}
	for _, pid := range pids {
		waitGone(t, pid, "server")
	}
	for _, st := range s.Snapshot().Servers {
		if st.State != StateStopped || st.Reason != "mcptray stopped" {
			t.Errorf("%s: %s (%s)", st.Name, st.State, st.Reason)
		}
	}
}

func TestReload(t *testing.T) {
	opts := testOptions(t)
	a, b, c := childServer(t, "a", "serve"), childServer(t, "b", "serve"), childServer(t, "c", "serve")
	off := childServer(t, "off", "serve")
	off.Autostart = false
	s := New([]*registry.Server{a, b, c, off}, opts)
	runSup(t, s)
	pa := waitState(t, s, "a", "running", inState(StateRunning)).PID
	pb := waitState(t, s, "b", "running", inState(StateRunning)).PID
	pc := waitState(t, s, "c", "running", inState(StateRunning)).PID
	if st := s.Snapshot().Server("off"); st.State != StateStopped || st.Reason != ReasonManual {
		t.Fatalf("off: %s (%s)", st.State, st.Reason)
	}

	b2 := b.Clone()
	b2.Args = []string{"--changed"}
	d := childServer(t, "d", "serve")
	dis := a.Clone()
	dis.Name, dis.Disabled = "dis", true
	s.Reload([]*registry.Server{d, a.Clone(), b2, off, dis})

	pd := waitState(t, s, "d", "running (added)", inState(StateRunning)).PID
	nb := waitState(t, s, "b", "restarted (changed)", func(st *ServerState) bool { return st.State == StateRunning && st.PID != pb }).PID
	waitGone(t, pb, "old b")
	waitGone(t, pc, "removed c")
	snap := s.Snapshot()
	var names []string
	for _, st := range snap.Servers {
		names = append(names, st.Name)
	}
	if got := strings.Join(names, ","); got != "d,a,b,off,dis" {
		t.Errorf("order %s, want the new file order", got)
	}
	if st := snap.Server("a"); st.PID != pa || st.Restarts != 0 {
		t.Errorf("unchanged a was touched: pid %d (was %d), %d restarts", st.PID, pa, st.Restarts)
	}
	if st := snap.Server("dis"); st.State != StateStopped || st.Reason != "disabled in the config" {
		t.Errorf("dis: %s (%s)", st.State, st.Reason)
	}
	if st := snap.Server("b"); st.Server != b2 {
		t.Errorf("b does not show the new entry")
	}
	if err := s.Start("dis"); err == nil {
		t.Errorf("Start of a disabled server succeeded")
	}
	if err := s.Start("c"); err == nil {
		t.Errorf("Start of a removed server succeeded")
	}
	_ = nb
	_ = pd
}

func TestConcurrentCommands(t *testing.T) {
	opts := testOptions(t)
	opts.BackoffBase = 10 * time.Millisecond
	servers := []*registry.Server{childServer(t, "a", "serve"), childServer(t, "b", "ignore-eof"), childServer(t, "c", "crash")}
	s := New(servers, opts)
	stop := runSup(t, s)

	var mu sync.Mutex
	pids := map[int]bool{}
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	var wg sync.WaitGroup
	names := []string{"a", "b", "c", "nope"}
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				n := names[(g+i)%len(names)]
				switch (g*7 + i) % 7 {
				case 0:
					s.Start(n)
				case 1:
					s.Stop(n)
				case 2:
					s.Restart(n)
				case 3:
					s.CheckNow("")
				case 4:
					if i%5 == 0 {
						s.Reload(servers[:1+i%3])
					}
				case 5:
					for _, st := range s.Snapshot().Servers {
						if st.PID != 0 {
							mu.Lock()
							pids[st.PID] = true
							mu.Unlock()
						}
					}
				case 6:
					s.Log(n, 0)
				}
				time.Sleep(time.Millisecond)
			}
		}()
	}
	wg.Wait()
	s.Reload(servers)
	stop()
	for pid := range pids {
		waitGone(t, pid, "server")
	}
	if len(pids) == 0 {
		t.Error("no server ever ran")
	}
}

func TestChangesCoalesce(t *testing.T) {
	s := New([]*registry.Server{childServer(t, "a", "serve")}, testOptions(t))
	for range 100 {
		s.notify() // never blocks
	}
	<-s.Changes()
	select {
	case <-s.Changes():
		t.Fatal("a second signal without a change")
	default:
	}
}

func TestStderrCapture(t *testing.T) {
	opts := testOptions(t)
	opts.NoLogFiles = false
	opts.MaxLineBytes = 16 << 10
	srv := childServer(t, "srv", "stderr-script")
	srv.Restart = registry.RestartNever
	s := New([]*registry.Server{srv}, opts)
	runSup(t, s)
	st := waitState(t, s, "srv", "stopped after exit", func(st *ServerState) bool { return st.LastExit != nil && st.State == StateStopped })
	lines, next := s.Log("srv", 0)
	var got []string
	for _, l := range lines {
		got = append(got, fmt.Sprintf("%d:%v:%d", l.Seq, l.Partial, len(l.Text)))
	}
	// hello, 40,000 x in pieces of 16 KiB, the invalid line, the unfinished one.
	want := []string{"1:false:5", "2:true:16384", "3:true:16384", "4:false:7232", "5:false:13", "6:true:21"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("lines %v, want %v", got, want)
	}
	if lines[0].Text != "hello" || lines[4].Text != "bad \uFFFD bytes" || lines[5].Text != "no newline at the end" {
		t.Errorf("texts %q %q %q", lines[0].Text, lines[4].Text, lines[5].Text)
	}
	if next != 7 {
		t.Errorf("next %d", next)
	}
	if len(st.StderrTail) != 6 || st.Diagnosis == nil || !strings.Contains(strings.Join(st.Diagnosis.Evidence, "\n"), "no newline at the end") {
		t.Errorf("tail %d lines, diagnosis %v", len(st.StderrTail), st.Diagnosis)
	}
	b, err := os.ReadFile(filepath.Join(opts.LogDir, "srv.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "no newline at the end …") || !strings.Contains(string(b), "mcptray: started pid") {
		t.Errorf("log file: %.300q", b)
	}
	// Log for an unknown server is empty.
	if l, n := s.Log("nope", 5); l != nil || n != 5 {
		t.Errorf("Log(nope) = %v, %d", l, n)
	}
}
