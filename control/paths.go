package control

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"mcptray/registry"
)

// SocketName is the control socket's file name inside [Dir].
const SocketName = "mcptray.sock"

// Dir is the folder that holds the control socket and the lock that makes
// one daemon per person: [registry.RuntimeDir], the same for every process
// of the user whatever its environment (an AI client's stripped one
// included).
func Dir() (string, error) {
	d, err := registry.RuntimeDir()
	if err != nil {
		return "", fmt.Errorf("find a folder for the control socket: %w", err)
	}
	return d, nil
}

// DefaultSocket is the control socket's path for this user.
func DefaultSocket() (string, error) {
	d, err := Dir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, SocketName), nil
}

// ErrNoDaemon means nothing answers on the control socket.
var ErrNoDaemon = errors.New("no daemon running; start it with `mcptray daemon` or `mcptray service install`")

// NoDaemonError is [ErrNoDaemon] with the socket that was tried.
type NoDaemonError struct {
	Socket string
	Err    error // the dial error
}

func (e *NoDaemonError) Error() string {
	return ErrNoDaemon.Error() + " (nothing answers on " + e.Socket + ")"
}

// Is makes errors.Is(err, ErrNoDaemon) true.
func (e *NoDaemonError) Is(target error) bool { return target == ErrNoDaemon }

func (e *NoDaemonError) Unwrap() error { return e.Err }

// ErrAlreadyRunning means another daemon of this user owns the socket.
var ErrAlreadyRunning = errors.New("a daemon is already running")

// AlreadyRunningError says where the running daemon is.
type AlreadyRunningError struct {
	Socket string
	PID    int // 0 when unknown
}

func (e *AlreadyRunningError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("a daemon is already running (pid %d), listening on %s", e.PID, e.Socket)
	}
	return "a daemon is already running, listening on " + e.Socket
}

// Is makes errors.Is(err, ErrAlreadyRunning) true.
func (e *AlreadyRunningError) Is(target error) bool { return target == ErrAlreadyRunning }

// stoppedName is the file, beside the socket, that says the daemon was
// stopped on request (POST /v1/shutdown) rather than lost.
const stoppedName = "stopped"

// MarkStopped records, beside socket sock, that its daemon is stopping on
// request: bridges that lose it then end instead of starting another. The
// file holds the time of the stop: its own modification time comes from
// the kernel's coarse clock, which can read a few milliseconds earlier
// than the time a bridge took at its start.
func MarkStopped(sock string) error {
	return os.WriteFile(filepath.Join(filepath.Dir(sock), stoppedName), []byte(time.Now().UTC().Format(time.RFC3339Nano)), 0o600)
}

// ClearStopped removes the mark of [MarkStopped] (a daemon starting).
func ClearStopped(sock string) {
	_ = os.Remove(filepath.Join(filepath.Dir(sock), stoppedName))
}

// StoppedSince says whether the daemon on socket sock was stopped on
// request at or after t: by the time the mark holds, or, for a mark
// without one, its modification time.
func StoppedSince(sock string, t time.Time) bool {
	path := filepath.Join(filepath.Dir(sock), stoppedName)
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	if at, err := time.Parse(time.RFC3339Nano, string(b)); err == nil {
		return !at.Before(t)
	}
	fi, err := os.Stat(path)
	return err == nil && !fi.ModTime().Before(t)
}
