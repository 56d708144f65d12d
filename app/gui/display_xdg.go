//go:build linux || freebsd || openbsd || netbsd

package gui

import (
	"errors"
	"os"
)

// checkDisplay fails early, with a sentence, where there is no display to
// open a window on (the toolkit would panic instead).
func checkDisplay() error {
	if os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
		return errors.New("no display to show the desktop app on (DISPLAY and WAYLAND_DISPLAY are unset); " +
			"without one, `mcptray daemon` runs the servers in the background, `mcptray up` in the foreground, and `mcptray check` checks them once")
	}
	return nil
}
