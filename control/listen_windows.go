package control

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/windows"
)

// On Windows the control socket is an AF_UNIX socket (Windows 10 1803 and
// later) in the user's local cache folder, whose ACL admits only the user
// (and administrators). Peer uids do not exist here; the folder's ACL guards.

// ListenOptions tunes [Listen].
type ListenOptions struct {
	// Allow is not used on Windows (no peer uid); see the package notes.
	Allow func(uid int) bool
	// Logf reports a replaced stale socket; nil: silent.
	Logf func(format string, args ...any)
}

// Listener is the daemon's end of the control socket and the lock that makes
// one daemon per user.
type Listener struct {
	net.Listener
	path  string
	lock  *os.File
	close sync.Once
}

const lockName = "mcptray.lock"

// Listen takes the control socket at path; see the Unix version.
func Listen(path string, opts *ListenOptions) (*Listener, error) {
	var o ListenOptions
	if opts != nil {
		o = *opts
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("control socket folder: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("control socket lock: %w", err)
	}
	ol := new(windows.Overlapped)
	if err := windows.LockFileEx(windows.Handle(lock.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol); err != nil {
		lock.Close()
		data, _ := os.ReadFile(filepath.Join(dir, lockName+".pid"))
		if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
			pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
			return nil, &AlreadyRunningError{Socket: path, PID: pid}
		}
		return nil, fmt.Errorf("control socket lock: %w", err)
	}
	if _, err := os.Lstat(path); err == nil {
		if err := os.Remove(path); err != nil {
			lock.Close()
			return nil, fmt.Errorf("remove stale control socket: %w", err)
		}
		if o.Logf != nil {
			o.Logf("replaced a stale control socket at %s", path)
		}
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("control socket: %w", err)
	}
	// The locked file cannot be read by others on Windows: the pid goes
	// next to it.
	os.WriteFile(filepath.Join(dir, lockName+".pid"), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600)
	return &Listener{Listener: ln, path: path, lock: lock}, nil
}

// Path is the socket's path.
func (l *Listener) Path() string { return l.path }

// Close stops listening, removes the socket and releases the lock.
func (l *Listener) Close() error {
	var err error
	l.close.Do(func() {
		err = l.Listener.Close()
		os.Remove(l.path)
		l.lock.Close()
	})
	return err
}

// isNoSocket reports a dial error meaning nothing listens (Windows reports
// a missing or dead AF_UNIX socket with WSA codes).
func isNoSocket(err error) bool {
	return errors.Is(err, windows.WSAECONNREFUSED) || errors.Is(err, windows.ERROR_FILE_NOT_FOUND) || errors.Is(err, windows.ERROR_PATH_NOT_FOUND)
}
