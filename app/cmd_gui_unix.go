//go:build unix

package app

import (
	"os"
	"syscall"
)

// execGUI replaces this process with the desktop app: same pid, same
// terminal, signals go straight to it.
func execGUI(path string, args []string) error {
	return syscall.Exec(path, append([]string{path}, args...), os.Environ())
}
