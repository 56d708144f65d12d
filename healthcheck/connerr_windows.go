package healthcheck

import (
	"errors"
	"syscall"

	"golang.org/x/sys/windows"
)

// refused: winsock reports a refused connection as WSAECONNREFUSED, which
// is not syscall.ECONNREFUSED (an errno Go invents on Windows).
func refused(err error) bool {
	return errors.Is(err, windows.WSAECONNREFUSED) || errors.Is(err, syscall.ECONNREFUSED)
}

// reset: winsock's WSAECONNRESET, likewise.
func reset(err error) bool {
	return errors.Is(err, windows.WSAECONNRESET) || errors.Is(err, syscall.ECONNRESET)
}
