//go:build unix && !linux

package supervisor

import (
	"os"
	"syscall"
)

// sysProcAttr puts the server in its own process group, so a stop signals
// everything it started. (Only Linux has a parent-death signal.)
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// pipeUnread: not known here (what FIONREAD says of a pipe's write end
// differs between systems), so a server that died during the handshake is
// always given one more start with initialize.
func pipeUnread(*os.File) (int, bool) { return 0, false }
