//go:build unix

package control

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"mcptray/registry"
)

// ListenOptions tunes [Listen].
type ListenOptions struct {
	// Allow decides whether a peer with this uid may talk to the daemon;
	// nil allows only the daemon's own user. Where the system cannot tell
	// the peer's uid, the socket folder's 0700 mode is the only guard.
	Allow func(uid int) bool
	// Logf reports refused peers and a replaced stale socket; nil: silent.
	Logf func(format string, args ...any)
}

// Listener is the daemon's end of the control socket. It holds the lock that
// makes one daemon per user, and refuses peers of other users.
type Listener struct {
	net.Listener
	path  string
	lock  *os.File
	opts  ListenOptions
	close sync.Once
}

// lockName is the file whose flock marks the running daemon; it holds the
// daemon's pid, so a second start can say which process to look at.
const lockName = "mcptray.lock"

// Listen takes the control socket at path: it makes the folder (0700, and
// refuses one owned by someone else), takes the per-user lock (a second
// daemon gets *AlreadyRunningError), replaces a stale socket left by a
// daemon that crashed, and listens with mode 0600. There is no TCP listener.
func Listen(path string, opts *ListenOptions) (*Listener, error) {
	l := &Listener{path: path}
	if opts != nil {
		l.opts = *opts
	}
	if l.opts.Allow == nil {
		me := os.Getuid()
		l.opts.Allow = func(uid int) bool { return uid == me }
	}
	dir := filepath.Dir(path)
	if err := privateDir(dir); err != nil {
		return nil, err
	}
	lock, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("control socket lock: %w", err)
	}
	if ok, err := registry.TryLock(lock); !ok {
		data, _ := os.ReadFile(lock.Name())
		lock.Close()
		if err == nil {
			pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
			return nil, &AlreadyRunningError{Socket: path, PID: pid}
		}
		return nil, fmt.Errorf("control socket lock %s: %w", lock.Name(), err)
	}
	// Holding the lock, any socket file here is a dead daemon's.
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != fs.ModeSocket {
			lock.Close()
			return nil, fmt.Errorf("%s exists and is not a socket; move it away", path)
		}
		if err := os.Remove(path); err != nil {
			lock.Close()
			return nil, fmt.Errorf("remove stale control socket: %w", err)
		}
		l.logf("replaced a stale control socket at %s (a daemon that did not stop cleanly)", path)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("control socket: %w", err)
	}
	// The folder is 0700, so nobody else could connect before this chmod.
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		lock.Close()
		return nil, fmt.Errorf("control socket: %w", err)
	}
	lock.Truncate(0)
	lock.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	l.Listener, l.lock = ln, lock
	return l, nil
}

// privateDir makes dir (0700) or checks that an existing one is a folder of
// ours, tightening its mode if needed.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("control socket folder: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("control socket folder: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("control socket folder %s is not a folder (a symlink?)", dir)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("control socket folder %s belongs to uid %d, not to you (uid %d)", dir, st.Uid, os.Getuid())
	}
	if fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("control socket folder: %w", err)
		}
	}
	return nil
}

// Path is the socket's path.
func (l *Listener) Path() string { return l.path }

// Accept returns the next connection from an allowed peer; connections from
// other users are closed at once.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		uc, ok := c.(*net.UnixConn)
		if !ok {
			return c, nil
		}
		uid, err := peerUID(uc)
		switch {
		case errors.Is(err, errNoPeerCred):
			return c, nil
		case err != nil:
			l.logf("refused a control connection: cannot read its credentials: %v", err)
			c.Close()
		case !l.opts.Allow(uid):
			l.logf("refused a control connection from uid %d", uid)
			c.Close()
		default:
			return c, nil
		}
	}
}

// Close stops listening, removes the socket and releases the lock.
func (l *Listener) Close() error {
	var err error
	l.close.Do(func() {
		err = l.Listener.Close()
		l.lock.Close()
	})
	return err
}

func (l *Listener) logf(format string, args ...any) {
	if l.opts.Logf != nil {
		l.opts.Logf(format, args...)
	}
}

var errNoPeerCred = errors.New("peer credentials not available on this system")

// dial connects to the control socket.
func dial(ctx context.Context, socket string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "unix", socket)
}
