package supervisor

import (
	"time"

	"mcptray/healthcheck"
	"mcptray/registry"
)

// State is where a server is in its life.
type State string

// States. A process-less remote server uses the same model: starting while it
// connects, ready/degraded/unhealthy from the health check, backoff between
// reconnects.
const (
	StateStopped      State = "stopped"       // not running, by choice or after a clean exit
	StateStarting     State = "starting"      // spawned (or connecting), handshake not done
	StateRunning      State = "running"       // process up, no health check configured
	StateReady        State = "ready"         // handshake done, probes pass
	StateDegraded     State = "degraded"      // ready, but a declared capability failed to list
	StateUnhealthy    State = "unhealthy"     // probes fail or time out; about to restart or reconnect
	StateBackoff      State = "backoff"       // waiting until NextAttempt to start again
	StateCrashLooping State = "crash-looping" // crashed too often; given up until started again
	StateFailed       State = "failed"        // cannot start (bad config, command not found, ...); not retried
	// StateSignIn: a remote server that wants a (new) sign-in; it waits
	// for one (`mcptray auth login`, the app's Sign in), which restarts it.
	StateSignIn   State = "sign-in-required"
	StateStopping State = "stopping" // stop in progress
)

// Reasons of a server that has not been started yet.
const (
	ReasonNotStarted = "not started"
	ReasonLazy       = `starts with its first client (start = "lazy")`
	ReasonManual     = `not started with mcptray (start = "manual")`
)

// Alive reports whether the state has a process or connection in use.
func (s State) Alive() bool {
	switch s {
	case StateStarting, StateRunning, StateReady, StateDegraded, StateUnhealthy, StateStopping:
		return true
	}
	return false
}

// ExitInfo describes how a process ended.
type ExitInfo struct {
	Code   int           `json:"code"`             // -1 when killed by a signal
	Signal string        `json:"signal,omitempty"` // e.g. "SIGKILL"
	Uptime time.Duration `json:"uptime"`
	Time   time.Time     `json:"time"`
}

// Describe says how the process ended, for a person.
func (e ExitInfo) Describe() string {
	if e.Signal != "" {
		return "killed by " + e.Signal + " after " + roundDuration(e.Uptime)
	}
	return "exited with code " + itoa(e.Code) + " after " + roundDuration(e.Uptime)
}

// ServerState is one server's entry in a [Snapshot]. Pointers and slices in
// it are shared between snapshots and must not be modified.
type ServerState struct {
	Name string
	// Server is the entry as written in the config (references unexpanded).
	Server    *registry.Server
	Transport registry.Transport

	State  State
	Reason string    // why it is in State, in a sentence
	Since  time.Time // when it entered State

	PID int // 0 when no process runs
	// Command is the command as written and the file it resolved to
	// ("npx → /usr/local/bin/npx"); empty for remote servers.
	Command      string
	ResolvedPath string
	StartedAt    time.Time // of the current process or connection; zero when none

	Restarts    int       // automatic and requested restarts since mcptray started it
	NextAttempt time.Time // in backoff: when the next start happens
	LastExit    *ExitInfo // of the last process, nil before the first exit

	// StderrTail holds the last stderr lines (up to 20).
	StderrTail []LogLine

	// Diagnosis is the current problem, nil when there is none.
	Diagnosis *healthcheck.Diagnosis
	// Report is what the health check found out, from the last successful
	// connection.
	Report *healthcheck.Report
	Probes healthcheck.ProbeStats
	// Era is the protocol era the server spoke last, kept across restarts.
	Era healthcheck.Era

	// Warnings are the problems that do not stop the server from working
	// (stdout noise, a deprecated transport, a list that failed, a server
	// that keeps crashing and coming back): shown as warnings everywhere.
	Warnings []healthcheck.Diagnosis
	// LastLive is when the server was last seen working: its handshake or
	// last good probe, or the end of its last live run. Report and the
	// tools in it are as of then once the server is no longer up.
	LastLive time.Time
	// Failures counts the failed starts (or connections) since the last
	// stable run: what the backoff grows with.
	Failures int
	// Level is the one-glance colour of the state: what the tray, the
	// window and check show.
	Level Level

	// How clients start and stop it (see demand.go).
	//
	// Start is the entry's effective start mode; IdleStop its idle_stop
	// (0: never).
	Start    registry.StartMode
	IdleStop time.Duration
	// WaitsForClient: stopped, and the next client's use starts it: a
	// lazy server not started yet, or one stopped by idle_stop.
	WaitsForClient bool
	// Clients counts the clients that hold it ([Supervisor.Acquire]
	// without [Supervisor.Release]).
	Clients int
	// LastUse is when a client last used it, or when it was last started:
	// what idle_stop counts from. Zero before the engine ran it.
	LastUse time.Time
	// InstanceOf names the configured server this is a per-session
	// instance of (share = false), "" for a configured server.
	InstanceOf string
	// Instances counts the instances of a share = false server.
	Instances int
}

// Level is how a server's state looks at a glance.
type Level string

const (
	LevelIdle  Level = "idle"  // stopped or disabled (grey)
	LevelOK    Level = "ok"    // up, nothing to say (green)
	LevelWarn  Level = "warn"  // up with warnings, starting, or waiting to retry (amber)
	LevelError Level = "error" // not working and not about to (red)
)

// Live reports whether the server's Report describes it as it is now.
func (s *ServerState) Live() bool {
	switch s.State {
	case StateReady, StateDegraded, StateRunning:
		return true
	}
	return false
}

// Uptime is how long the current process or connection has been up at now.
func (s *ServerState) Uptime(now time.Time) time.Duration {
	if s.StartedAt.IsZero() {
		return 0
	}
	return now.Sub(s.StartedAt)
}

// Snapshot is every server's state at one moment, in config-file order.
type Snapshot struct {
	Time    time.Time
	Servers []ServerState
}

// Server returns the state of the server called name, or nil.
func (s Snapshot) Server(name string) *ServerState {
	for i := range s.Servers {
		if s.Servers[i].Name == name {
			return &s.Servers[i]
		}
	}
	return nil
}

// LogLine is one line a server wrote to stderr.
type LogLine struct {
	Seq  uint64    `json:"seq"` // increasing per server, from 1
	Time time.Time `json:"time"`
	Text string    `json:"text"` // valid UTF-8, no line ending
	// Partial marks a piece of a line: a very long line is cut into pieces,
	// and a last line without a newline is kept as it is.
	Partial bool `json:"partial,omitempty"`
}
