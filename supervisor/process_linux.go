package supervisor

import "syscall"

// sysProcAttr puts the server in its own process group, so a stop signals
// everything it started, and asks the kernel to kill it if mcptray dies
// without stopping it.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
