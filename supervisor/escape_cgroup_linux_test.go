package supervisor

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"mcptray/registry"
)

// needCgroup fails under CI (root, with the cgroup v2 hierarchy writable:
// what CI has) and skips elsewhere when no cgroup can be made.
func needCgroup(t *testing.T) {
	t.Helper()
	if cg, fd := newCgroup(); cg != nil {
		unix.Close(fd)
		cg.remove()
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no writable cgroup v2 folder with cgroup.kill: CI runs as root, where there is one")
	}
	t.Skip("no writable cgroup v2 folder with cgroup.kill here")
}

// withCgroups runs f with servers in cgroups of their own, and without.
func withCgroups(t *testing.T, f func(t *testing.T, cgroups bool)) {
	t.Run("cgroup", func(t *testing.T) {
		needCgroup(t)
		f(t, true)
	})
	t.Run("census", func(t *testing.T) {
		noCgroups.Store(true)
		defer noCgroups.Store(false)
		f(t, false)
	})
}

// escapeKinds are grandchildren that leave the session and clear their
// environment (no token): keeping the server's pipes, or with none.
var escapeKinds = []string{"setsid-noenv-pipes", "setsid-noenv-nopipes"}

// TestEscapeKindsStop: each kind of escapee ends with a stop, in a cgroup
// and by the census alone.
func TestEscapeKindsStop(t *testing.T) {
	for _, kind := range escapeKinds {
		t.Run(kind, func(t *testing.T) {
			withCgroups(t, func(t *testing.T, cgroups bool) {
				gpf := pidFile(t, "grand")
				srv := childServer(t, "srv", kind, "SUPERVISOR_TEST_GRANDPIDFILE="+gpf)
				s := New([]*registry.Server{srv}, escapeOptions(t))
				runSup(t, s)
				waitState(t, s, "srv", "ready", inState(StateReady))
				grand := readPid(t, gpf)
				if err := s.Stop("srv"); err != nil {
					t.Fatal(err)
				}
				waitState(t, s, "srv", "stopped", inState(StateStopped))
				waitGone(t, grand, "the grandchild")
				waitNoZombies(t)
			})
		})
	}
}

// TestVanishedGrandchildEndsByCgroup: a grandchild whose parent left the
// session and exited at once, with a cleared environment and no pipes,
// has nothing left that names it but its cgroup: a stop ends it.
func TestVanishedGrandchildEndsByCgroup(t *testing.T) {
	needCgroup(t)
	gpf := pidFile(t, "grand")
	srv := childServer(t, "srv", "vanish", "SUPERVISOR_TEST_GRANDPIDFILE="+gpf)
	s := New([]*registry.Server{srv}, escapeOptions(t))
	runSup(t, s)
	waitState(t, s, "srv", "ready", inState(StateReady))
	grand := readPid(t, gpf)
	if err := s.Stop("srv"); err != nil {
		t.Fatal(err)
	}
	waitState(t, s, "srv", "stopped", inState(StateStopped))
	waitGone(t, grand, "the grandchild")
	waitNoZombies(t)
}

// TestEscapeKindsAfterKill: a supervisor killed with SIGKILL leaves each
// kind of escapee; the next supervisor ends them from the record: by the
// cgroup, or by the members its census recorded.
func TestEscapeKindsAfterKill(t *testing.T) {
	becomeSubreaper()
	for _, kind := range append(escapeKinds, "vanish") {
		t.Run(kind, func(t *testing.T) {
			withCgroups(t, func(t *testing.T, cgroups bool) {
				if kind == "vanish" && !cgroups {
					t.Skip("without a cgroup nothing names it (documented)")
				}
				procDir := t.TempDir()
				gpf := pidFile(t, "grand")
				t.Setenv("SUPERVISOR_TEST_GRANDPIDFILE", gpf)
				if !cgroups {
					t.Setenv("SUPERVISOR_TEST_NOCGROUP", "1")
				}
				dead := superviseProcess(t, procDir, newMark(t), "srv="+kind)
				grand := readPid(t, gpf+".srv")
				t.Cleanup(func() { syscall.Kill(grand, syscall.SIGKILL) })
				deadline := time.Now().Add(20 * time.Second)
				for !recorded(t, procDir, dead.Process.Pid, grand, cgroups) {
					if time.Now().After(deadline) {
						t.Fatal("the grandchild was never recorded")
					}
					time.Sleep(5 * time.Millisecond)
				}
				dead.Process.Kill()
				dead.Wait()
				if !alive(grand) {
					t.Fatal("the grandchild died with the supervisor: nothing to test")
				}
				s := New(nil, &Options{ProcDir: procDir, NoLogFiles: true})
				runSup(t, s)
				waitGone(t, grand, "the grandchild")
				waitNoZombies(t)
			})
		})
	}
}

// recorded reports whether owner's record names grand: in its family, or
// (cgroups) through the server's cgroup holding it.
func recorded(t *testing.T, dir string, owner, grand int, cgroups bool) bool {
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, f := range files {
		if !strings.HasPrefix(filepath.Base(f), strconv.Itoa(owner)+"-") {
			continue
		}
		rf := readRecord(t, f)
		for _, p := range rf.Procs {
			if cgroups {
				if p.Cgroup != "" && containsPid(cgroupProcs(p.Cgroup), grand) {
					return true
				}
				continue
			}
			for _, m := range p.Family {
				if m.PID == grand {
					return true
				}
			}
		}
	}
	return false
}

func containsPid(pids []int, pid int) bool {
	for _, p := range pids {
		if p == pid {
			return true
		}
	}
	return false
}

func readRecord(t *testing.T, path string) recordFile {
	var rf recordFile
	b, err := os.ReadFile(path)
	if err != nil {
		return rf // replaced while read
	}
	if err := json.Unmarshal(b, &rf); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rf
}

// TestCgroupStopReadsNoChildren: the stop of a server in a cgroup that
// ends when its stdin closes reads its cgroup and what it saw of its own
// family, never mcptray's children (every thread's children file): what a
// stop costs does not grow with mcptray's threads or the other servers.
// (The reads are counted by the looks that walk, not by the /proc reads
// of the whole process: the reaper of inherited children reads too, on
// the SIGCHLD of the server's exit.)
func TestCgroupStopReadsNoChildren(t *testing.T) {
	needCgroup(t)
	becomeSubreaper()
	cmd := exec.Command("cat")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.SysProcAttr = sysProcAttr()
	cg, err := startInCgroup(cmd)
	if err != nil || cg == nil {
		t.Fatalf("cat in a cgroup: %v (cgroup %v)", err, cg)
	}
	f := newFamily(cmd.Process.Pid, "cgroup-stop-test", nil, nil, nil, cg)
	walks := childWalks.Load()
	f.beforeStop()
	if n := childWalks.Load() - walks; n != 0 {
		t.Errorf("the look before a stop walked mcptray's children %d times; a cgroup names the family without it", n)
	}
	stopCat(t, f, cmd, stdin)
	f.close()
	if n := childWalks.Load() - walks; n != 0 {
		t.Errorf("the stop walked mcptray's children %d times; once the cgroup is empty nothing is left to find there", n)
	}
	if _, err := os.Stat(cg.dir()); !os.IsNotExist(err) {
		t.Errorf("the cgroup %s is left: %v", cg.dir(), err)
	}
}
