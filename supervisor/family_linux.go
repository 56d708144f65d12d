package supervisor

import (
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// On Linux the family of a server is found in /proc, so that a stop reaches
// the processes that left the server's process group: a grandchild that
// called setsid(), the child of a server that double-forked to daemonize.
//
// Why not a cgroup per server: it is the only airtight way (a cgroup cannot
// be left, and cgroup.kill ends it at once), but it needs a delegated
// cgroup v2 subtree, which a desktop session, `mcptray check` in a terminal
// or a systemd user service without Delegate=yes usually does not have.
// The baseline that works for every user is this:
//
//   - mcptray is a child subreaper (PR_SET_CHILD_SUBREAPER): an orphan of a
//     server re-parents to mcptray, not to init, so it stays a descendant
//     and its exit can be reaped and reported.
//   - A member is found by what it cannot shed by leaving its session: it
//     descends (parent chain) from the server or from a member; or it runs
//     with the server's MCPTRAY_SPAWN_ID token in its environment (the
//     environment is inherited by every descendant that does not clear it);
//     or it holds one of the server's stdin/stdout/stderr pipes (a daemon
//     that serves on them cannot close them); or it is in the server's
//     process group; or it was seen as a member before.
//   - A stop signals every member and every process group a member leads,
//     and repeats until none is left (a member may fork while it is being
//     killed).
//
// Reaping: a subreaper must wait for the orphans it inherits or they stay
// zombies. os/exec waits for the servers themselves, and other code in
// mcptray runs commands with os/exec too, so mcptray never calls wait(-1):
// it reaps only zombies that are its children, that are not a server
// os/exec is waiting for, and that belong to a family (by pid, process group
// or session).

// spawnIDVar is the environment variable that carries a server's token.
const spawnIDVar = "MCPTRAY_SPAWN_ID"

var (
	subreaperOnce sync.Once
	subreaper     bool // set once: every descendant of a server stays a descendant of mcptray
)

// becomeSubreaper makes orphans of servers re-parent to mcptray. It fails
// only on kernels before 3.4; then orphans go to init and are still found by
// their token and pipes, only their exit status is lost.
func becomeSubreaper() {
	subreaperOnce.Do(func() { subreaper = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == nil })
}

// activeLeaders are the servers os/exec is waiting for: never reaped here.
var activeLeaders sync.Map // pid → struct{}

// family tracks the processes one server started.
type family struct {
	leader      int
	leaderStart uint64
	token       string    // spawnIDVar=value
	pipes       [3]uint64 // inodes of the stdin, stdout and stderr pipes
	self        int

	mu     sync.Mutex // guards the fields below
	reaped bool       // the leader's Wait returned: its pid may be reused
	exited bool       // the leader is dead (a zombie until reaped)
	// gone: once the leader was dead, a deep look found no member, live
	// or dead, and nothing it could not tell apart. Nothing is left that
	// could start a member, so every later look would find none: they
	// are skipped (each reads all of /proc).
	gone  bool
	known map[int]uint64 // members seen alive: pid → start time
	// ids are the process groups and sessions members were seen in: the
	// middle process of a double fork, dead before it was seen, is the
	// session of the daemon it left.
	ids map[int]bool
}

// pipe bits in census.holds.
const (
	holdsStdin = 1 << iota
	holdsStdout
	holdsStderr
)

// census is one look at a family.
type census struct {
	live    map[int]procStat
	holds   map[int]uint8 // live members holding the server's pipes
	zombies []procStat    // dead members that only mcptray can reap
	groups  []int         // process groups led by the family
	// unsure counts descendants of mcptray that could not be told apart:
	// in the middle of an exec (environment and files unreadable), or
	// exiting or dead (a zombie younger than the leader). /proc is not read
	// in one atomic step, so a child such a process just started may be
	// missing from the census.
	unsure int
}

func newFamily(leader int, token string, stdin, stdout, stderr *os.File) *family {
	becomeSubreaper()
	activeLeaders.Store(leader, struct{}{})
	f := &family{leader: leader, token: token, self: os.Getpid(), known: map[int]uint64{}, ids: map[int]bool{}}
	f.pipes = [3]uint64{fileInode(stdin), fileInode(stdout), fileInode(stderr)}
	if s, ok := readStat(leader); ok {
		f.leaderStart = s.start
		f.known[leader] = s.start
	}
	return f
}

// awaitLeader blocks until the leader has exited, without reaping it, and
// takes a census while its pid and process group still name it.
func (f *family) awaitLeader() {
	for {
		err := unix.Waitid(unix.P_PID, f.leader, nil, unix.WEXITED|unix.WNOWAIT, nil)
		if err == nil {
			f.mu.Lock()
			f.exited = true
			f.mu.Unlock()
		}
		if err != syscall.EINTR {
			break
		}
	}
	f.look(lookFull)
}

// leaderReaped is called once os/exec has reaped the leader.
func (f *family) leaderReaped() {
	f.mu.Lock()
	f.reaped = true
	delete(f.known, f.leader)
	f.mu.Unlock()
	activeLeaders.Delete(f.leader)
}

// Kinds of census.
const (
	lookFull    = iota // find members by token and pipes too
	lookHeirs          // and say which members hold the pipes
	lookShallow        // by descent, group and earlier sightings only (cheap)
)

// look takes a census and remembers the members seen.
func (f *family) look(kind int) census {
	heirs, deep := kind == lookHeirs, kind != lookShallow
	c := census{live: map[int]procStat{}, holds: map[int]uint8{}}
	f.mu.Lock()
	gone := f.gone
	f.mu.Unlock()
	if gone {
		return c
	}
	t := f.table()
	f.mu.Lock()
	defer f.mu.Unlock()
	defer func() {
		if deep && (f.exited || f.reaped) && len(c.live) == 0 && len(c.zombies) == 0 && c.unsure == 0 {
			f.gone = true
		}
	}()
	selfPgid, selfSid := unix.Getpgrp(), 0
	if sid, err := unix.Getsid(0); err == nil {
		selfSid = sid
	}
	member := map[int]bool{}
	keep := func(pid int) bool { return pid != f.self && pid > 1 }
	add := func(pid int) {
		if keep(pid) {
			member[pid] = true
		}
	}
	// A member found by its token or pipes is a descendant of mcptray as
	// long as mcptray is a subreaper: only those need their environment
	// and open files read.
	candidates := t.procs
	if subreaper {
		candidates = t.subtree(f.self)
	}
	for pid, s := range candidates {
		if pid == f.self {
			continue
		}
		in := (f.known[pid] != 0 && f.known[pid] == s.start) || (!f.reaped && s.pgid == f.leader)
		// A descendant of mcptray is the user's even when /proc says
		// otherwise for a moment (during an exec the files of a process
		// can belong to root).
		ours := subreaper || t.mine[pid]
		deadLeader := pid == f.leader && s.start == f.leaderStart && f.exited
		if deep && ours && s.zombie() && s.start >= f.leaderStart && !deadLeader {
			// Exiting, or dead before it was seen: it may have handed the
			// pipes to a child that /proc was read too early to list.
			c.unsure++
		}
		if deep && ours && !s.zombie() {
			readable := true
			if heirs || !in {
				h, ok := f.holding(pid)
				readable = ok
				if h != 0 {
					c.holds[pid] = h
					in = true
				}
			}
			if !in && f.token != "" {
				has, ok := hasEnv(pid, f.token)
				in, readable = has, readable && ok
			}
			if !readable && (heirs || !in) {
				c.unsure++
			}
		}
		if in {
			add(pid)
		}
	}
	t.spread(member, keep)
	ids := map[int]bool{f.leader: true}
	for pid := range member {
		s := t.procs[pid]
		ids[pid], ids[s.pgid], ids[s.sid] = true, true, true
		if !s.zombie() {
			c.live[pid] = s
			f.known[pid] = s.start
		}
	}
	for pid, start := range f.known {
		if s, ok := t.procs[pid]; !ok || s.start != start {
			delete(f.known, pid) // gone: its pid may name another process now
			continue
		}
		ids[pid] = true
	}
	delete(ids, selfPgid)
	delete(ids, selfSid)
	delete(ids, 0)
	delete(ids, 1)
	inUse := map[int]bool{}
	for pid, s := range t.procs {
		inUse[pid], inUse[s.pgid], inUse[s.sid] = true, true, true
	}
	for id := range f.ids {
		if !inUse[id] {
			delete(f.ids, id) // no process holds the number: it may be reused
		}
	}
	for id := range ids {
		f.ids[id] = true
	}
	ids = f.ids
	groups := map[int]bool{}
	for _, s := range c.live {
		if s.pgid > 1 && s.pgid != selfPgid && (member[s.pgid] || s.pgid == f.leader) {
			groups[s.pgid] = true
		}
	}
	for g := range groups {
		c.groups = append(c.groups, g)
	}
	for pid := range c.holds {
		if !member[pid] {
			delete(c.holds, pid)
		}
	}
	// Zombies: our children (orphans re-parented to the subreaper) that
	// are not a server os/exec waits for, and belong here by pid, group or
	// session (the middle process of a double fork is the session id of
	// the daemon it left behind).
	for pid, s := range t.procs {
		if !s.zombie() || s.ppid != f.self {
			continue
		}
		if _, ok := activeLeaders.Load(pid); ok {
			continue
		}
		if ids[pid] || ids[s.pgid] || ids[s.sid] {
			c.zombies = append(c.zombies, s)
		}
	}
	return c
}

// holding says which of the server's pipes pid holds; ok is false when its
// open files could not be read.
func (f *family) holding(pid int) (h uint8, ok bool) {
	if f.pipes == [3]uint64{} {
		return 0, true
	}
	inos, ok := pipeInodes(pid)
	for i, ino := range f.pipes {
		if ino != 0 && inos[ino] {
			h |= 1 << i
		}
	}
	return h, ok
}

// reap waits for the zombies of a census (each by its pid: never wait(-1)).
func reap(zs []procStat) {
	for _, z := range zs {
		var ws unix.WaitStatus
		unix.Wait4(z.pid, &ws, unix.WNOHANG, nil)
	}
}

// signal sends sig to every live member and every group one leads. It
// returns how many members there were.
func (f *family) signal(sig syscall.Signal) int {
	c := f.look(lookFull)
	c.send(sig)
	return len(c.live)
}

func (c census) send(sig syscall.Signal) {
	reap(c.zombies)
	for pid := range c.live {
		unix.Kill(pid, sig)
	}
	for _, g := range c.groups {
		unix.Kill(-g, sig)
	}
}

func (f *family) terminate() { f.signal(syscall.SIGTERM) }

// killAll kills the family until nothing of it is left and reaps what is
// ours, within a bound (a process in uninterruptible sleep can outlast
// SIGKILL for a while). It returns the members still alive. Between full
// looks it follows the members it knows (cheap); a full look confirms the
// end.
func (f *family) killAll() int {
	deadline := time.Now().Add(5 * time.Second)
	wait := time.Millisecond
	kind := lookFull
	for {
		c := f.look(kind)
		c.send(syscall.SIGKILL)
		switch {
		case len(c.live) == 0 && len(c.zombies) == 0 && kind == lookFull:
			return 0
		case len(c.live) == 0 && len(c.zombies) == 0:
			kind = lookFull
			continue
		}
		kind = lookShallow
		if time.Now().After(deadline) {
			return len(c.live)
		}
		time.Sleep(wait)
		wait = min(2*wait, 50*time.Millisecond)
	}
}

// table is what a census looks at. A subreaper's family descends from it
// (an orphan re-parents to it), so its own subtree is all there is to read
// where the kernel lists each process's children; else all of /proc.
func (f *family) table() *procTable {
	if subreaper {
		if t, ok := readSubtree(f.self); ok {
			return t
		}
	}
	return readProcTable()
}

// refresh takes a cheap census and reports whether it found members not
// seen before.
func (f *family) refresh() bool {
	f.mu.Lock()
	before := len(f.known)
	f.mu.Unlock()
	f.look(lookShallow)
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.known) > before
}

// members lists the live members seen so far, for the record file.
func (f *family) members() []procID {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]procID, 0, len(f.known))
	for pid, start := range f.known {
		out = append(out, procID{PID: pid, Start: start})
	}
	return out
}

// followHeirs is called after a leader exited cleanly: the descendants that
// still hold both its stdin and stdout are the server now (it daemonized
// and serves from a child). It waits until no such heir is left, calling
// onHeir for each one it follows, and returns how the last one ended.
// followed is false when there was no heir.
func (f *family) followHeirs(onHeir func(pid int)) (exit ExitInfo, followed bool) {
	exit = ExitInfo{Code: -1}
	unsure := 0
	for {
		c := f.look(lookHeirs)
		reap(c.zombies)
		var heirs []procStat
		for pid, h := range c.holds {
			if h&(holdsStdin|holdsStdout) == holdsStdin|holdsStdout {
				heirs = append(heirs, c.live[pid])
			}
		}
		if len(heirs) == 0 && c.unsure > 0 && unsure < 50 {
			// A descendant in the middle of an exec or an exit may be the
			// heir or its parent: reap what is ours and look again in a
			// moment (bounded: about half a second).
			unsure++
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if len(heirs) == 0 {
			return exit, followed
		}
		unsure = 0
		followed = true
		for _, h := range heirs {
			onHeir(h.pid)
		}
		if done, ok := waitAny(heirs); ok {
			exit = reapHeir(done, f.self, exit)
		}
	}
}

// waitAny blocks until one of ps has exited and returns it.
func waitAny(ps []procStat) (procStat, bool) {
	var fds []unix.PollFd
	var who []procStat
	defer func() {
		for _, p := range fds {
			unix.Close(int(p.Fd))
		}
	}()
	for _, p := range ps {
		fd, err := unix.PidfdOpen(p.pid, 0)
		if err != nil {
			if err == syscall.ESRCH {
				return p, true
			}
			continue
		}
		fds = append(fds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
		who = append(who, p)
		// The pidfd names whatever process has the pid now: make sure it
		// is the one seen.
		if s, ok := readStat(p.pid); !ok || s.start != p.start || s.zombie() {
			return p, true
		}
	}
	if len(fds) == 0 {
		// No pidfd (Linux before 5.3): look again now and then.
		for {
			for _, p := range ps {
				if s, ok := readStat(p.pid); !ok || s.start != p.start || s.zombie() {
					return p, true
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	for {
		_, err := unix.Poll(fds, -1)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return procStat{}, false
		}
		for i, p := range fds {
			if p.Revents != 0 {
				return who[i], true
			}
		}
	}
}

// reapHeir collects an heir's exit status when it is mcptray's child (it
// re-parented to the subreaper); otherwise its parent reaps it and the
// status stays unknown (prev).
func reapHeir(h procStat, self int, prev ExitInfo) ExitInfo {
	s, ok := readStat(h.pid)
	if !ok || s.start != h.start || !s.zombie() || s.ppid != self {
		return prev
	}
	var ws unix.WaitStatus
	if pid, err := unix.Wait4(h.pid, &ws, unix.WNOHANG, nil); err != nil || pid != h.pid {
		return prev
	}
	if ws.Signaled() {
		return ExitInfo{Code: -1, Signal: unix.SignalName(ws.Signal())}
	}
	return ExitInfo{Code: ws.ExitStatus()}
}

// groupPid is the pid to signal the leader's process group by: 0 once the
// leader is reaped (its pid may be reused; the members left are signalled
// by the family, which knows their groups).
func (f *family) groupPid() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.reaped {
		return 0
	}
	return f.leader
}

// killStale ends what a dead supervisor's record names: the server if it
// still runs with the recorded start time, the family members recorded,
// every process carrying its token, their descendants and the groups they
// lead. It returns how many processes it signalled.
func killStale(rec procRecord) int {
	t := readProcTable()
	me := os.Getpid()
	member := map[int]bool{}
	keep := func(pid int) bool { return pid != me && pid > 1 && t.mine[pid] }
	add := func(pid int) {
		if keep(pid) {
			member[pid] = true
		}
	}
	if s, ok := t.procs[rec.PID]; ok && s.start == rec.Start {
		add(rec.PID)
	}
	for _, m := range rec.Family {
		if s, ok := t.procs[m.PID]; ok && s.start == m.Start {
			add(m.PID)
		}
	}
	if rec.Token != "" {
		kv := spawnIDVar + "=" + rec.Token
		for pid, s := range t.procs {
			if t.mine[pid] && !s.zombie() {
				if has, _ := hasEnv(pid, kv); has {
					add(pid)
				}
			}
		}
	}
	t.spread(member, keep)
	n := 0
	for pid := range member {
		s := t.procs[pid]
		if s.zombie() {
			continue
		}
		n++
		unix.Kill(pid, syscall.SIGKILL)
		if member[s.pgid] {
			unix.Kill(-s.pgid, syscall.SIGKILL)
		}
	}
	// Those that re-parent to this process (when it is a subreaper
	// ancestor of the dead supervisor, as a test or a session manager can
	// be) are reaped here, each by its pid, once dead; the others by their
	// parents. Bounded.
	deadline := time.Now().Add(2 * time.Second)
	for pid := range member {
		want := t.procs[pid].start
		for time.Now().Before(deadline) {
			s, ok := readStat(pid)
			if !ok || s.start != want {
				break // gone
			}
			if s.zombie() && s.ppid == me {
				// (A Go program's main thread is a zombie a moment before
				// the process can be reaped: try until it can.)
				var ws unix.WaitStatus
				if got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil); got == pid || err != nil {
					break
				}
			}
			time.Sleep(time.Millisecond)
		}
	}
	return n
}
