//go:build unix

package realclients

import (
	"os/exec"
	"syscall"
	"time"
)

// ownGroup makes cmd lead a process group of its own.
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// killGroup kills cmd's process group: what the server started goes too.
func killGroup(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }

// endProcess asks process pid (not a child of the test: a daemon a bridge
// started detached) to stop, and reports whether it was gone within d.
func endProcess(pid int, d time.Duration) bool {
	if syscall.Kill(pid, syscall.SIGTERM) != nil {
		return true
	}
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if syscall.Kill(pid, 0) != nil {
			return true
		}
	}
	return false
}
