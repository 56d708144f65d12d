package app

import (
	"fmt"
	"io"
)

// Version is mcptray's version, set at build time with
// -ldflags "-X mcptray/app.Version=…".
var Version = "0.1.0-dev"

// Env is what a command runs with: its streams and how to find itself.
type Env struct {
	Stdout, Stderr io.Writer
	Stdin          io.Reader
	// Exe is the path of the running mcptray binary (used for the demo server
	// in a first-run config).
	Exe string
	// Getenv reads mcptray's environment.
	LookupEnv func(string) (string, bool)
	// Desktop runs the desktop app (`mcptray`, `mcptray gui`); nil in the
	// headless build.
	Desktop DesktopFunc
}

// UsageError is bad command-line input: printed with usage, exit 2.
type UsageError struct{ Msg string }

func (e UsageError) Error() string { return e.Msg }

func Usagef(format string, args ...any) error { return UsageError{fmt.Sprintf(format, args...)} }

// DesktopFunc runs the desktop app with its arguments (--config, --hide) and
// returns the exit code.
type DesktopFunc func(args []string, env *Env) int

// HeadlessBuild is the build tag of the binary without the desktop app.
const HeadlessBuild = "nogui"
