package control

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/Microsoft/go-winio"
	"golang.org/x/sys/windows"

	"mcptray/registry"
)

// On Windows the control endpoint is a named pipe, not an AF_UNIX socket.
// A pipe carries its own security descriptor: the daemon creates it with the
// user as owner and as the only one granted access, so no other account
// (administrators included) can open it, remote clients are refused, and the
// client checks the owner so that a pipe another user created first under
// the same name is never talked to. An AF_UNIX socket on Windows has none of
// that: its file inherits the folder's ACL and the daemon cannot tell who
// connected (there is no peer uid). The pipe's name is derived from the
// socket path (PipeName), so every path mcptray shows and takes (--socket,
// the lock file beside it) works as on the other systems.

// ListenOptions tunes [Listen].
type ListenOptions struct {
	// Allow is not used on Windows: the pipe's security descriptor admits
	// the user alone.
	Allow func(uid int) bool
	// Logf is not used on Windows (a pipe leaves nothing stale behind).
	Logf func(format string, args ...any)
}

// Listener is the daemon's end of the control pipe and the lock that makes
// one daemon per user.
type Listener struct {
	net.Listener
	path  string
	lock  *os.File
	close sync.Once
}

const lockName = "mcptray.lock"

// PipeName is the named pipe that serves the control socket path.
func PipeName(socket string) string {
	p := socket
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	sum := sha256.Sum256([]byte(strings.ToLower(filepath.Clean(p))))
	return `\\.\pipe\mcptray-` + hex.EncodeToString(sum[:8])
}

// pipeSecurity is the pipe's security descriptor (SDDL): owned by the user,
// full access for the user, nobody else listed (P: no inherited entries).
func pipeSecurity() (string, error) {
	sid, err := userSID()
	if err != nil {
		return "", err
	}
	return "O:" + sid.String() + "D:P(A;;GA;;;" + sid.String() + ")", nil
}

func userSID() (*windows.SID, error) {
	u, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return nil, fmt.Errorf("who am I: %w", err)
	}
	return u.User.Sid, nil
}

// Listen takes the control endpoint for path: the per-user lock in path's
// folder (a second daemon gets *AlreadyRunningError), then the named pipe.
func Listen(path string, opts *ListenOptions) (*Listener, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("control socket folder: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("control socket lock: %w", err)
	}
	if ok, err := registry.TryLock(lock); !ok {
		lock.Close()
		data, _ := os.ReadFile(filepath.Join(dir, lockName+".pid"))
		if err == nil {
			pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
			return nil, &AlreadyRunningError{Socket: path, PID: pid}
		}
		return nil, fmt.Errorf("control socket lock: %w", err)
	}
	sd, err := pipeSecurity()
	if err != nil {
		lock.Close()
		return nil, err
	}
	name := PipeName(path)
	// ListenPipe creates the first instance with FILE_CREATE: it fails if
	// anyone (another user squatting the name) created the pipe before.
	ln, err := winio.ListenPipe(name, &winio.PipeConfig{SecurityDescriptor: sd})
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("control pipe %s: %w", name, err)
	}
	// The locked file cannot be read by others on Windows: the pid goes
	// next to it.
	os.WriteFile(filepath.Join(dir, lockName+".pid"), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600)
	return &Listener{Listener: ln, path: path, lock: lock}, nil
}

// Path is the socket path the pipe serves.
func (l *Listener) Path() string { return l.path }

// Close stops listening and releases the lock.
func (l *Listener) Close() error {
	var err error
	l.close.Do(func() {
		err = l.Listener.Close()
		l.lock.Close()
	})
	return err
}

// dial connects to the pipe that serves socket and checks that the user owns
// it.
func dial(ctx context.Context, socket string) (net.Conn, error) {
	c, err := winio.DialPipeContext(ctx, PipeName(socket))
	if err != nil {
		return nil, err
	}
	if err := checkOwner(c); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// checkOwner refuses a pipe that another account created.
func checkOwner(c net.Conn) error {
	f, ok := c.(interface{ Fd() uintptr })
	if !ok {
		return fmt.Errorf("control pipe: cannot read its owner (%T)", c)
	}
	sd, err := windows.GetSecurityInfo(windows.Handle(f.Fd()), windows.SE_KERNEL_OBJECT, windows.OWNER_SECURITY_INFORMATION)
	if err != nil {
		return fmt.Errorf("control pipe: read its owner: %w", err)
	}
	owner, _, err := sd.Owner()
	if err != nil {
		return fmt.Errorf("control pipe: read its owner: %w", err)
	}
	me, err := userSID()
	if err != nil {
		return err
	}
	if !owner.Equals(me) {
		return fmt.Errorf("control pipe belongs to %s, not to you (%s): refused", owner, me)
	}
	return nil
}

// isNoSocket reports a dial error meaning nothing listens.
func isNoSocket(err error) bool {
	return errors.Is(err, windows.ERROR_FILE_NOT_FOUND) || errors.Is(err, windows.ERROR_PATH_NOT_FOUND)
}
