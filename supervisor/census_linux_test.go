package supervisor

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcptray/registry"
)

// censusReads runs n servers that each start a child (sh and a sleep that
// outlives it), waits until all run, stops them all, and returns the /proc
// reads that cost, per server.
func censusReads(t testing.TB, n int) float64 {
	var servers []*registry.Server
	for i := range n {
		servers = append(servers, &registry.Server{Name: fmt.Sprintf("s%02d", i), Command: "sh",
			Args: []string{"-c", "sleep 1000 & exec cat"}, Autostart: true})
	}
	o := testOptions(t)
	o.StopGrace, o.KillGrace = 2*time.Second, 2*time.Second
	s := New(servers, o)
	before := procReads.Load()
	stop := runSup(t, s)
	for _, srv := range servers {
		waitState(t, s, srv.Name, "running", inState(StateRunning))
	}
	if os.Getenv("CENSUS_DEBUG") != "" {
		ents, _ := os.ReadDir("/proc/self/task")
		t.Logf("%d servers: %d threads here", n, len(ents))
	}
	stop()
	return float64(procReads.Load()-before) / float64(n)
}

// TestCensusReadsLinear: what the census reads of /proc to run and stop n
// servers grows with n, not with n²: each family's look reads that family
// (and mcptray's own children), not every server's processes.
func TestCensusReadsLinear(t *testing.T) {
	one := censusReads(t, 1)
	ten := censusReads(t, 10)
	fifty := censusReads(t, 50)
	t.Logf("/proc reads per server: %.0f for 1 server, %.0f for 10, %.0f for 50", one, ten, fifty)
	// Linear: the cost per server stays flat (within what a loaded
	// machine adds: looks repeated while processes are mid-exit).
	// Quadratic would multiply it by 5 from 10 to 50 servers.
	if fifty > 2*ten || fifty > 3*one {
		t.Errorf("/proc reads per server grow with the number of servers: %.0f (1), %.0f (10), %.0f (50)", one, ten, fifty)
	}
}

// BenchmarkCensus measures the /proc reads and time of running and
// stopping 50 servers.
func BenchmarkCensus(b *testing.B) {
	for b.Loop() {
		b.ReportMetric(censusReads(b, 50), "proc-reads/server")
	}
}

// A server that exits at once, without reading its stdin, is started once
// per attempt: a restart = "never" server runs once and shows no restart
// (it was started a second time with initialize, as if it had died on
// server/discover).
func TestExitAtOnceStartedOnce(t *testing.T) {
	for _, mode := range []string{"exit0", "crash"} {
		t.Run(mode, func(t *testing.T) {
			starts := filepath.Join(t.TempDir(), "starts")
			srv := childServer(t, "once", mode, "SUPERVISOR_TEST_STARTS="+starts)
			srv.Restart = registry.RestartNever
			s := New([]*registry.Server{srv}, escapeOptions(t))
			runSup(t, s)
			st := waitState(t, s, "once", "stopped", func(st *ServerState) bool { return st.State == StateStopped && st.LastExit != nil })
			b, _ := os.ReadFile(starts)
			if n := strings.Count(string(b), "\n"); n != 1 || st.Restarts != 0 {
				t.Errorf("started %d times, %d restarts shown; want once, none (%s)", n, st.Restarts, st.Reason)
			}
		})
	}
}

// TestZombieChild checks the look that spares the reaper a read of every
// thread's children: with a child exited and not reaped, it names a
// zombie child of this process (a wrong offset into siginfo names
// anything else), and it reaps nothing.
func TestZombieChild(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if s, ok := readStat(cmd.Process.Pid); ok && s.zombie() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the child never exited")
		}
		time.Sleep(time.Millisecond)
	}
	pid, ok := zombieChild()
	if !ok || pid <= 0 {
		t.Fatalf("zombieChild() = %d, %v with a child exited; want its pid", pid, ok)
	}
	if s, ok := readStat(pid); !ok || !s.zombie() || s.ppid != os.Getpid() {
		t.Errorf("zombieChild() = %d: not a zombie child of this process (%+v)", pid, s)
	}
	if s, ok := readStat(cmd.Process.Pid); !ok || !s.zombie() {
		t.Error("the child was reaped by the look")
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
}
