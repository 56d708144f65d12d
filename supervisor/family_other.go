//go:build !linux

package supervisor

import (
	"errors"
	"os"
	"os/exec"
	"sync/atomic"
)

// Outside Linux there is no /proc to find a server's family in and no
// child subreaper: a stop reaches the server's process group (on Windows
// the Job Object, which holds every descendant), and a process that left
// the group with setsid() is not found. On macOS the record file still lets
// a new supervisor end the servers (and their groups) a killed one left.

const spawnIDVar = "MCPTRAY_SPAWN_ID"

type family struct{ leader int }

func newFamily(leader int, _ string, _, _, _ *os.File, _ *cgroup) *family {
	return &family{leader: leader}
}

// AdoptOrphans: no child subreaper outside Linux.
func AdoptOrphans() bool { return false }

// InheritedExit: nothing is inherited outside Linux.
func InheritedExit(int) (ExitInfo, bool) { return ExitInfo{}, false }

func (*family) awaitLeader()  {}
func (*family) leaderReaped() {}
func (*family) terminate()    {}
func (*family) killAll() int  { return 0 }
func (*family) refresh() bool { return false }
func (*family) beforeStop()   {}

func (*family) members() []procID { return nil }

func (*family) watch(<-chan struct{}, func()) {}
func (*family) close()                        {}

// cgroup: Linux only.
var noCgroups atomic.Bool

type cgroup struct{}

func (*cgroup) dir() string { return "" }

func startInCgroup(cmd *exec.Cmd) (*cgroup, error) { return nil, cmd.Start() }

var errCgroupRefused = errors.New("cgroups are Linux only")

func cgroupsRefused()                      {}
func removeStaleCgroups(func(procID) bool) {}

func (*family) followHeirs(func(pid int)) (ExitInfo, bool) { return ExitInfo{}, false }

// groupPid is the pid to signal the leader's process group by (a process
// group outlives its leader; nothing better is known here).
func (f *family) groupPid() int { return f.leader }
