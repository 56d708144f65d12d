package healthcheck

import (
	"errors"
	"io"
	"time"

	"mcptray/registry"
)

// Target is what to connect to: a stdio server's pipes (handed over by the
// supervisor, which owns the process) or a remote server's URL.
type Target struct {
	// Server is the entry with ${env:VAR} references already resolved
	// (registry.Server.Expand).
	Server *registry.Server

	// Stdio only: the process's stdin and stdout, and a channel closed when
	// the process has exited, so a handshake can tell "died" from "silent".
	Stdin  io.WriteCloser
	Stdout io.ReadCloser
	Exited <-chan struct{}

	// EraHint is the era remembered from an earlier start of this server
	// ("" means detect).
	EraHint Era
}

// ProbeStats summarises the liveness probes of one server.
type ProbeStats struct {
	Count               int           `json:"count"` // probes so far
	Last                time.Duration `json:"last"`
	Min                 time.Duration `json:"min"`
	Median              time.Duration `json:"median"`
	P95                 time.Duration `json:"p95"`
	ConsecutiveFailures int           `json:"consecutiveFailures"`
	LastError           string        `json:"lastError,omitempty"`
	LastAt              time.Time     `json:"lastAt"`
	// Recent holds the latencies of the last 100 successful probes, oldest
	// first (for the latency chart).
	Recent []time.Duration `json:"-"`
}

// ErrDiedDuringDiscover means the stdio server exited on server/discover, as
// some legacy servers do on an unknown method before initialize: the first
// request it was sent was server/discover, and it exited without answering
// anything (while the discover was pending, or after mcptray gave up on it
// and sent initialize to a server that reads slowly). The caller should
// start the process again and connect with EraHint = EraLegacy, which goes
// straight to initialize and never sends server/discover.
var ErrDiedDuringDiscover = errors.New("server exited on server/discover before initialize")
