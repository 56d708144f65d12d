package app

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"mcptray/control"
)

// DaemonLogName is the log of a daemon started in the background (by a
// bridge, the desktop app or `mcptray daemon --detach`), beside the socket.
const DaemonLogName = "daemon.log"

// DaemonLogMax is the size past which a daemon starting rotates
// daemon.log to daemon.log.1 (one old file is kept).
const DaemonLogMax = 1 << 20

// LaunchDaemon starts `mcptray daemon` (cfgFlag its --config) so that it
// belongs to no client: this process, itself started in a session of its
// own, starts the daemon in another new session and exits at once, so the
// daemon is re-parented away from the tree of whoever asked (an AI client
// that ends every descendant of its MCP servers when it quits never
// reaches it). The daemon's output is appended to daemon.log; its pid is
// printed on stdout.
func LaunchDaemon(env *Env, cfgFlag string) error {
	exe, err := HeadlessBinary()
	if err != nil {
		return err
	}
	dir, err := control.Dir()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	logPath := filepath.Join(dir, DaemonLogName)
	// O_APPEND: a daemon still writing its log (one that lost the lock, or
	// one stopping) keeps its lines; nobody truncates another's.
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	args := []string{"daemon"}
	if cfgFlag != "" {
		// The daemon runs in the home folder: a relative path would move.
		if abs, err := filepath.Abs(cfgFlag); err == nil {
			cfgFlag = abs
		}
		args = append(args, "--config", cfgFlag)
	}
	cmd := exec.Command(exe, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, logf, logf
	if home, err := os.UserHomeDir(); err == nil {
		cmd.Dir = home
	}
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the daemon: %w", err)
	}
	pid := cmd.Process.Pid
	cmd.Process.Release()
	fmt.Fprintln(env.Stdout, pid)
	fmt.Fprintf(env.Stderr, "mcptray: started the daemon in the background (pid %d); its log: %s\n", pid, logPath)
	return nil
}

// startDetachedDaemon runs `exe daemon --detach args...` and returns the
// daemon it started, followed until it exits.
func startDetachedDaemon(exe string, args []string, logPath string) (*startedDaemon, error) {
	cmd := exec.Command(exe, append([]string{"daemon", "--detach"}, args...)...)
	cmd.Stdin = nil
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if home, err := os.UserHomeDir(); err == nil {
		cmd.Dir = home
	}
	detach(cmd)
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("mcptray daemon --detach: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil || pid <= 0 {
		return nil, fmt.Errorf("mcptray daemon --detach printed %q, not a pid", out)
	}
	d := &startedDaemon{log: logPath, done: make(chan struct{})}
	go func() {
		waitProcessGone(pid)
		d.err = fmt.Errorf("the daemon (pid %d) exited", pid)
		close(d.done)
	}()
	return d, nil
}

// rotateDaemonLog, in a daemon that holds the lock, moves a big daemon.log
// to daemon.log.1 and goes on in a new daemon.log, when that file is this
// process's stderr. Only the lock's holder rotates, so no running daemon's
// file is cut; a daemon that lost the lock and still writes to the old
// file writes to daemon.log.1, intact.
func rotateDaemonLog(dir string) {
	path := filepath.Join(dir, DaemonLogName)
	fi, err := os.Stat(path)
	if err != nil || fi.Size() < DaemonLogMax {
		return
	}
	mine, err := os.Stderr.Stat()
	if err != nil || !os.SameFile(fi, mine) {
		return
	}
	if err := os.Rename(path, path+".1"); err != nil {
		return
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	redirectOutput(f)
}

// stopSignal records the signal that ends the daemon, so that its last
// log line can say why it stopped.
type stopSignal struct {
	mu  sync.Mutex // protects sig
	sig os.Signal
}

func watchStopSignal() (*stopSignal, func()) {
	s := &stopSignal{}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case sig := <-ch:
				s.mu.Lock()
				if s.sig == nil {
					s.sig = sig
				}
				s.mu.Unlock()
			case <-done:
				return
			}
		}
	}()
	return s, func() { signal.Stop(ch); close(done) }
}

// reason says what ended the daemon: the signal, else "its context ended".
func (s *stopSignal) reason() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sig == nil {
		return "its run ended"
	}
	name := s.sig.String()
	if s.sig == syscall.SIGTERM {
		name = "SIGTERM"
	} else if s.sig == os.Interrupt {
		name = "SIGINT"
	}
	return "signal " + name + " (from the system, the service manager or a kill)"
}
