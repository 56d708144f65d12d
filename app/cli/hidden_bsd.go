//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package cli

import "golang.org/x/sys/unix"

// echoOff turns the terminal fd's echo off (line editing and signals
// stay) and returns what puts it back.
func echoOff(fd int) (restore func(), ok bool) {
	return termiosEchoOff(fd, unix.TIOCGETA, unix.TIOCSETA)
}
