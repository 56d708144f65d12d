//go:build unix

package healthcheck

import (
	"os/exec"
	"syscall"
)

// ownGroup makes cmd lead a process group of its own.
// coarseClock: Unix clocks tell nanoseconds; any exchange takes some.
const coarseClock = false

func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// killGroup kills cmd's process group: what the server started goes too.
func killGroup(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
