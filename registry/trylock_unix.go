//go:build unix

package registry

import (
	"errors"
	"os"
	"syscall"
)

// TryLock takes an exclusive lock on the open file f without waiting:
// false when another process holds it. It is the one cross-process lock
// mcptray uses, for files a person owns (lockFile) and for the daemon's
// one-per-user lock (control.Listen); the lock lasts until Unlock or until
// f is closed.
func TryLock(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) || errors.Is(err, syscall.EINTR) {
		return false, nil
	}
	return err == nil, err
}

// Unlock releases a lock TryLock took.
func Unlock(f *os.File) {
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}
