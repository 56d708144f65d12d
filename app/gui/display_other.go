//go:build !(linux || freebsd || openbsd || netbsd)

package gui

// checkDisplay: macOS and Windows always have a display for a desktop app.
func checkDisplay() error { return nil }
