//go:build unix && !linux

package supervisor

import "syscall"

// sysProcAttr puts the server in its own process group, so a stop signals
// everything it started. (Only Linux has a parent-death signal.)
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
