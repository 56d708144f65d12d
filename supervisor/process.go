package supervisor

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// spawnSpec is a resolved, expanded command ready to run.
type spawnSpec struct {
	Path string   // resolved executable
	Args []string // arguments after the command
	Env  []string
	Dir  string

	// Name and Records, when set, put the process in the supervisor's
	// record file while it runs (see pidrecord.go).
	Name    string
	Records *procRecords
	// OnHandoff, when set, is told the pid of the descendant that serves
	// after the server's first process exited 0 (it daemonized).
	OnHandoff func(pid int)
	// Stderr, when set, receives the server's stderr as it is (not into
	// the ring and log file).
	Stderr io.Writer
	// Secrets are masked in the server's stderr before it is kept (the
	// ring behind logs, status and check, and the log file).
	Secrets []string
}

// process is one running server process and the pipes mcptray holds to it.
// The process runs in its own process group (a Job Object on Windows), and
// on Linux its family is tracked beyond the group (see family_linux.go), so
// a stop reaches every process it started.
//
// The server's lifetime is not the first pid's: a server that daemonizes
// (exits 0 at once and leaves a descendant serving on its stdin and
// stdout) lives as long as such an heir does.
type process struct {
	cmd     *exec.Cmd
	pid     int
	started time.Time
	stdin   *os.File // our write end
	stdout  *os.File // our read end
	group   *procGroup
	fam     *family
	recs    *procRecords
	rec     *procRecord
	heir    atomic.Int64 // the descendant serving in the exited leader's place, 0 if none

	// written counts the bytes written to the server's stdin; with what
	// was left unread in the pipe when the leader exited it tells whether
	// the server read any of its input (see consumedInput).
	written     atomic.Int64
	unreadOnce  sync.Once
	unreadAtEnd int
	unreadKnown bool

	exited     chan struct{} // closed once the server ended: the leader exited and no heir is left
	exit       ExitInfo      // valid after exited is closed
	stderrDone chan struct{} // closed once stderr hit EOF (every writer gone)
}

// spawning is held (read) from fork to exec of every server this process
// starts. Between the two the child is a copy of mcptray: it holds every
// pipe of every other server (close-on-exec closes them only at the exec)
// and mcptray's environment, so a census that read it then would count it
// in another server's family and kill it with that family. A census that
// meets a child of mcptray it does not know waits for the writer's side
// (see tracker.classify).
var spawning sync.RWMutex

// spawn starts the process with stdin and stdout on pipes and stderr pumped
// into rg and lf.
func spawn(spec spawnSpec, rg *ring, lf *logFile, maxLine int, now func() time.Time) (*process, error) {
	path, args := commandLine(spec.Path, spec.Args, spec.Env)
	// The token marks every descendant that keeps its environment, so the
	// family is found after it left the process group.
	token := newToken()
	env := setEnv(slices.Clone(spec.Env), spawnIDVar, token)
	newCmd := func() *exec.Cmd {
		cmd := exec.Command(path, args...)
		cmd.Env = env
		cmd.Dir = spec.Dir
		cmd.SysProcAttr = sysProcAttr()
		return cmd
	}
	cmd := newCmd()

	inR, inW, outR, outW, errR, errW, err := stdioPipes()
	if err != nil {
		return nil, err
	}
	files := []*os.File{inR, outW, errW} // child ends, closed after Start
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW

	group, err := newProcGroup()
	if err != nil {
		closeAll(append(files, inW, outR, errR)...)
		return nil, err
	}
	spawning.RLock()
	cg, err := startInCgroup(cmd)
	if errors.Is(err, errCgroupRefused) {
		// Started as before, in mcptray's cgroup.
		again := newCmd()
		again.Stdin, again.Stdout, again.Stderr = cmd.Stdin, cmd.Stdout, cmd.Stderr
		if cmd, err = again, again.Start(); err == nil {
			cgroupsRefused()
		}
	}
	spawning.RUnlock()
	if err != nil {
		group.close()
		closeAll(append(files, inW, outR, errR)...)
		return nil, err
	}
	closeAll(files...)
	p := &process{
		cmd:        cmd,
		pid:        cmd.Process.Pid,
		started:    now(),
		stdin:      inW,
		stdout:     outR,
		group:      group,
		fam:        newFamily(cmd.Process.Pid, token, inW, outR, errR, cg),
		recs:       spec.Records,
		exited:     make(chan struct{}),
		stderrDone: make(chan struct{}),
	}
	if err := group.add(cmd.Process); err != nil {
		// Without the group a stop could leave children behind; better not
		// to run at all.
		cmd.Process.Kill()
		cmd.Wait()
		p.fam.leaderReaped()
		p.fam.killAll()
		group.close()
		closeAll(inW, outR, errR)
		return nil, err
	}
	p.rec = spec.Records.add(spec.Name, p.pid, token, cg.dir())
	go func() {
		defer close(p.stderrDone)
		defer errR.Close()
		if spec.Stderr != nil {
			io.Copy(spec.Stderr, errR)
			return
		}
		pumpStderr(errR, rg, lf, maxLine, now, spec.Secrets)
	}()
	if p.recs != nil && p.rec != nil {
		p.fam.watch(p.exited, func() { p.recs.update(p.rec, p.fam.members()) })
	}
	go func() {
		p.fam.awaitLeader()
		p.noteUnread()
		err := cmd.Wait()
		p.fam.leaderReaped()
		exit := exitInfo(cmd.ProcessState, err)
		if exit.Code == 0 && exit.Signal == "" {
			heirExit, followed := p.fam.followHeirs(func(pid int) {
				if int(p.heir.Swap(int64(pid))) != pid {
					lf.note(now(), "pid %d exited with code 0; pid %d keeps its stdin and stdout and serves in its place", p.pid, pid)
					p.recs.update(p.rec, p.fam.members())
					if spec.OnHandoff != nil {
						spec.OnHandoff(pid)
					}
				}
			})
			if followed {
				exit = heirExit
			}
		}
		p.exit = exit
		p.exit.Time = now()
		p.exit.Uptime = p.exit.Time.Sub(p.started)
		close(p.exited)
	}()
	return p, nil
}

// stdioPipes makes the server's stdin, stdout and stderr pipes: each as
// its read end and write end.
func stdioPipes() (inR, inW, outR, outW, errR, errW *os.File, err error) {
	if inR, inW, err = os.Pipe(); err != nil {
		return
	}
	if outR, outW, err = os.Pipe(); err != nil {
		closeAll(inR, inW)
		return
	}
	if errR, errW, err = os.Pipe(); err != nil {
		closeAll(inR, inW, outR, outW)
	}
	return
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}

// input is the server's stdin as the health check writes to it: the bytes
// are counted.
func (p *process) input() io.WriteCloser { return countingStdin{p} }

type countingStdin struct{ p *process }

func (c countingStdin) Write(b []byte) (int, error) {
	n, err := c.p.stdin.Write(b)
	c.p.written.Add(int64(n))
	return n, err
}

func (c countingStdin) Close() error {
	c.p.noteUnread()
	return c.p.stdin.Close()
}

// noteUnread takes, once, what is left unread in the stdin pipe: when the
// leader exited, or when stdin is closed first (the health check closes
// it once the server's stdout ended, as the server exits).
func (p *process) noteUnread() {
	p.unreadOnce.Do(func() { p.unreadAtEnd, p.unreadKnown = pipeUnread(p.stdin) })
}

// consumedInput says, once the process exited, whether it had read any of
// what was written to its stdin; known is false where a pipe cannot say
// how much is left in it.
func (p *process) consumedInput() (consumed, known bool) {
	p.noteUnread()
	if !p.unreadKnown {
		return false, false
	}
	return p.written.Load() > int64(p.unreadAtEnd), true
}

// diedGrace bounds the wait for the end of a process the health check saw
// die (its stdout ended, or it exited): in real time, as the end is
// already under way, however loaded the machine.
const diedGrace = 5 * time.Second

// ended waits up to d of real time for the process to have ended.
func (p *process) ended(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// waitExit waits up to d (on clock) for the process to exit.
func (p *process) waitExit(clock Clock, d time.Duration) bool {
	select {
	case <-p.exited:
		return true
	default:
	}
	if d <= 0 {
		return false
	}
	t := clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C():
		return false
	}
}

// stop ends the process and everything it started: close stdin (the MCP way
// to ask a stdio server to exit), wait grace, terminate the group, wait
// killGrace, kill the group. It returns once the process is reaped and its
// group is gone (bounded). The caller has called stopping.
func (p *process) stop(clock Clock, grace, killGrace time.Duration) {
	p.noteUnread()
	p.stdin.Close()
	if !p.waitExit(clock, grace) {
		p.group.terminate(p.fam.groupPid())
		p.fam.terminate()
		if !p.waitExit(clock, killGrace) {
			p.group.kill(p.fam.groupPid())
			p.fam.killAll()
			<-p.exited
		}
	}
	p.cleanup()
}

// stopping looks at the family while the server still runs, where it
// must (see family.beforeStop). Call it before anything closes the
// server's stdin.
func (p *process) stopping() {
	p.fam.beforeStop()
}

// servingPID is the pid that serves: the leader, or the heir that took
// over when the leader daemonized.
func (p *process) servingPID() int {
	if h := int(p.heir.Load()); h != 0 {
		return h
	}
	return p.pid
}

// cleanup runs after the server ended: kill what is left of its family (a
// grandchild that outlived its parent is an orphan nobody else will stop),
// and let the stderr pump finish so the last lines are in the ring.
func (p *process) cleanup() {
	<-p.exited
	p.stdin.Close()
	p.group.kill(p.fam.groupPid())
	p.fam.killAll()
	select {
	case <-p.stderrDone:
	case <-time.After(2 * time.Second):
		// A process mcptray could not find (outside the group, on a
		// system without /proc) still holds stderr; do not wait for it.
	}
	p.stdout.Close()
	p.group.close()
	p.fam.close()
	p.recs.remove(p.rec)
}
