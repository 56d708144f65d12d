//go:build !windows

package healthcheck

import (
	"errors"
	"syscall"
)

func refused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

func reset(err error) bool { return errors.Is(err, syscall.ECONNRESET) }
