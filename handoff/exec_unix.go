//go:build unix

package handoff

import (
	"os"
	"syscall"
)

const exeSuffix = ""

func init() {
	if code, handed := Run(os.Args[1:], os.Stderr); handed {
		os.Exit(code)
	}
}

// execHeadless replaces this process with the headless build: no second
// process, and the caller (a shell, an AI client holding the bridge's pipes)
// sees the headless build's exit code and signals directly.
func execHeadless(path string, args []string) (int, error) {
	return 0, syscall.Exec(path, append([]string{path}, args...), os.Environ())
}
