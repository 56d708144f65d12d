package supervisor

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// procStat is what /proc/PID/stat says about a process.
type procStat struct {
	pid, ppid, pgid, sid int
	state                byte   // R, S, D, Z, T, …
	start                uint64 // clock ticks after boot (field 22): with pid, the process's identity
	flags                uint64 // the kernel's PF_* flags (field 9)
}

func (s procStat) zombie() bool { return s.state == 'Z' || s.state == 'X' }

// pfExiting is PF_EXITING: the process is exiting (its memory and files
// are being let go; it is a zombie a moment later).
const pfExiting = 0x4

// dying reports whether the process is dead or exiting: nothing of it can
// be read any more, and it will not fork again.
func (s procStat) dying() bool { return s.zombie() || s.flags&pfExiting != 0 }

// readStat reads /proc/PID/stat.
func readStat(pid int) (procStat, bool) {
	s, _, ok := readStatOwner(pid)
	return s, ok
}

// readStatOwner reads /proc/PID/stat and the uid that owns it (the
// process's effective uid). It calls the system directly: a census reads
// this file for every process on the machine, and an *os.File costs two
// system calls more each time (the poller's, and a finalizer).
func readStatOwner(pid int) (procStat, uint32, bool) {
	procReads.Add(1)
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return procStat{}, 0, false
	}
	defer unix.Close(fd)
	var owner uint32 = ^uint32(0)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) == nil {
		owner = st.Uid
	}
	var buf [1024]byte
	n, err := unix.Read(fd, buf[:])
	if err != nil || n <= 0 {
		return procStat{}, 0, false
	}
	s, ok := parseStat(pid, buf[:n])
	return s, owner, ok
}

// parseStat parses a stat line. The command name (field 2) may hold spaces
// and parentheses, so the fields are counted from the last ')'.
func parseStat(pid int, b []byte) (procStat, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return procStat{}, false
	}
	f := strings.Fields(string(b[i+2:]))
	// f[0] is field 3 (state); starttime is field 22.
	if len(f) < 20 {
		return procStat{}, false
	}
	s := procStat{pid: pid, state: f[0][0]}
	var err error
	ints := []*int{&s.ppid, &s.pgid, &s.sid}
	for k, p := range ints {
		if *p, err = strconv.Atoi(f[1+k]); err != nil {
			return procStat{}, false
		}
	}
	if s.start, err = strconv.ParseUint(f[19], 10, 64); err != nil {
		return procStat{}, false
	}
	s.flags, _ = strconv.ParseUint(f[6], 10, 64)
	return s, true
}

// procTable is every process in /proc, and which of them belong to this
// user (only those can be inspected further and signalled).
type procTable struct {
	procs map[int]procStat
	mine  map[int]bool
	kids  map[int][]int // ppid → pids
}

// procReads counts the files and folders of /proc opened (and links read
// there) by the census: what a look at the processes costs. Tests count
// them; each costs microseconds, and a census that read a fixed share of
// all of them per server would cost servers² per check.
var procReads atomic.Int64

// readProcTable reads every process in /proc: the census's fallback where
// the kernel does not list children (CONFIG_PROC_CHILDREN) or mcptray could
// not become a subreaper, and the cleaner's look at a dead supervisor's
// processes (which may have left its subtree for init's).
func readProcTable() *procTable {
	procReads.Add(1)
	t := &procTable{procs: map[int]procStat{}, mine: map[int]bool{}, kids: map[int][]int{}}
	d, err := os.Open("/proc")
	if err != nil {
		return t
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	uid := uint32(os.Getuid())
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil || pid <= 0 {
			continue
		}
		s, owner, ok := readStatOwner(pid)
		if !ok {
			continue
		}
		t.procs[pid] = s
		t.kids[s.ppid] = append(t.kids[s.ppid], pid)
		t.mine[pid] = owner == uid
	}
	return t
}

// childrenOf lists pid's children, from the children file of each of its
// threads; ok is false when the kernel has no such files. A process that
// is gone has none.
func childrenOf(pid int) (kids []int, ok bool) {
	kids, _, unsupported := listChildren(pid)
	return kids, !unsupported
}

// listChildren lists pid's children; gone is true when pid has no threads
// left (it exited: its children moved to the subreaper), unsupported when
// the kernel has no children files.
func listChildren(pid int) (kids []int, gone, unsupported bool) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	procReads.Add(1)
	d, err := os.Open(dir)
	if err != nil {
		return nil, true, false // gone (or a zombie: no threads left)
	}
	tids, _ := d.Readdirnames(-1)
	d.Close()
	var buf [4096]byte
	for _, tid := range tids {
		procReads.Add(1)
		fd, err := unix.Open(dir+"/"+tid+"/children", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) {
			if _, serr := os.Stat(dir + "/" + tid); serr == nil {
				return nil, false, true // the thread is there, its children file is not
			}
			continue // the thread ended
		}
		if err != nil {
			continue
		}
		var data []byte
		for {
			n, err := unix.Read(fd, buf[:])
			if n <= 0 || err != nil {
				break
			}
			data = append(data, buf[:n]...)
		}
		unix.Close(fd)
		for _, f := range strings.Fields(string(data)) {
			if k, err := strconv.Atoi(f); err == nil {
				kids = append(kids, k)
			}
		}
	}
	return kids, len(tids) == 0, false
}

// procEnvValue is the value of key in the environment pid started with ("" if
// absent); ok is false when the environment could not be read or is empty
// (as during an exec).
func procEnvValue(pid int, key string) (string, bool) {
	procReads.Add(1)
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil || len(b) == 0 {
		return "", false
	}
	prefix := []byte(key + "=")
	for _, e := range bytes.Split(b, []byte{0}) {
		if v, ok := bytes.CutPrefix(e, prefix); ok {
			return string(v), true
		}
	}
	return "", true
}

// pipeInodes returns the pipe inodes pid holds open; ok is false when its
// open files could not be read.
func pipeInodes(pid int) (inos map[uint64]bool, ok bool) {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	procReads.Add(1)
	d, err := os.Open(dir)
	if err != nil {
		return nil, false
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil || len(names) == 0 {
		return nil, false
	}
	var out map[uint64]bool
	for _, n := range names {
		procReads.Add(1)
		l, err := os.Readlink(dir + "/" + n)
		if err != nil {
			continue
		}
		s, ok := strings.CutPrefix(l, "pipe:[")
		if !ok {
			continue
		}
		ino, err := strconv.ParseUint(strings.TrimSuffix(s, "]"), 10, 64)
		if err != nil {
			continue
		}
		if out == nil {
			out = map[uint64]bool{}
		}
		out[ino] = true
	}
	return out, true
}

// fileInode is the inode of an open file (for a pipe end: the pipe's).
func fileInode(f *os.File) uint64 {
	if f == nil {
		return 0
	}
	fi, err := f.Stat()
	if err != nil {
		return 0
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return 0
}

// procStartTime is pid's start time, which with the pid names one process
// for good (a pid is reused, the pair is not).
func procStartTime(pid int) (uint64, bool) {
	s, ok := readStat(pid)
	if !ok || s.zombie() {
		return 0, false
	}
	return s.start, true
}

// bootID tells one boot from the next: start times count from boot. It
// is read once: no process outlives its boot.
var bootID = sync.OnceValue(func() string {
	b, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return strings.TrimSpace(string(b))
})
