//go:build !windows

package app

import (
	"os/exec"
	"syscall"
)

// detach makes cmd outlive the process that starts it: a session of its
// own, so the client's terminal or process group ending does not end it.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}
