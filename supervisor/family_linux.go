package supervisor

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// On Linux the family of a server is found in /proc, so that a stop reaches
// the processes that left the server's process group: a grandchild that
// called setsid(), the child of a server that double-forked to daemonize.
// Where a cgroup v2 subtree can be written (see cgroup_linux.go) each
// server also runs in a cgroup of its own, which no process can leave, and
// a stop ends that cgroup; the census below still runs, for what it alone
// knows (who serves in place of a daemonized server) and for machines
// without such a subtree.
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
// Cost: a census of one family reads only that family: the members it
// knows, their children (each thread's /proc/PID/task/TID/children), and
// mcptray's own children, where orphans land. An orphan is told apart once
// (its token and pipes name its family) and the answer is shared by every
// family through the engine's tracker (tracker_linux.go), so a census costs
// what the family holds, not what the machine or the other servers hold.
// Where the kernel lists no children, a census reads all of /proc instead.
//
// Reaping: a subreaper must wait for the orphans it inherits or they stay
// zombies. os/exec waits for the servers themselves, and other code in
// mcptray runs commands with os/exec too, so mcptray never calls wait(-1):
// a family reaps the zombies of its own members, and the tracker reaps
// every other child mcptray inherited (see reapInherited).

// spawnIDVar is the environment variable that carries a server's token.
const spawnIDVar = "MCPTRAY_SPAWN_ID"

var (
	subreaperOnce sync.Once
	subreaper     bool // set once: every descendant of a server stays a descendant of mcptray
	childFiles    bool // set once: the kernel lists each thread's children
)

// becomeSubreaper makes orphans of servers re-parent to mcptray. It fails
// only on kernels before 3.4; then orphans go to init and are still found by
// their token and pipes (in a read of all of /proc), only their exit status
// is lost.
func becomeSubreaper() {
	subreaperOnce.Do(func() {
		subreaper = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == nil
		childFiles = hasChildFiles()
		if subreaper {
			go reapInherited()
		}
	})
}

// hasChildFiles reports whether the kernel lists a thread's children
// (/proc/PID/task/TID/children, CONFIG_PROC_CHILDREN): this thread's file
// tells, without reading every thread's.
func hasChildFiles() bool {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	procReads.Add(1)
	_, err := os.Stat("/proc/self/task/" + strconv.Itoa(unix.Gettid()) + "/children")
	return err == nil
}

// childWalks counts the censuses that read mcptray's own children (every
// thread's children file), for the tests.
var childWalks atomic.Int64

// activeLeaders are the servers os/exec is waiting for: never reaped here.
var activeLeaders sync.Map // pid → struct{}

func isActiveLeader(pid int) bool {
	_, ok := activeLeaders.Load(pid)
	return ok
}

// family tracks the processes one server started.
type family struct {
	leader      int
	leaderStart uint64
	token       string    // the value of spawnIDVar
	pipes       [3]uint64 // inodes of the stdin, stdout and stderr pipes
	self        int
	cg          *cgroup // nil when the server runs in mcptray's cgroup

	mu     sync.Mutex // guards the fields below
	reaped bool       // the leader's Wait returned: its pid may be reused
	exited bool       // the leader is dead (a zombie until reaped)
	// gone: once the leader was dead, a look found no member, live or
	// dead, and nothing it could not tell apart. Nothing is left that
	// could start a member: later looks are skipped.
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
	holds   map[int]uint8 // live members holding the server's pipes (lookHeirs)
	zombies []procStat    // dead members that only mcptray can reap
	groups  []int         // process groups led by the family
	// unsure counts processes that could be the family's and could not be
	// told apart: in the middle of an exec (environment and files
	// unreadable). Another family's processes never count.
	unsure int
}

// newFamily starts tracking the family of leader, which runs with token
// (the value of spawnIDVar) and the given pipes, in cg if not nil.
func newFamily(leader int, token string, stdin, stdout, stderr *os.File, cg *cgroup) *family {
	becomeSubreaper()
	activeLeaders.Store(leader, struct{}{})
	f := &family{leader: leader, token: token, self: os.Getpid(), cg: cg, known: map[int]uint64{}, ids: map[int]bool{}}
	f.pipes = [3]uint64{fileInode(stdin), fileInode(stdout), fileInode(stderr)}
	if s, ok := readStat(leader); ok {
		f.leaderStart = s.start
		f.known[leader] = s.start
	}
	track.add(f)
	return f
}

// awaitLeader blocks until the leader has exited, without reaping it, and
// takes a census while its pid and process group still name it. It waits
// on a pidfd in Go's poller where the kernel has one (no thread is held per
// server: mcptray's own thread count, which a census of its children reads,
// stays flat), else in waitid.
func (f *family) awaitLeader() {
	if !waitPidfd(f.leader) {
		for {
			err := unix.Waitid(unix.P_PID, f.leader, nil, unix.WEXITED|unix.WNOWAIT, nil)
			if err != syscall.EINTR {
				break
			}
		}
	}
	f.mu.Lock()
	f.exited = true
	f.mu.Unlock()
	f.look(lookFull)
}

// waitPidfd waits until pid has exited (it stays a zombie), in Go's poller:
// false when the kernel gives no non-blocking pidfd (before 5.10) and
// nothing was waited for.
func waitPidfd(pid int) bool {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return false
	}
	file := os.NewFile(uintptr(fd), "pidfd")
	defer file.Close()
	rc, err := file.SyscallConn()
	if err != nil {
		return false
	}
	done := false
	err = rc.Read(func(fd uintptr) bool {
		p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(p, 0)
		done = err == nil && n > 0 || err != nil && err != syscall.EINTR
		return done
	})
	return err == nil && done
}

// leaderReaped is called once os/exec has reaped the leader.
func (f *family) leaderReaped() {
	f.mu.Lock()
	f.reaped = true
	delete(f.known, f.leader)
	f.mu.Unlock()
	activeLeaders.Delete(f.leader)
	track.leaderReaped(f)
}

// Kinds of census.
const (
	lookFull    = iota // members, by every mark
	lookHeirs          // and say which members hold the pipes
	lookShallow        // the same as lookFull: each orphan is told apart once, so a look is cheap either way
)

// look takes a census and remembers the members seen.
func (f *family) look(kind int) census {
	heirs := kind == lookHeirs
	c := census{live: map[int]procStat{}, holds: map[int]uint8{}}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gone {
		return c
	}
	settled := f.settledLocked()
	src := newProcSource(f.self)
	selfPgid, selfSid := unix.Getpgrp(), 0
	if sid, err := unix.Getsid(0); err == nil {
		selfSid = sid
	}
	member := map[int]procStat{}
	var queue []int
	add := func(s procStat) {
		if s.pid == f.self || s.pid <= 1 {
			return
		}
		if _, ok := member[s.pid]; ok {
			return
		}
		member[s.pid] = s
		queue = append(queue, s.pid)
	}
	byID := func(pid int, start uint64) {
		if s, ok := src.stat(pid); ok && s.start == start {
			add(s)
		}
	}
	if !f.reaped {
		if s, ok := src.stat(f.leader); ok && s.start == f.leaderStart {
			add(s)
		}
	}
	for pid, start := range f.known {
		byID(pid, start)
	}
	if !settled {
		for _, pid := range f.cg.procs() {
			if s, ok := src.stat(pid); ok {
				add(s)
			}
		}
	}
	// A process in the leader's group that is not its descendant.
	for _, s := range src.group(f.leader, f.reaped) {
		add(s)
	}
	lost := false // a member died while it was looked at: its children moved
	orphans := func() { c.unsure += f.orphansLocked(src, member, add) }
	walk := func() {
		for len(queue) > 0 {
			pid := queue[0]
			queue = queue[1:]
			if member[pid].zombie() {
				lost = true
				continue
			}
			kids, ok := src.childrenOK(pid)
			if !ok {
				lost = true
			}
			for _, k := range kids {
				if s, ok := src.stat(k); ok {
					add(s)
				}
			}
		}
	}
	if !settled {
		orphans()
	}
	walk()
	for range 5 {
		if !lost || src.table != nil || settled {
			break
		}
		// A member that exited while it was walked handed its children
		// to the subreaper: read mcptray's children again.
		lost = false
		src.forget(f.self)
		orphans()
		walk()
	}
	f.noteLocked(member, &c, heirs, selfPgid, selfSid)
	if (f.exited || f.reaped) && len(c.live) == 0 && len(c.zombies) == 0 && c.unsure == 0 && (settled || f.cg.empty()) {
		f.gone = true
		track.remove(f)
	}
	return c
}

// orphansLocked tells apart mcptray's children that are not members yet
// (a member's orphans land there), adding f's with add; it returns how
// many could not be told apart. f.mu is held.
func (f *family) orphansLocked(src *procSource, member map[int]procStat, add func(procStat)) (unsure int) {
	childWalks.Add(1)
	for _, k := range src.children(f.self) {
		if _, ok := member[k]; ok || isActiveLeader(k) {
			continue
		}
		if src.table == nil {
			if of, ok := track.child(k); ok && of != f {
				continue // told apart before: another family's, or none's
			}
		}
		s, ok := src.stat(k)
		if !ok {
			continue
		}
		fam, notTold := track.classify(s, src)
		if fam == f {
			add(s)
		}
		if notTold {
			unsure++
		}
	}
	return unsure
}

// settledLocked reports whether f is in a cgroup, its leader has exited
// and the cgroup is empty: then nothing is left that a walk could find
// (its members cannot leave the cgroup, and a zombie is no longer in it),
// and a look reads only the members seen before (for what left the
// cgroup with a privilege, and the zombies among them to reap). The stop
// of a server that ends when its stdin closes costs one read of
// cgroup.events, not a walk of mcptray's children. f.mu is held.
func (f *family) settledLocked() bool {
	return f.cg != nil && (f.exited || f.reaped) && f.cg.empty()
}

// noteLocked fills c from the members a look found (the live ones, the
// zombies to reap, the groups to signal) and remembers them, their groups
// and sessions for the next look and for the tracker. f.mu is held.
func (f *family) noteLocked(member map[int]procStat, c *census, heirs bool, selfPgid, selfSid int) {
	ids := map[int]bool{f.leader: true}
	for pid, s := range member {
		ids[pid], ids[s.pgid], ids[s.sid] = true, true, true
		if s.zombie() {
			if s.ppid == f.self && !isActiveLeader(pid) {
				c.zombies = append(c.zombies, s)
			}
			continue
		}
		c.live[pid] = s
		if f.known[pid] != s.start {
			f.known[pid] = s.start
			track.noteMember(f, procID{PID: pid, Start: s.start})
		}
		if heirs && !s.dying() {
			h, ok := f.holding(pid)
			if h != 0 {
				c.holds[pid] = h
			}
			if !ok {
				c.unsure++
			}
		}
	}
	for pid, start := range f.known {
		if s, ok := member[pid]; !ok || s.start != start || s.zombie() {
			delete(f.known, pid) // gone: its pid may name another process now
			track.dropMember(procID{PID: pid, Start: start})
		}
	}
	delete(ids, selfPgid)
	delete(ids, selfSid)
	delete(ids, 0)
	delete(ids, 1)
	for id := range ids {
		if !f.ids[id] {
			f.ids[id] = true
			track.noteID(f, id)
		}
	}
	groups := map[int]bool{}
	for _, s := range c.live {
		if _, led := member[s.pgid]; s.pgid > 1 && s.pgid != selfPgid && (led || s.pgid == f.leader) {
			groups[s.pgid] = true
		}
	}
	for g := range groups {
		c.groups = append(c.groups, g)
	}
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
		if got, _ := unix.Wait4(z.pid, &ws, unix.WNOHANG, nil); got == z.pid {
			track.reaped(z.pid)
		}
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
// SIGKILL for a while). It returns the members still alive. A cgroup is
// ended first, as one: nothing in it can fork away.
func (f *family) killAll() int {
	f.mu.Lock()
	gone := f.gone
	f.mu.Unlock()
	if gone {
		return 0 // a look found nothing left, the cgroup empty
	}
	deadline := time.Now().Add(5 * time.Second)
	wait := time.Millisecond
	for {
		f.cg.kill()
		c := f.look(lookFull)
		c.send(syscall.SIGKILL)
		if len(c.live) == 0 && len(c.zombies) == 0 && f.cg.empty() {
			return 0
		}
		if time.Now().After(deadline) {
			return len(c.live)
		}
		time.Sleep(wait)
		wait = min(2*wait, 50*time.Millisecond)
	}
}

// refresh takes a census and reports whether it found members not seen
// before.
func (f *family) refresh() bool {
	f.mu.Lock()
	before := len(f.known)
	f.mu.Unlock()
	f.look(lookShallow)
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.known) > before
}

// beforeStop looks at the family before its server's stdin closes: once
// the server exits, its children re-parent and only what was seen of them
// (or their token, or the pipes they hold) names them. A family in a
// cgroup needs no look: the cgroup names every member whatever its parent.
func (f *family) beforeStop() {
	if f.cg == nil {
		f.refresh()
	}
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

// watch has the tracker look at the family now and then until exited is
// closed, calling onNew when it found members not seen before.
// A family in a cgroup is not watched: the cgroup is in the record, and
// it holds every member, whatever the census would find.
func (f *family) watch(exited <-chan struct{}, onNew func()) {
	if f.cg == nil {
		track.watch(f, exited, onNew)
	}
}

// close ends the tracking of a family that was stopped: its cgroup is
// removed once empty.
func (f *family) close() {
	f.mu.Lock()
	track.remove(f)
	f.mu.Unlock()
	f.cg.remove()
	if subreaper {
		// A member that became a zombie while the family still claimed
		// it was skipped by the reaper of inherited children, and its
		// SIGCHLD is spent: have it reaped now that it is no one's.
		select {
		case reapSoon <- struct{}{}:
		default: // a look is due already; it will see this family gone
		}
	}
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
			// A process in the middle of an exec may be the heir: look
			// again in a moment (bounded: about half a second).
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
	done := make(chan procStat, len(ps))
	stop := make(chan struct{})
	defer close(stop)
	for _, p := range ps {
		fd, err := unix.PidfdOpen(p.pid, unix.PIDFD_NONBLOCK)
		if err != nil {
			if err == syscall.ESRCH {
				return p, true
			}
			go func() {
				// No pidfd (Linux before 5.10): look now and then.
				for {
					if s, ok := readStat(p.pid); !ok || s.start != p.start || s.zombie() {
						done <- p
						return
					}
					select {
					case <-stop:
						return
					case <-time.After(100 * time.Millisecond):
					}
				}
			}()
			continue
		}
		// The pidfd names whatever process has the pid now: make sure it
		// is the one seen.
		if s, ok := readStat(p.pid); !ok || s.start != p.start || s.zombie() {
			unix.Close(fd)
			return p, true
		}
		file := os.NewFile(uintptr(fd), "pidfd")
		go func() {
			<-stop
			file.Close() // wakes the read below
		}()
		go func() {
			rc, err := file.SyscallConn()
			if err != nil {
				return
			}
			exited := false
			rc.Read(func(fd uintptr) bool {
				pf := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
				n, err := unix.Poll(pf, 0)
				exited = err == nil && n > 0
				return exited || err != nil && err != syscall.EINTR
			})
			if exited {
				done <- p
			}
		}()
	}
	return <-done, true
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
	track.reaped(h.pid)
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

// killStale ends what dead supervisors' records name: each server if it
// still runs with the recorded start time, the family members recorded,
// every process carrying a recorded token, their descendants, the groups
// they lead, and each recorded cgroup with everything in it. It reads the
// processes once for all the records, kills everything at once and then
// waits, bounded, only for what is still alive: a zombie has ended (its
// parent, which may be another process, reaps it). It returns how many
// processes it ended per record.
func killStale(recs []procRecord) []int {
	counts := make([]int, len(recs))
	t := readProcTable()
	me := os.Getpid()
	keep := func(pid int) bool { return pid != me && pid > 1 && t.mine[pid] }
	owner := map[int]int{} // pid → index of its record
	var queue []int
	claim := func(pid, i int) {
		if _, ok := owner[pid]; !ok && keep(pid) {
			owner[pid] = i
			queue = append(queue, pid)
		}
	}
	byToken := map[string]int{}
	for i, rec := range recs {
		if s, ok := t.procs[rec.PID]; ok && s.start == rec.Start {
			claim(rec.PID, i)
		}
		for _, m := range rec.Family {
			if s, ok := t.procs[m.PID]; ok && s.start == m.Start {
				claim(m.PID, i)
			}
		}
		if rec.Token != "" {
			byToken[rec.Token] = i
		}
	}
	if len(byToken) > 0 {
		for pid, s := range t.procs {
			if _, seen := owner[pid]; seen || !t.mine[pid] || s.zombie() {
				continue
			}
			if v, _ := procEnvValue(pid, spawnIDVar); v != "" {
				if i, ok := byToken[v]; ok {
					claim(pid, i)
				}
			}
		}
	}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, k := range t.kids[pid] {
			claim(k, owner[pid])
		}
	}
	for pid, i := range owner {
		s := t.procs[pid]
		if s.zombie() {
			continue
		}
		counts[i]++
		unix.Kill(pid, syscall.SIGKILL)
		if _, led := owner[s.pgid]; led {
			unix.Kill(-s.pgid, syscall.SIGKILL)
		}
	}
	var cgs []string
	for i, rec := range recs {
		if !staleCgroup(rec.Cgroup) {
			continue
		}
		for _, pid := range cgroupProcs(rec.Cgroup) {
			if _, ok := owner[pid]; !ok {
				counts[i]++
			}
		}
		cgroupKill(rec.Cgroup)
		cgs = append(cgs, rec.Cgroup)
	}
	// Those that re-parent to this process (when it is a subreaper
	// ancestor of the dead supervisor, as a test or a session manager can
	// be) are reaped here, each by its pid, once dead.
	deadline := time.Now().Add(2 * time.Second)
	for pid := range owner {
		want := t.procs[pid].start
		for time.Now().Before(deadline) {
			s, ok := readStat(pid)
			if !ok || s.start != want {
				break // gone
			}
			if s.zombie() {
				if s.ppid != me {
					break // ended; its parent reaps it
				}
				// (A Go program's main thread is a zombie a moment before
				// the process can be reaped: try until it can.)
				var ws unix.WaitStatus
				got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil)
				if got == pid {
					track.reaped(pid)
				}
				if got == pid || err != nil {
					break
				}
			}
			time.Sleep(time.Millisecond)
		}
	}
	for _, p := range cgs {
		removeCgroup(p, max(time.Until(deadline), 100*time.Millisecond))
	}
	return counts
}

// staleCgroup reports whether a recorded cgroup is one mcptray made: a
// folder named mcptray-… with cgroup.kill, under a cgroup v2 mount.
func staleCgroup(path string) bool {
	if path == "" || !filepath.IsAbs(path) || !strings.HasPrefix(filepath.Base(path), "mcptray-") {
		return false
	}
	mount := cgroup2Mount()
	if mount == "" || !strings.HasPrefix(path, mount+"/") {
		return false
	}
	_, err := os.Stat(filepath.Join(path, "cgroup.kill"))
	return err == nil
}
