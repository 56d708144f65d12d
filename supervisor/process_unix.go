//go:build unix

package supervisor

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// procGroup is the process group the server leads (Setpgid).
type procGroup struct{}

func newProcGroup() (*procGroup, error)                            { return &procGroup{}, nil }
func (*procGroup) add(*os.Process) error                           { return nil }
func (*procGroup) close()                                          {}
func (*procGroup) terminate(pid int)                               { signalGroup(pid, syscall.SIGTERM) }
func (*procGroup) kill(pid int)                                    { signalGroup(pid, syscall.SIGKILL) }
func commandLine(path string, args, _ []string) (string, []string) { return path, args }

func signalGroup(pid int, sig syscall.Signal) {
	if pid <= 0 {
		return
	}
	if err := syscall.Kill(-pid, sig); errors.Is(err, syscall.ESRCH) {
		// Not a group leader any more (or never was): the process alone.
		syscall.Kill(pid, sig)
	}
}

func exitInfo(ps *os.ProcessState, err error) ExitInfo {
	if ps == nil {
		return ExitInfo{Code: -1}
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ExitInfo{Code: -1, Signal: unix.SignalName(ws.Signal())}
	}
	return ExitInfo{Code: ps.ExitCode()}
}
