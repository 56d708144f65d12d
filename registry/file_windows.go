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

// openNonblock opens path to read it, retried for a while when it is busy:
// a rename replacing the file holds it with delete access for a moment,
// and an open without FILE_SHARE_DELETE (os.Open's) then gets a sharing
// violation. Windows has no named pipes in the file system to block on.
func openNonblock(path string) (*os.File, error) {
	deadline := time.Now().Add(renameTimeout)
	pause := time.Millisecond
	for {
		f, err := os.Open(path)
		if err == nil || !busy(err) || time.Now().After(deadline) {
			return f, err
		}
		time.Sleep(pause)
		pause = min(pause*2, 50*time.Millisecond)
	}
}

// canWrite: Windows has no access(2); the read-only attribute (mode 0444)
// is checked by the caller.
func canWrite(string) bool { return true }

func keepOwner(*os.File, fs.FileInfo) error { return nil }

// lockFile takes an exclusive LockFileEx lock on a lock file beside path
// (.NAME.lock), waiting up to timeout; the last one out removes it.
func lockFile(path string, timeout time.Duration) (unlock func(), err error) {
	name := lockName(path)
	var f *os.File
	var openErr error // the last open refused as busy, if the wait runs out
	err = pollLock(name, timeout, func() (bool, error) {
		if f == nil {
			var err error
			if f, err = os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644); err != nil {
				f = nil
				// The holder's removal of the lock file leaves it
				// delete-pending for a moment, and an open then is
				// refused (access denied): try again, as for a held lock.
				if busy(err) {
					openErr = err
					if hookLockBusy != nil {
						hookLockBusy()
					}
					return false, nil
				}
				return false, err
			}
		}
		return TryLock(f)
	})
	if err != nil {
		if f != nil {
			f.Close()
		} else if openErr != nil && errors.Is(err, ErrLocked) {
			return nil, fmt.Errorf("lock: %w", openErr)
		}
		return nil, err
	}
	return func() {
		Unlock(f)
		f.Close()
		// Fails while another process has it open (waiting for the lock),
		// which is what keeps two processes from locking two files.
		os.Remove(name)
	}, nil
}

// hookLockBusy, when set by a test, runs when an open of the lock file is
// refused as busy.
var hookLockBusy func()

// busy: the errors Windows gives for a file that another process has open
// in a way that excludes this use, or is removing: they last a moment.
func busy(err error) bool {
	return errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_SHARING_VIOLATION)
}

// renameTimeout bounds how long rename retries a busy target.
const renameTimeout = 5 * time.Second

// rename is os.Rename, retried for a while when the target is busy: on
// Windows a file cannot be replaced while another process has it open
// without FILE_SHARE_DELETE, which is how Go (and most programs) open files
// to read them, so a save fails with "Access is denied" or a sharing
// violation for as long as someone reads the config. Go's own tools retry
// the same way (cmd/go/internal/robustio).
func rename(from, to string) error {
	deadline := time.Now().Add(renameTimeout)
	pause := time.Millisecond
	for {
		err := os.Rename(from, to)
		if err == nil || !busy(err) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(pause)
		pause = min(pause*2, 50*time.Millisecond)
	}
}
