package supervisor

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// procStat is what /proc/PID/stat says about a process.
type procStat struct {
	pid, ppid, pgid, sid int
	state                byte   // R, S, D, Z, T, …
	start                uint64 // clock ticks after boot (field 22): with pid, the process's identity
}

func (s procStat) zombie() bool { return s.state == 'Z' || s.state == 'X' }

// readStat reads /proc/PID/stat.
func readStat(pid int) (procStat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	return parseStat(pid, b)
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
	return s, true
}

// procTable is every process in /proc, and which of them belong to this
// user (only those can be inspected further and signalled).
type procTable struct {
	procs map[int]procStat
	mine  map[int]bool
	kids  map[int][]int // ppid → pids
}

func readProcTable() *procTable {
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
		s, ok := readStat(pid)
		if !ok {
			continue
		}
		t.procs[pid] = s
		t.kids[s.ppid] = append(t.kids[s.ppid], pid)
		if fi, err := os.Stat("/proc/" + n); err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid == uid {
				t.mine[pid] = true
			}
		}
	}
	return t
}

// hasEnv reports whether the environment pid started with holds the exact
// entry kv.
func hasEnv(pid int, kv string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for _, e := range bytes.Split(b, []byte{0}) {
		if string(e) == kv {
			return true
		}
	}
	return false
}

// pipeInodes returns the pipe inodes pid holds open.
func pipeInodes(pid int) map[uint64]bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	d, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	var out map[uint64]bool
	for _, n := range names {
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
	return out
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

// bootID tells one boot from the next: start times count from boot.
func bootID() string {
	b, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return strings.TrimSpace(string(b))
}
