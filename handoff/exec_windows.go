package handoff

import (
	"errors"
	"os"
	"os/exec"
	"os/signal"
)

const exeSuffix = ".exe"

// execHeadless runs the headless build as a child on this process's streams
// and returns its exit code (Windows has no exec). Ctrl+C reaches both, as
// they share the console: this process waits for the child to act on it.
func execHeadless(path string, args []string) (int, error) {
	signal.Notify(make(chan os.Signal, 1), os.Interrupt)
	cmd := exec.Command(path, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), nil
	}
	if err != nil {
		return 0, err
	}
	return 0, nil
}
