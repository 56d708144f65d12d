package app

import (
	"os/exec"
	"syscall"
)

// detach makes cmd outlive the process that starts it: no console, a
// process group of its own.
func detach(cmd *exec.Cmd) {
	const detachedProcess = 0x00000008
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP | detachedProcess}
}
