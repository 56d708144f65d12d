package supervisor

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/internal/testenv"
	"mcptray/registry"
)

// newMark is a value for SUPERVISOR_TEST_MARK: every process of one test's
// servers carries it, whatever session or group it moved to.
func newMark(t *testing.T) string {
	var b [8]byte
	rand.Read(b[:])
	return "mark-" + hex.EncodeToString(b[:])
}

// marked lists the live processes whose environment holds the mark.
func marked(mark string) []int {
	want := []byte("SUPERVISOR_TEST_MARK=" + mark)
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !alive(pid) {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if bytes.Equal(kv, want) {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

// waitMarked waits until exactly n processes carry the mark and returns
// them; on timeout it kills them and fails.
func waitMarked(t *testing.T, mark string, n int, what string) []int {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		pids := marked(mark)
		if len(pids) == n {
			return pids
		}
		if time.Now().After(deadline) {
			for _, pid := range pids {
				syscall.Kill(pid, syscall.SIGKILL)
				var ws syscall.WaitStatus
				syscall.Wait4(pid, &ws, 0, nil) // a survivor that re-parented to this process
			}
			t.Fatalf("%s: %d processes carry the mark (%v), want %d", what, len(pids), pids, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// zombieChildren lists this process's children that nobody reaped.
func zombieChildren() []int {
	me := os.Getpid()
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		f := strings.Fields(string(b[i+2:]))
		if len(f) > 1 && f[0] == "Z" && f[1] == strconv.Itoa(me) {
			out = append(out, pid)
		}
	}
	return out
}

// waitNoZombies waits until every orphan the subreaper inherited is reaped.
func waitNoZombies(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		z := zombieChildren()
		if len(z) == 0 {
			return
		}
		if time.Now().After(deadline) {
			var lines []string
			for _, pid := range z {
				b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
				lines = append(lines, string(b))
				var ws syscall.WaitStatus
				syscall.Wait4(pid, &ws, syscall.WNOHANG, nil) // not to fail the next test too
			}
			t.Fatalf("zombie children left unreaped:\n%s", strings.Join(lines, "\n"))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func escapeOptions(t *testing.T) *Options {
	o := testOptions(t)
	o.Checker = mcpChecker{}
	o.StartupTimeout = 20 * time.Second
	o.ProbeInterval = 50 * time.Millisecond
	o.ProbeTimeout = 10 * time.Second
	o.BackoffBase = 10 * time.Millisecond
	o.CrashLoopCount = 100
	return o
}

// escapers are servers whose processes leave the server's process group,
// with how many marked processes each has once ready.
var escapers = []struct {
	mode string
	n    int
}{
	{"setsid-grandchild", 2},       // the server and its setsid() grandchild
	{"setsid-grandchild-noenv", 2}, // the same, the grandchild without mcptray's token
	{"daemonize", 1},               // only the daemon: the two parents exited
}

// TestEscapedProcessesEnd runs servers whose descendants leave the process
// group and ends them each way a server ends; no process may survive and
// no zombie may be left.
func TestEscapedProcessesEnd(t *testing.T) {
	paths := []struct {
		name string
		end  func(t *testing.T, s *Supervisor, quit func())
	}{
		{"stop", func(t *testing.T, s *Supervisor, _ func()) {
			if err := s.Stop("srv"); err != nil {
				t.Fatal(err)
			}
			st := waitState(t, s, "srv", "stopped", inState(StateStopped))
			if st.PID != 0 || st.Reason != "stopped by request" {
				t.Errorf("after stop: pid %d, %q", st.PID, st.Reason)
			}
		}},
		{"reload removes it", func(t *testing.T, s *Supervisor, _ func()) {
			s.Reload(nil)
		}},
		{"run ends", func(t *testing.T, s *Supervisor, quit func()) {
			quit()
		}},
		{"restart", func(t *testing.T, s *Supervisor, _ func()) {
			old := s.Snapshot().Server("srv").Restarts
			if err := s.Restart("srv"); err != nil {
				t.Fatal(err)
			}
			waitState(t, s, "srv", "ready again", func(st *ServerState) bool { return st.State == StateReady && st.Restarts > old })
		}},
	}
	for _, tt := range escapers {
		for _, path := range paths {
			t.Run(tt.mode+"/"+path.name, func(t *testing.T) {
				mark := newMark(t)
				srv := childServer(t, "srv", tt.mode, "SUPERVISOR_TEST_MARK="+mark, "SUPERVISOR_TEST_GRANDPIDFILE="+pidFile(t, "grand"))
				s := New([]*registry.Server{srv}, escapeOptions(t))
				quit := runSup(t, s)
				waitState(t, s, "srv", "ready", inState(StateReady))
				waitMarked(t, mark, tt.n, "ready")
				path.end(t, s, quit)
				want := 0
				if path.name == "restart" {
					want = tt.n // the new process's, and nothing of the old one
				}
				waitMarked(t, mark, want, path.name)
				if path.name == "restart" {
					quit()
					waitMarked(t, mark, 0, "quit after restart")
				}
				waitNoZombies(t)
			})
		}
	}
}

// TestCrashLeavesNothing: a server that crashes after starting a setsid()
// grandchild, restarted again and again, leaves no grandchild per start.
func TestCrashLeavesNothing(t *testing.T) {
	mark := newMark(t)
	gpf := pidFile(t, "grand")
	srv := childServer(t, "srv", "setsid-grandchild-exit", "SUPERVISOR_TEST_MARK="+mark, "SUPERVISOR_TEST_GRANDPIDFILE="+gpf)
	o := testOptions(t)
	o.BackoffBase = 10 * time.Millisecond
	o.CrashLoopCount = 100
	s := New([]*registry.Server{srv}, o)
	quit := runSup(t, s)
	st := waitState(t, s, "srv", "three restarts", func(st *ServerState) bool { return st.Restarts >= 3 })
	if st.LastExit == nil || st.LastExit.Code != 3 {
		t.Errorf("last exit %+v, want code 3", st.LastExit)
	}
	// At most the current start's two processes are there.
	if pids := marked(mark); len(pids) > 2 {
		t.Errorf("%d marked processes after %d restarts: %v", len(pids), st.Restarts, pids)
	}
	quit()
	waitMarked(t, mark, 0, "after quit")
	waitNoZombies(t)
}

// TestDaemonizingServerIsReady: a server that double-forks and serves from
// the grandchild is ready and stays so (it is not "exited with code 0");
// the status of the daemon is its exit once stopped.
func TestDaemonizingServerIsReady(t *testing.T) {
	mark := newMark(t)
	gpf := pidFile(t, "grand")
	srv := childServer(t, "srv", "daemonize", "SUPERVISOR_TEST_MARK="+mark, "SUPERVISOR_TEST_GRANDPIDFILE="+gpf)
	o := escapeOptions(t)
	o.LogDir, o.NoLogFiles = t.TempDir(), false
	s := New([]*registry.Server{srv}, o)
	runSup(t, s)
	st := waitState(t, s, "srv", "three probes", func(st *ServerState) bool {
		return (st.State == StateReady && st.Probes.Count >= 3) || st.LastExit != nil ||
			st.State == StateBackoff || st.State == StateCrashLooping || st.State == StateFailed
	})
	if st.State != StateReady || st.Restarts != 0 || st.LastExit != nil {
		t.Fatalf("state %s (%s), %d restarts, last exit %+v; stderr %v", st.State, st.Reason, st.Restarts, st.LastExit, st.StderrTail)
	}
	daemon := readPid(t, gpf)
	if got := waitMarked(t, mark, 1, "ready"); got[0] != daemon {
		t.Errorf("marked %v, daemon %d", got, daemon)
	}
	// The state names the process that serves.
	if st := waitState(t, s, "srv", "the daemon's pid", func(st *ServerState) bool { return st.PID == daemon }); st.State != StateReady {
		t.Errorf("state %s", st.State)
	}
	if err := s.Stop("srv"); err != nil {
		t.Fatal(err)
	}
	st = waitState(t, s, "srv", "stopped", inState(StateStopped))
	// The daemon read EOF on stdin and exited 0; its status was reaped by
	// the subreaper.
	if st.LastExit == nil || st.LastExit.Code != 0 || st.LastExit.Signal != "" {
		t.Errorf("last exit %+v, want the daemon's exit code 0", st.LastExit)
	}
	waitMarked(t, mark, 0, "after stop")
	waitNoZombies(t)
	log, _ := os.ReadFile(filepath.Join(o.LogDir, "srv.log"))
	if !strings.Contains(string(log), fmt.Sprintf("pid %d keeps its stdin and stdout and serves in its place", daemon)) {
		t.Errorf("log does not name the daemon:\n%s", log)
	}
}

// superviseProcess runs the "supervise" child: a supervisor in a process of
// its own, to be killed with SIGKILL.
func superviseProcess(t *testing.T, procDir, mark, servers string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "SUPERVISOR_TEST_CHILD=supervise", "SUPERVISOR_TEST_SERVERS="+servers,
		"SUPERVISOR_TEST_PROCDIR="+procDir, "SUPERVISOR_TEST_MARK="+mark, "GORACE=atexit_sleep_ms=0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Scan()
		line <- sc.Text()
	}()
	select {
	case l := <-line:
		if l != "ready" {
			t.Fatalf("supervisor said %q", l)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the supervisor's servers did not get ready")
	}
	return cmd
}

// TestKilledSupervisorLeftovers: a supervisor killed with SIGKILL leaves
// the escaped processes of its servers (its direct children die of
// Pdeathsig); the next supervisor of the user ends exactly those, and
// leaves a live supervisor's alone.
func TestKilledSupervisorLeftovers(t *testing.T) {
	procDir := t.TempDir()
	mark, liveMark := newMark(t), newMark(t)
	servers := "a=setsid-grandchild,b=daemonize,c=setsid-grandchild-noenv"
	t.Setenv("SUPERVISOR_TEST_LINGER", "1")
	dead := superviseProcess(t, procDir, mark, servers)
	live := superviseProcess(t, procDir, liveMark, "a=setsid-grandchild")
	// Each supervisor carries the mark too.
	waitMarked(t, mark, 6, "first supervisor ready")
	waitMarked(t, liveMark, 3, "second supervisor ready")
	recs, _ := filepath.Glob(filepath.Join(procDir, "*.json"))
	if len(recs) != 2 {
		t.Fatalf("record files %v, want one per supervisor", recs)
	}
	// c's grandchild carries no token: only the record of what was seen
	// of c's family names it. Wait until the supervisor has recorded it.
	deadline := time.Now().Add(20 * time.Second)
	for !recordedFamily(t, procDir, dead.Process.Pid, "c", 2) {
		if time.Now().After(deadline) {
			t.Fatal("c's family never recorded")
		}
		time.Sleep(5 * time.Millisecond)
	}

	dead.Process.Kill()
	dead.Wait()
	// The servers die of Pdeathsig; the setsid() grandchildren (with and
	// without the token) and the daemon (it does not mind its client
	// leaving) outlive it.
	left := waitMarked(t, mark, 3, "after SIGKILL")
	t.Logf("left by the killed supervisor: %v", left)

	// A new supervisor ends them before it starts anything.
	s := New(nil, &Options{ProcDir: procDir, NoLogFiles: true})
	runSup(t, s)
	waitMarked(t, mark, 0, "after a new supervisor started")
	if n := len(marked(liveMark)); n != 3 {
		t.Errorf("the live supervisor's servers were touched: %d of 3 left", n)
	}
	// The cleaner removes the dead one's record once it has reaped what
	// it killed, a moment after they stopped running.
	onlyLive := func() bool {
		recs, _ = filepath.Glob(filepath.Join(procDir, "*"))
		return len(recs) == 1 && strings.HasPrefix(filepath.Base(recs[0]), strconv.Itoa(live.Process.Pid)+"-")
	}
	deadline = time.Now().Add(10 * time.Second)
	for !onlyLive() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if !onlyLive() {
		t.Errorf("record files after the cleanup: %v", recs)
	}
	// The second one killed too: a third supervisor ends its leftovers.
	live.Process.Kill()
	live.Wait()
	waitMarked(t, liveMark, 1, "after the second SIGKILL") // the grandchild
	s3 := New(nil, &Options{ProcDir: procDir, NoLogFiles: true})
	runSup(t, s3)
	waitMarked(t, liveMark, 0, "after a third supervisor started")
	// The cleaner removes the record once it reaped what it killed.
	deadline = time.Now().Add(10 * time.Second)
	for recs, _ = filepath.Glob(filepath.Join(procDir, "*")); len(recs) != 0; recs, _ = filepath.Glob(filepath.Join(procDir, "*")) {
		if time.Now().After(deadline) {
			t.Fatalf("record files left: %v", recs)
		}
		time.Sleep(5 * time.Millisecond)
	}
	waitNoZombies(t)
}

// TestStaleRecordChecksStartTime: a record whose pid now names another
// process (different start time) never gets that process killed; with the
// right start time it is ended (and reaped, being an orphan that
// re-parented to this subreaper).
func TestStaleRecordChecksStartTime(t *testing.T) {
	procDir := t.TempDir()
	becomeSubreaper()
	out, err := exec.Command("sh", "-c", "sleep 1000 >/dev/null 2>&1 & echo $!").Output()
	if err != nil {
		t.Fatal(err)
	}
	victim, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	t.Cleanup(func() { syscall.Kill(victim, syscall.SIGKILL) })
	start, ok := procStartTime(victim)
	if !ok {
		t.Fatal("no start time")
	}
	// The owner: a process that ran and is gone.
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	owner := procID{PID: gone.Process.Pid, Start: 1}
	write := func(start uint64) string {
		rf := recordFile{Owner: owner, Boot: bootID(), Procs: []procRecord{{Server: "x", PID: victim, PGID: victim, Start: start}}}
		b, _ := json.Marshal(rf)
		path := filepath.Join(procDir, fmt.Sprintf("%d-%d-1.json", owner.PID, owner.Start))
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	path := write(start + 1)
	if n := cleanStaleRecords(procDir, slog.New(slog.DiscardHandler)); n != 0 {
		t.Errorf("signalled %d processes for a record with the wrong start time", n)
	}
	if !alive(victim) {
		t.Fatal("a process with a reused pid was killed")
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("stale record not removed: %v", err)
	}
	// The same record with the right start time: it is ended.
	write(start)
	if n := cleanStaleRecords(procDir, slog.New(slog.DiscardHandler)); n != 1 {
		t.Errorf("signalled %d processes, want 1", n)
	}
	waitGone(t, victim, "recorded process")
	waitNoZombies(t)
}

// recordedFamily reports whether owner's record file lists at least n
// members of server's family (or its cgroup, which holds them).
func recordedFamily(t *testing.T, dir string, owner int, server string, n int) bool {
	files, _ := filepath.Glob(filepath.Join(dir, strconv.Itoa(owner)+"-*.json"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var rf recordFile
		if err := json.Unmarshal(b, &rf); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, p := range rf.Procs {
			// A cgroup in the record holds the whole family.
			if p.Server == server && (len(p.Family) >= n || p.Cgroup != "" && len(cgroupProcs(p.Cgroup)) >= n) {
				return true
			}
		}
	}
	return false
}

// TestStopReadsProcAsNeeded: once a server that leaves nothing behind has
// ended, its family is known to be gone and no later look reads /proc.
func TestStopReadsProcAsNeeded(t *testing.T) {
	cmd := exec.Command("cat")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f := newFamily(cmd.Process.Pid, "stop-test", nil, nil, nil, nil)
	f.refresh() // as a stop begins
	stopCat(t, f, cmd, stdin)
	before := procReads.Load()
	f.killAll()
	f.refresh()
	if n := procReads.Load() - before; n != 0 {
		t.Errorf("a family that is gone read /proc again: %d reads", n)
	}
}

// stopCat stops cat (cmd, in family f) as a stop does: its stdin closed,
// its exit awaited and reaped, its heirs followed, its family killed.
func stopCat(t *testing.T, f *family, cmd *exec.Cmd, stdin io.Closer) {
	t.Helper()
	stdin.Close()
	f.awaitLeader()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("cat: %v", err)
	}
	f.leaderReaped()
	if _, followed := f.followHeirs(func(int) {}); followed {
		t.Error("cat has an heir")
	}
	if n := f.killAll(); n != 0 {
		t.Errorf("%d members left", n)
	}
}

// TestCensusFindsDescendantsAndOrphans: a census finds what reading all
// of /proc finds of a server's family: its child, and an orphan of it
// that re-parented here (the subreaper) and is known by its group.
func TestCensusFindsDescendantsAndOrphans(t *testing.T) {
	becomeSubreaper()
	if !subreaper || !childFiles {
		t.Skip("not a subreaper with children files on this kernel")
	}
	// sh starts a sleep, and a subshell that starts one and exits: that
	// sleep is an orphan, re-parented to this process.
	cmd := exec.Command("sh", "-c", "sleep 30 & (sleep 30 &); echo started; wait")
	cmd.SysProcAttr = sysProcAttr()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f := newFamily(cmd.Process.Pid, "census-test", nil, nil, nil, nil)
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		f.leaderReaped()
		f.killAll()
		f.close()
	})
	bufio.NewReader(out).ReadString('\n')
	me := os.Getpid()
	deadline := time.Now().Add(10 * time.Second)
	for {
		full := readProcTable()
		want := pgroupIn(full, cmd.Process.Pid)
		c := f.look(lookFull)
		var got []int
		for pid := range c.live {
			got = append(got, pid)
		}
		slices.Sort(got)
		orphaned := slices.ContainsFunc(want, func(pid int) bool { return pid != cmd.Process.Pid && full.procs[pid].ppid == me })
		if len(want) == 3 && orphaned && slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the census found %v, /proc %v (orphan re-parented: %v)", got, want, orphaned)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// pgroupIn lists the live processes of group pgid in table t, sorted.
func pgroupIn(t *procTable, pgid int) []int {
	var pids []int
	for pid, s := range t.procs {
		if s.pgid == pgid && !s.zombie() {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	return pids
}

// TestNewSupervisorServesSoonAfterKill: a supervisor with 30 servers is
// killed with SIGKILL under a subreaper (this process, as the desktop app
// is for the daemon it starts); its servers die of the parent-death signal
// and re-parent here as zombies. The subreaper reaps them, and the next
// supervisor's cleaner never waits on a zombie: it serves within 10 s.
func TestNewSupervisorServesSoonAfterKill(t *testing.T) {
	becomeSubreaper()
	procDir := t.TempDir()
	var servers []string
	for i := range 30 {
		servers = append(servers, fmt.Sprintf("s%02d=mcp", i))
	}
	list := strings.Join(servers, ",")
	t0 := time.Now()
	first := superviseProcess(t, procDir, newMark(t), list)
	fresh := time.Since(t0)
	recs, _ := filepath.Glob(filepath.Join(procDir, "*.json"))
	if len(recs) != 1 {
		t.Fatalf("record files %v, want one", recs)
	}
	first.Process.Kill()
	first.Wait()
	start := time.Now()
	superviseProcess(t, procDir, newMark(t), list)
	took := time.Since(start)
	t.Logf("30 servers served %s after the kill; a first start took %s", took.Round(time.Millisecond), fresh.Round(time.Millisecond))
	// Within 10 s on a quiet machine (about 1 s here); on a loaded one,
	// starting 30 servers alone can take that long: what the cleanup adds
	// to a start is what must stay under 10 s (the dead supervisor's
	// zombies kept it waiting about 2 s per server).
	if took > 10*time.Second && took > fresh+10*time.Second {
		t.Errorf("the next supervisor served its 30 servers %s after the kill (a first start: %s), want within 10s", took.Round(time.Millisecond), fresh.Round(time.Millisecond))
	}
	waitNoZombies(t)
}

// TestRunDirect: a server run directly (the fallback of `mcptray connect`)
// relays MCP on the given stdin and stdout, and once the client is done
// nothing it started is left: the setsid() grandchild is ended like a
// supervised server's.
func TestRunDirect(t *testing.T) {
	gpf := pidFile(t, "grand")
	srv := childServer(t, "direct", "setsid-grandchild", "SUPERVISOR_TEST_GRANDPIDFILE="+gpf)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	var exit ExitInfo
	go func() {
		var err error
		exit, err = RunDirect(context.Background(), srv, inR, outW, os.Stderr, testOptions(t))
		outW.Close()
		done <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "direct-test", Version: "1"}, nil).Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	grand := readPid(t, gpf)
	if !alive(grand) {
		t.Fatal("no grandchild")
	}
	cs.Close() // closes the server's stdin
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("RunDirect did not return after the client left")
	}
	if exit.Code != 0 || exit.Signal != "" {
		t.Errorf("exit %+v, want code 0", exit)
	}
	waitGone(t, grand, "the grandchild")
	waitNoZombies(t)
}

// TestAdoptOrphansHere: on this kernel os/exec names its children by
// pidfds, so a process can be a subreaper on purpose; a command it runs
// is still waited for by os/exec, not taken by the reaper, and an orphan
// it inherits is reaped with how it ended kept.
func TestAdoptOrphansHere(t *testing.T) {
	if !AdoptOrphans() {
		t.Skip("os/exec names no children by pidfds here (Linux before 5.4)")
	}
	for range 20 {
		if err := exec.Command("sh", "-c", "exit 3").Run(); err == nil || !strings.Contains(err.Error(), "exit status 3") {
			t.Fatalf("a command's own Wait: %v (the reaper took it?)", err)
		}
	}
	// An orphan: sh starts sleep in a session of its own and exits;
	// sleep re-parents here and is killed.
	out, err := exec.Command("sh", "-c", "setsid sleep 100000 >/dev/null 2>&1 & echo $!").Output()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	// Killed once it is in its own session: killed sooner, it is still
	// the setsid program in mcptray's process group, which the reaper
	// leaves to whoever started it (on a loaded machine, one run in three).
	testenv.Eventually(t, 20*time.Second, func() bool {
		s, ok := readStat(pid)
		return ok && s.sid == pid
	}, "waited for the orphan %d to be in a session of its own", pid)
	syscall.Kill(pid, syscall.SIGKILL)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if e, ok := InheritedExit(pid); ok {
			if e.Signal != "SIGKILL" {
				t.Errorf("the orphan ended %+v, want killed by SIGKILL", e)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("orphan %d never reaped", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	waitNoZombies(t)
}
