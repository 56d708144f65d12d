//go:build unix

package app

import (
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// waitProcessGone returns when process pid no longer exists. The daemon is
// not this process's child (it was re-parented away), so there is nothing
// to wait on; its exit only shows as the pid going away.
func waitProcessGone(pid int) {
	for unix.Kill(pid, 0) != syscall.ESRCH {
		time.Sleep(100 * time.Millisecond)
	}
}

// redirectOutput points stdout and stderr (the daemon's log) at f.
func redirectOutput(f *os.File) {
	_ = unix.Dup2(int(f.Fd()), 1)
	_ = unix.Dup2(int(f.Fd()), 2)
}
