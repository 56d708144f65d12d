package app

import (
	"os"
	"os/exec"
)

// execGUI runs the desktop app and waits for it (Windows has no exec).
func execGUI(path string, args []string) error {
	cmd := exec.Command(path, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	return cmd.Run()
}
