package supervisor

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// A server in a cgroup of its own cannot escape a stop: a process can
// leave its process group and session, clear its environment and close its
// pipes, but not leave its cgroup (moving needs write access to a common
// ancestor's cgroup.procs, which mcptray's cgroup is), and cgroup.kill ends
// every process in it at once (Linux 5.14). mcptray uses one where it can
// write its own cgroup v2 folder: a systemd user session delegates its
// subtree to the user, root can write anywhere, and a service with
// Delegate=yes gets its own. Elsewhere servers run in mcptray's cgroup and
// the census alone finds their families.
//
// The folders are named mcptray-OWNERPID-OWNERSTART-N beside mcptray's own
// (under its cgroup), recorded in the record file, and removed once empty;
// a supervisor that finds the folders of a dead one ends what is in them.

// cgroup is one server's cgroup; a nil *cgroup is none.
type cgroup struct{ path string }

// NoCgroups, when set, keeps every server in mcptray's cgroup (tests of the
// census alone set it; so can a user whose cgroup manager objects).
var noCgroups atomic.Bool

var cgroupSeq atomic.Uint64

// cgroupBase is the folder to make servers' cgroups in, "" when there is
// none to use: mcptray's own cgroup in the cgroup v2 hierarchy, writable.
// Whether a cgroup made there can be ended as one (cgroup.kill, Linux
// 5.14) is learnt from the first server's own cgroup (newCgroup): no
// folder is made only to ask.
var cgroupBase = sync.OnceValue(func() string {
	mount := cgroup2Mount()
	own := ownCgroup()
	if mount == "" || own == "" {
		return ""
	}
	base := filepath.Join(mount, own)
	if unix.Access(base, unix.W_OK) != nil {
		return ""
	}
	return base
})

// killable is what the first cgroup made said of cgroup.kill: 0 not
// known yet, 1 there, 2 missing (cgroups are then not used).
var killable atomic.Int32

// cgroup2Mount finds where the cgroup v2 hierarchy is mounted:
// /sys/fs/cgroup on a unified system, /sys/fs/cgroup/unified on a hybrid
// one (asked of the file system there, a statfs each), else wherever
// /proc/self/mountinfo says.
func cgroup2Mount() string {
	for _, p := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
		var st unix.Statfs_t
		if unix.Statfs(p, &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC {
			return p
		}
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL…] - FSTYPE SOURCE SUPER
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		fields, fs := strings.Fields(pre), strings.Fields(post)
		if len(fields) >= 5 && len(fs) >= 1 && fs[0] == "cgroup2" && fields[3] == "/" {
			return unescapeMount(fields[4])
		}
	}
	return ""
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ownCgroup is this process's cgroup v2 path ("0::/path" in
// /proc/self/cgroup).
func ownCgroup() string {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok && strings.HasPrefix(p, "/") {
			return p
		}
	}
	return ""
}

// newCgroup makes a cgroup for one server and opens it for
// CLONE_INTO_CGROUP; nil, -1 when there is none to use.
func newCgroup() (*cgroup, int) {
	base := cgroupBase()
	if base == "" || noCgroups.Load() || killable.Load() == 2 {
		return nil, -1
	}
	me := self()
	path := filepath.Join(base, fmt.Sprintf("mcptray-%d-%d-%d", me.PID, me.Start, cgroupSeq.Add(1)))
	if err := os.Mkdir(path, 0o755); err != nil {
		if killable.Load() == 0 {
			cgroupsRefused() // the first one: none can be made here
		}
		return nil, -1
	}
	if killable.Load() == 0 {
		if _, err := os.Stat(filepath.Join(path, "cgroup.kill")); err != nil {
			killable.Store(2)
			cgroupsRefused()
			os.Remove(path)
			return nil, -1
		}
		killable.Store(1)
	}
	fd, err := unix.Open(path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		os.Remove(path)
		return nil, -1
	}
	return &cgroup{path: path}, fd
}

// startInCgroup starts cmd in a cgroup of its own where there is one to
// use (CLONE_INTO_CGROUP: it is in it before it runs a single instruction),
// else as it is; nil when it runs in mcptray's cgroup.
func startInCgroup(cmd *exec.Cmd) (*cgroup, error) {
	cg, fd := newCgroup()
	if cg == nil {
		return nil, cmd.Start()
	}
	cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, fd
	err := cmd.Start()
	unix.Close(fd)
	if err != nil {
		// The kernel may have refused the cgroup (before 5.7, or a
		// controller's rules): the caller starts the command as before
		// (and gives up on cgroups if that works).
		os.Remove(cg.path)
		return nil, fmt.Errorf("%w: %w", errCgroupRefused, err)
	}
	return cg, nil
}

// cgroupsRefused is called when a start without a cgroup worked where one
// with it failed: later servers run in mcptray's cgroup.
func cgroupsRefused() { noCgroups.Store(true) }

// errCgroupRefused: a start in a cgroup failed; start again without one.
var errCgroupRefused = errors.New("cannot start in a cgroup of its own")

// dir is the cgroup's folder, "" for none.
func (c *cgroup) dir() string {
	if c == nil {
		return ""
	}
	return c.path
}

// procs lists the processes in the cgroup.
func (c *cgroup) procs() []int {
	if c == nil {
		return nil
	}
	return cgroupProcs(c.path)
}

func cgroupProcs(path string) []int {
	procReads.Add(1)
	b, err := os.ReadFile(filepath.Join(path, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// kill ends every process in the cgroup.
func (c *cgroup) kill() {
	if c != nil {
		cgroupKill(c.path)
	}
}

func cgroupKill(path string) error {
	return os.WriteFile(filepath.Join(path, "cgroup.kill"), []byte("1"), 0)
}

// empty reports whether no process is left in the cgroup (true for none).
func (c *cgroup) empty() bool { return c == nil || cgroupEmpty(c.path) }

func cgroupEmpty(path string) bool {
	procReads.Add(1)
	b, err := os.ReadFile(filepath.Join(path, "cgroup.events"))
	if err != nil {
		return true // gone
	}
	return !strings.Contains(string(b), "populated 1")
}

// remove deletes the cgroup once it is empty (bounded: a process being
// killed leaves it a moment later).
func (c *cgroup) remove() {
	if c == nil {
		return
	}
	removeCgroup(c.path, 2*time.Second)
}

func removeCgroup(path string, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for {
		err := os.Remove(path)
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// removeStaleCgroups removes the empty server cgroups that supervisors no
// longer running left beside this one's (a cgroup with processes in it is
// ended only through a record: the cleaner of that supervisor's record
// folder ends it).
func removeStaleCgroups(ownerAlive func(procID) bool) {
	base := cgroupBase()
	if base == "" {
		return
	}
	ents, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), "mcptray-")
		if !ok || !e.IsDir() {
			continue
		}
		parts := strings.Split(rest, "-")
		if len(parts) != 3 {
			continue
		}
		pid, err1 := strconv.Atoi(parts[0])
		start, err2 := strconv.ParseUint(parts[1], 10, 64)
		if err1 != nil || err2 != nil || ownerAlive(procID{PID: pid, Start: start}) {
			continue
		}
		os.Remove(filepath.Join(base, e.Name())) // fails unless empty
	}
}
