package supervisor

import (
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// tracker is what every family of the process shares: which family each
// token, pipe, process group and known member belongs to, and the orphans
// already told apart. An orphan (a process re-parented to mcptray, the
// subreaper) is read once, its environment and open files, and named for
// every family at once; a family's census then costs what that family
// holds. The tracker also looks at the families now and then to record
// their members for the next supervisor, one goroutine for all, and reaps
// the children mcptray inherits that belong to no family.
type tracker struct {
	mu       sync.Mutex
	byToken  map[string]*family
	byPipe   map[uint64]*family
	byLeader map[int]*family // a live leader's pid: its process group
	byID     map[int]*family // process groups and sessions members were seen in
	member   map[procID]*family
	told     map[procID]told // orphans told apart
	// kids are mcptray's children told apart, by pid alone: a child's pid
	// cannot name another process until mcptray reaps it, and every reap
	// here forgets it (reaped). A census then skips other families'
	// orphans without reading even their stat.
	kids     map[int]told
	watched  map[*family]*watch
	wake     chan struct{}
	watching bool
}

// told is what an orphan was found to be: f nil for a process of no family
// (looked at again after toldFor: a family may learn its session since).
type told struct {
	f  *family
	at time.Time
}

const toldFor = time.Second

// watch is a family's schedule of looks for the record file.
type watch struct {
	next   time.Time
	delay  time.Duration
	onNew  func()
	exited <-chan struct{}
}

var track = &tracker{
	byToken: map[string]*family{}, byPipe: map[uint64]*family{}, byLeader: map[int]*family{},
	byID: map[int]*family{}, member: map[procID]*family{}, told: map[procID]told{}, kids: map[int]told{},
	watched: map[*family]*watch{}, wake: make(chan struct{}, 1),
}

func (t *tracker) add(f *family) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if f.token != "" {
		t.byToken[f.token] = f
	}
	for _, ino := range f.pipes {
		if ino != 0 {
			t.byPipe[ino] = f
		}
	}
	t.byLeader[f.leader] = f
	if f.leaderStart != 0 {
		t.member[procID{PID: f.leader, Start: f.leaderStart}] = f
	}
}

// remove forgets f. The caller holds f.mu.
func (t *tracker) remove(f *family) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byToken[f.token] == f {
		delete(t.byToken, f.token)
	}
	for _, ino := range f.pipes {
		if t.byPipe[ino] == f {
			delete(t.byPipe, ino)
		}
	}
	if t.byLeader[f.leader] == f {
		delete(t.byLeader, f.leader)
	}
	for id := range f.ids {
		if t.byID[id] == f {
			delete(t.byID, id)
		}
	}
	for pid, start := range f.known {
		if id := (procID{PID: pid, Start: start}); t.member[id] == f {
			delete(t.member, id)
		}
	}
	delete(t.member, procID{PID: f.leader, Start: f.leaderStart})
	for id, k := range t.told {
		if k.f == f {
			delete(t.told, id)
		}
	}
	for pid, k := range t.kids {
		if k.f == f {
			delete(t.kids, pid)
		}
	}
	delete(t.watched, f)
}

func (t *tracker) leaderReaped(f *family) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byLeader[f.leader] == f {
		delete(t.byLeader, f.leader)
	}
}

// child says what a child of mcptray was told to be, without reading it.
func (t *tracker) child(pid int) (f *family, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	k, ok := t.kids[pid]
	if ok && k.f == nil && time.Since(k.at) >= toldFor {
		return nil, false
	}
	return k.f, ok
}

// reaped forgets a child of mcptray that was reaped: its pid is free.
func (t *tracker) reaped(pid int) {
	t.mu.Lock()
	delete(t.kids, pid)
	t.mu.Unlock()
}

func (t *tracker) noteMember(f *family, id procID) {
	t.mu.Lock()
	t.member[id] = f
	t.mu.Unlock()
}

func (t *tracker) dropMember(id procID) {
	t.mu.Lock()
	delete(t.member, id)
	delete(t.told, id)
	t.mu.Unlock()
}

func (t *tracker) noteID(f *family, id int) {
	t.mu.Lock()
	if t.byID[id] == nil {
		t.byID[id] = f
	}
	t.mu.Unlock()
}

// classify says which family an orphan belongs to (nil: none); unsure is
// true when it could not be told (its environment and open files could
// not be read, as in the middle of an exec).
func (t *tracker) classify(s procStat, src *procSource) (f *family, unsure bool) {
	id := procID{PID: s.pid, Start: s.start}
	now := time.Now()
	// Held while the orphan is read: families looking at once wait for
	// the first one's answer instead of each reading it again.
	t.mu.Lock()
	defer t.mu.Unlock()
	remember := func(f *family) {
		t.told[id] = told{f: f, at: now}
		if s.ppid == src.self {
			t.kids[s.pid] = told{f: f, at: now}
		}
	}
	if f := t.member[id]; f != nil {
		remember(f)
		return f, false
	}
	if k, ok := t.told[id]; ok && (k.f != nil || now.Sub(k.at) < toldFor) {
		return k.f, false
	}
	if f := t.byLeader[s.pgid]; f != nil && !s.dying() {
		remember(f)
		return f, false
	}
	byID := func() *family {
		for _, i := range []int{s.pid, s.pgid, s.sid} {
			if f := t.byID[i]; f != nil {
				return f
			}
		}
		return nil
	}
	if s.dying() {
		// Dead (or exiting) before it was seen: nothing of it can be read,
		// its group or session may say whose it was (the middle process
		// of a double fork). A live look at it follows if it is not dead
		// yet, once the cached answer runs out.
		f := byID()
		if s.zombie() || f != nil {
			remember(f)
		}
		return f, false
	}
	if s.ppid == src.self {
		// A child being spawned is not yet itself (see spawning): once no
		// start is between fork and exec, it is.
		spawning.Lock()
		//lint:ignore SA2001 a barrier: it waits for the starts in flight
		spawning.Unlock()
	}
	token, envOK := procEnvValue(s.pid, spawnIDVar)
	inos, fdOK := pipeInodes(s.pid)
	if token != "" {
		f = t.byToken[token]
	}
	for ino := range inos {
		if f != nil {
			break
		}
		f = t.byPipe[ino]
	}
	if f == nil {
		f = byID()
	}
	if f == nil && (!envOK || !fdOK) {
		return nil, true
	}
	remember(f)
	return f, false
}

// owns reports whether a zombie child belongs to a family, which reaps it
// (and may want its exit status: an heir's).
func (t *tracker) owns(s procStat) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.member[procID{PID: s.pid, Start: s.start}] != nil || t.told[procID{PID: s.pid, Start: s.start}].f != nil {
		return true
	}
	return t.byID[s.pid] != nil || t.byID[s.pgid] != nil || t.byID[s.sid] != nil
}

// watch looks at f soon after its start (when servers start their
// helpers) and then less and less often, calling onNew when a look found
// members not seen before, until exited is closed. One goroutine serves
// every family.
func (t *tracker) watch(f *family, exited <-chan struct{}, onNew func()) {
	t.mu.Lock()
	t.watched[f] = &watch{next: time.Now().Add(50 * time.Millisecond), delay: 50 * time.Millisecond, onNew: onNew, exited: exited}
	if !t.watching {
		t.watching = true
		go t.watchLoop()
	}
	t.mu.Unlock()
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

func (t *tracker) watchLoop() {
	timer := time.NewTimer(time.Hour)
	for {
		now := time.Now()
		var due []*family
		var ws []*watch
		next := now.Add(time.Hour)
		t.mu.Lock()
		for f, w := range t.watched {
			select {
			case <-w.exited:
				delete(t.watched, f)
				continue
			default:
			}
			if !w.next.After(now) {
				due = append(due, f)
				ws = append(ws, w)
				w.delay = min(2*w.delay, 30*time.Second)
				w.next = now.Add(w.delay)
			}
			if w.next.Before(next) {
				next = w.next
			}
		}
		t.mu.Unlock()
		for i, f := range due {
			if f.refresh() {
				ws[i].onNew()
			}
		}
		timer.Reset(time.Until(next))
		select {
		case <-timer.C:
		case <-t.wake:
			timer.Stop() // (since Go 1.23 no stale tick follows a Stop)
		}
	}
}

// procSource reads the processes a census looks at, each at most once per
// census: from /proc/PID/stat and the children files where the kernel has
// them and mcptray is a subreaper (so its orphans are its children), else
// from one read of all of /proc.
type procSource struct {
	self   int
	table  *procTable
	stats  map[int]procStat
	gone   map[int]bool
	kids   map[int][]int
	kidsOK map[int]bool
}

func newProcSource(self int) *procSource {
	s := &procSource{self: self, stats: map[int]procStat{}, gone: map[int]bool{}, kids: map[int][]int{}, kidsOK: map[int]bool{}}
	if !subreaper || !childFiles {
		s.table = readProcTable()
	}
	return s
}

func (s *procSource) stat(pid int) (procStat, bool) {
	if s.table != nil {
		p, ok := s.table.procs[pid]
		return p, ok
	}
	if p, ok := s.stats[pid]; ok {
		return p, true
	}
	if s.gone[pid] {
		return procStat{}, false
	}
	p, ok := readStat(pid)
	if !ok {
		s.gone[pid] = true
		return p, false
	}
	s.stats[pid] = p
	return p, true
}

// childrenOK lists pid's children; ok is false when pid is gone.
func (s *procSource) childrenOK(pid int) ([]int, bool) {
	if s.table != nil {
		_, ok := s.table.procs[pid]
		return s.table.kids[pid], ok
	}
	if k, ok := s.kids[pid]; ok {
		return k, s.kidsOK[pid]
	}
	k, gone, _ := listChildren(pid)
	s.kids[pid], s.kidsOK[pid] = k, !gone
	return k, !gone
}

// children lists the processes to tell apart as orphans: mcptray's
// children, or every process of the user where orphans go to init.
func (s *procSource) children(self int) []int {
	if s.table != nil {
		var out []int
		for pid := range s.table.procs {
			if s.table.mine[pid] {
				out = append(out, pid)
			}
		}
		return out
	}
	k, _ := s.childrenOK(self)
	return k
}

// forget drops what was read of pid's children, to read them again.
func (s *procSource) forget(pid int) { delete(s.kids, pid) }

// group lists the processes of the leader's group (known only from a
// read of all of /proc; otherwise those that left its subtree are
// orphans, told apart by their group).
func (s *procSource) group(leader int, reaped bool) []procStat {
	if s.table == nil || reaped {
		return nil
	}
	var out []procStat
	for _, p := range s.table.procs {
		if p.pgid == leader && s.table.mine[p.pid] {
			out = append(out, p)
		}
	}
	return out
}

// reapInherited reaps, on every SIGCHLD, the zombie children that nobody
// else waits for: orphans mcptray inherited as a subreaper that no family
// claims (the servers of a daemon killed under the desktop app, which
// would otherwise stay <defunct> until the app quits and keep the next
// daemon's cleaner waiting). A child some code in this process waits for
// is never taken from it: os/exec's children are named by a pidfd this
// process holds, and children started without a process group of their
// own share mcptray's.
func reapInherited() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGCHLD)
	reapOrphans()
	for {
		select {
		case <-ch:
		case <-reapSoon:
		}
		reapOrphans()
	}
}

// reapSoon asks reapInherited for a look at mcptray's children without a
// SIGCHLD (see family.close): families that close at once share one look.
var reapSoon = make(chan struct{}, 1)

func reapOrphans() {
	// Most looks find no child to reap, or only a server's process that
	// os/exec reaps itself: one waitid, which reaps nothing, says so
	// without a read of every thread's children. An orphan that ended
	// beside a server's process is seen at the next look, which the
	// server's family asks for once it is closed (family.close), after
	// os/exec reaped the server's process.
	if pid, ok := zombieChild(); ok && (pid == 0 || isActiveLeader(pid)) {
		return
	}
	self, pg := os.Getpid(), unix.Getpgrp()
	kids, ok := childrenOf(self)
	if !ok {
		kids = readProcTable().kids[self]
	}
	var held map[int]bool
	for _, k := range kids {
		if isActiveLeader(k) {
			continue
		}
		if f, ok := track.child(k); ok && f != nil {
			continue // a family's: it reaps its own
		}
		s, ok := readStat(k)
		if !ok || !s.zombie() || s.ppid != self || s.pgid == pg || track.owns(s) {
			continue
		}
		if held == nil {
			held = pidfdsHeld()
			if held == nil {
				return // cannot tell whose they are
			}
		}
		if held[k] {
			continue
		}
		var ws unix.WaitStatus
		if got, _ := unix.Wait4(k, &ws, unix.WNOHANG, nil); got == k {
			track.reaped(k)
			noteInheritedExit(k, ws)
		}
	}
}

// siPidOffset is where si_pid is in a siginfo_t: after si_signo,
// si_errno and si_code, and on 64-bit systems a pad to align the union.
const siPidOffset = 3*4 + (unsafe.Sizeof(uintptr(0)) - 4)

// zombieChild is a child of this process that has exited and is not
// reaped yet, 0 when there is none; ok is false when the kernel could not
// say. It reaps nothing (WNOWAIT).
func zombieChild() (pid int, ok bool) {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	switch {
	case err == unix.ECHILD:
		return 0, true
	case err != nil:
		return 0, false
	case info.Signo == 0:
		return 0, true // WNOHANG: none has exited
	}
	return int(*(*int32)(unsafe.Add(unsafe.Pointer(&info), siPidOffset))), true
}

// inheritedExits are how the last inherited children reaped here ended
// (the daemon the desktop app started, killed: what its notification says),
// by pid, newest last; at most inheritedExitsKept.
var (
	inheritedMu    sync.Mutex
	inheritedExits []inheritedExit
)

type inheritedExit struct {
	pid  int
	exit ExitInfo
}

const inheritedExitsKept = 64

func noteInheritedExit(pid int, ws unix.WaitStatus) {
	e := ExitInfo{Code: ws.ExitStatus(), Time: time.Now()}
	if ws.Signaled() {
		e = ExitInfo{Code: -1, Signal: unix.SignalName(ws.Signal()), Time: e.Time}
	}
	inheritedMu.Lock()
	defer inheritedMu.Unlock()
	if len(inheritedExits) == inheritedExitsKept {
		inheritedExits = append(inheritedExits[:0], inheritedExits[1:]...)
	}
	inheritedExits = append(inheritedExits, inheritedExit{pid: pid, exit: e})
}

// InheritedExit says how process pid ended, when this process inherited
// it as a child subreaper ([AdoptOrphans]) and reaped it.
func InheritedExit(pid int) (ExitInfo, bool) {
	inheritedMu.Lock()
	defer inheritedMu.Unlock()
	for i := len(inheritedExits) - 1; i >= 0; i-- {
		if inheritedExits[i].pid == pid {
			return inheritedExits[i].exit, true
		}
	}
	return ExitInfo{}, false
}

// AdoptOrphans makes this process a child subreaper that reaps every child
// it inherits and no one else waits for (see reapInherited): the desktop
// app does, so that the daemon it starts, and whatever that daemon leaves
// when it is killed, end as its children, are reaped at once, and say how
// they ended. It does nothing, and says false, where os/exec's children
// are not named by pidfds (Linux before 5.4): the reaper could not tell
// them from the orphans.
func AdoptOrphans() bool {
	if !pidfdsUsed() {
		return false
	}
	becomeSubreaper()
	return subreaper
}

// pidfdsUsed makes the checks Go's os package makes before it names its
// children by pidfds (os/pidfd_linux.go): pidfd_open, waitid(P_PIDFD)
// and pidfd_send_signal all work.
func pidfdsUsed() bool {
	fd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	for {
		err = unix.Waitid(unix.P_PIDFD, fd, nil, unix.WEXITED|unix.WNOHANG, nil)
		if err != syscall.EINTR {
			break
		}
	}
	if err != syscall.ECHILD {
		return false // this process is no child of its own: only ECHILD says the call works
	}
	return unix.PidfdSendSignal(fd, 0, nil, 0) == nil
}

// pidfdsHeld lists the processes this process holds a pidfd of (os/exec
// holds one for every child it will wait for); nil when that cannot be
// told.
func pidfdsHeld() map[int]bool {
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return nil
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil
	}
	out := map[int]bool{}
	for _, n := range names {
		l, err := os.Readlink("/proc/self/fd/" + n)
		if err != nil || l != "anon_inode:[pidfd]" {
			continue
		}
		b, err := os.ReadFile("/proc/self/fdinfo/" + n)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Pid:"); ok {
				if pid, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
					out[pid] = true
				}
			}
		}
	}
	return out
}
