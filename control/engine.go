package control

import (
	"context"
	"errors"

	"mcptray/registry"
	"mcptray/supervisor"
)

// Engine is what mcptray's front ends drive: the servers of one config file,
// supervised. [Local] runs them in this process; [Client] reaches the ones a
// daemon runs. The desktop app and the command line cannot tell which.
//
// An engine follows its config file: edits saved to it are applied by the
// engine itself, so a front end that saves the file does not reload.
type Engine interface {
	// Snapshot is every server's state, in config-file order.
	Snapshot() supervisor.Snapshot
	// Status is the engine's own condition: its config file, whether that
	// file loads, whether the engine can be reached.
	Status() Status
	// Changes signals (coalesced, never blocking the engine) that Snapshot
	// or Status has something new. It has one reader; others use Watch.
	Changes() <-chan struct{}
	// Watch returns a channel closed at the next change of Snapshot, Status
	// or the transitions; any number may wait. Take it before reading.
	Watch() <-chan struct{}
	// Transitions returns the servers' state transitions with a sequence
	// number of at least since, oldest first, and the number to ask from
	// next; the desktop app's notifications come from them.
	Transitions(since uint64) ([]supervisor.Transition, uint64)

	Start(ctx context.Context, name string) error
	Stop(ctx context.Context, name string) error
	Restart(ctx context.Context, name string) error
	// CheckNow probes a server at once ("" for all).
	CheckNow(ctx context.Context, name string) error
	// Log returns server name's stderr lines with a sequence number of at
	// least since, and the number to ask for next time.
	Log(ctx context.Context, name string, since uint64) ([]supervisor.LogLine, uint64, error)
	// Reload reads the config file again and applies it: added servers
	// start, removed ones stop, changed ones restart, the rest are left
	// alone. A file that does not load changes nothing (the error says why,
	// and so does Status until the file is fixed).
	Reload(ctx context.Context) (*ReloadResult, error)
}

// Status is an engine's own condition, beside its servers'.
type Status struct {
	// ConfigPath is the servers.toml the engine runs ("" for none).
	ConfigPath string `json:"configPath"`
	// ConfigProblem is why that file, as it is on disk now, does not load
	// (FILE:LINE:COL and the message); nil while it loads. The servers keep
	// running as last loaded.
	ConfigProblem *registry.Diagnostic `json:"configProblem,omitempty"`
	// WatchProblem is why edits to the file are not applied as they are
	// saved ("" while they are): then only Reload applies them.
	WatchProblem string `json:"watchProblem,omitempty"`
	// Unreachable is why the engine cannot be reached (a daemon that
	// stopped answering); Snapshot is then its last known state. Never set
	// for an engine in this process, and never sent over the socket.
	Unreachable error `json:"-"`
}

// ErrNoConfig is Reload on an engine that runs no config file.
var ErrNoConfig = errors.New("this engine has no config file to read")

// ConfigError is a config file that does not load: Reload changed nothing.
type ConfigError struct{ Diagnostic registry.Diagnostic }

func (e *ConfigError) Error() string { return e.Diagnostic.String() + " (nothing was changed)" }
