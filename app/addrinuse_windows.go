package app

import (
	"errors"
	"syscall"

	"golang.org/x/sys/windows"
)

// addrInUse: winsock reports a taken port as WSAEADDRINUSE, which is not
// syscall.EADDRINUSE (an errno Go invents on Windows).
func addrInUse(err error) bool {
	return errors.Is(err, windows.WSAEADDRINUSE) || errors.Is(err, syscall.EADDRINUSE)
}
