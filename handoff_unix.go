//go:build unix && !nogui

package main

import (
	"os"
	"syscall"
)

// execHeadless replaces this process with the headless build: no second
// process, and the caller (a shell, an AI client holding the bridge's pipes)
// sees the headless build's exit code and signals directly.
func execHeadless(path string, args []string) (int, error) {
	return 0, syscall.Exec(path, append([]string{path}, args...), os.Environ())
}
