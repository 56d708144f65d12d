package supervisor

import (
	"os"
	"os/exec"
	"time"
)

// spawnSpec is a resolved, expanded command ready to run.
type spawnSpec struct {
	Path string   // resolved executable
	Args []string // arguments after the command
	Env  []string
	Dir  string
}

// process is one running server process and the pipes mcptray holds to it.
// The process runs in its own process group (a Job Object on Windows), so a
// stop reaches every process it started.
type process struct {
	cmd     *exec.Cmd
	pid     int
	started time.Time
	stdin   *os.File // our write end
	stdout  *os.File // our read end
	group   *procGroup

	exited     chan struct{} // closed once Wait returned
	exit       ExitInfo      // valid after exited is closed
	stderrDone chan struct{} // closed once stderr hit EOF (every writer gone)
}

// spawn starts the process with stdin and stdout on pipes and stderr pumped
// into rg and lf.
func spawn(spec spawnSpec, rg *ring, lf *logFile, maxLine int, now func() time.Time) (*process, error) {
	path, args := commandLine(spec.Path, spec.Args, spec.Env)
	cmd := exec.Command(path, args...)
	cmd.Env = spec.Env
	cmd.Dir = spec.Dir
	cmd.SysProcAttr = sysProcAttr()

	var files []*os.File // child ends, closed after Start
	closeAll := func(fs ...*os.File) {
		for _, f := range fs {
			if f != nil {
				f.Close()
			}
		}
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, err
	}
	files = append(files, inR, outW, errW)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW

	group, err := newProcGroup()
	if err != nil {
		closeAll(append(files, inW, outR, errR)...)
		return nil, err
	}
	if err := cmd.Start(); err != nil {
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
		exited:     make(chan struct{}),
		stderrDone: make(chan struct{}),
	}
	if err := group.add(cmd.Process); err != nil {
		// Without the group a stop could leave children behind; better not
		// to run at all.
		cmd.Process.Kill()
		cmd.Wait()
		group.close()
		closeAll(inW, outR, errR)
		return nil, err
	}
	go func() {
		defer close(p.stderrDone)
		defer errR.Close()
		pumpStderr(errR, rg, lf, maxLine, now)
	}()
	go func() {
		err := cmd.Wait()
		p.exit = exitInfo(cmd.ProcessState, err)
		p.exit.Time = now()
		p.exit.Uptime = p.exit.Time.Sub(p.started)
		close(p.exited)
	}()
	return p, nil
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
// group is gone (bounded).
func (p *process) stop(clock Clock, grace, killGrace time.Duration) {
	p.stdin.Close()
	if !p.waitExit(clock, grace) {
		p.group.terminate(p.pid)
		if !p.waitExit(clock, killGrace) {
			p.group.kill(p.pid)
			<-p.exited
		}
	}
	p.cleanup()
}

// cleanup runs after the leader exited: kill what is left of the group (a
// grandchild that outlived its parent is an orphan nobody else will stop),
// and let the stderr pump finish so the last lines are in the ring.
func (p *process) cleanup() {
	<-p.exited
	p.stdin.Close()
	p.group.kill(p.pid)
	select {
	case <-p.stderrDone:
	case <-time.After(2 * time.Second):
		// A process outside the group (it called setsid) still holds
		// stderr; do not wait for it.
	}
	p.stdout.Close()
	p.group.close()
}
