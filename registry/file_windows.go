//go:build windows

package registry

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/windows"
)

func openNonblock(path string) (*os.File, error) { return os.Open(path) }

// canWrite: Windows has no access(2); the read-only attribute (mode 0444)
// is checked by the caller.
func canWrite(string) bool { return true }

func keepOwner(*os.File, fs.FileInfo) error { return nil }

// lockFile takes an exclusive LockFileEx lock on a lock file beside path
// (.NAME.lock), waiting up to timeout; the last one out removes it.
func lockFile(path string, timeout time.Duration) (unlock func(), err error) {
	name := lockName(path)
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	h := windows.Handle(f.Fd())
	err = pollLock(name, timeout, func() (bool, error) {
		ol := new(windows.Overlapped)
		err := windows.LockFileEx(h, windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
		if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		windows.UnlockFileEx(h, 0, 1, 0, new(windows.Overlapped))
		f.Close()
		// Fails while another process has it open (waiting for the lock),
		// which is what keeps two processes from locking two files.
		os.Remove(name)
	}, nil
}
