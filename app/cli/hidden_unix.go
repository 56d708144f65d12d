//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package cli

import "golang.org/x/sys/unix"

func termiosEchoOff(fd int, get, set uint) (restore func(), ok bool) {
	old, err := unix.IoctlGetTermios(fd, get)
	if err != nil {
		return nil, false
	}
	n := *old
	n.Lflag &^= unix.ECHO
	n.Lflag |= unix.ICANON | unix.ISIG
	n.Iflag |= unix.ICRNL
	if err := unix.IoctlSetTermios(fd, set, &n); err != nil {
		return nil, false
	}
	return func() { _ = unix.IoctlSetTermios(fd, set, old) }, true
}
