//go:build unix

package registry

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// rename replaces to with from; on Unix a rename does not mind readers.
func rename(from, to string) error { return os.Rename(from, to) }

func openNonblock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// canWrite asks the kernel whether this process may write path (a file
// owned by someone else, a read-only mount).
func canWrite(path string) bool { return syscall.Access(path, 2 /* W_OK */) == nil }

// keepOwner gives f the owner and group of like. Replacing a file by rename
// would otherwise hand it to whoever runs mcptray (root under sudo).
func keepOwner(f *os.File, like fs.FileInfo) error {
	st, ok := like.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	mine, err := f.Stat()
	if err != nil {
		return err
	}
	cur, ok := mine.Sys().(*syscall.Stat_t)
	if !ok || cur.Uid == st.Uid && cur.Gid == st.Gid {
		return nil
	}
	if err := f.Chown(int(st.Uid), int(st.Gid)); err != nil {
		if cur.Uid == st.Uid {
			return nil // same owner; a group we are not in is not worth failing for
		}
		return fmt.Errorf("keep the file's owner (uid %d): %w", st.Uid, err)
	}
	return nil
}

// lockFile takes an exclusive flock on a lock file beside path
// (.NAME.lock), waiting up to timeout. The holder removes the lock file
// before it unlocks, so none is left beside the person's file; a waiter that
// then gets the lock of a removed file sees that it is no longer the one at
// the lock's path and starts over.
func lockFile(path string, timeout time.Duration) (unlock func(), err error) {
	name := lockName(path)
	var f *os.File
	err = pollLock(name, timeout, func() (bool, error) {
		if f == nil {
			// Readable by all (it holds nothing), so that one left behind
			// by a crash under sudo does not lock its owner out.
			var err error
			if f, err = os.OpenFile(name, os.O_RDONLY|os.O_CREATE, 0o644); err != nil {
				return false, err
			}
		}
		if ok, err := TryLock(f); !ok {
			return false, err
		}
		held, err1 := f.Stat()
		there, err2 := os.Stat(name)
		if err1 != nil || err2 != nil || !os.SameFile(held, there) {
			f.Close() // the lock of a lock file its holder removed
			f = nil
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		if f != nil {
			f.Close()
		}
		return nil, err
	}
	return func() {
		os.Remove(name)
		Unlock(f)
		f.Close()
	}, nil
}
