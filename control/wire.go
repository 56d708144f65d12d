package control

import (
	"errors"
	"time"

	"mcptray/healthcheck"
	"mcptray/registry"
	"mcptray/supervisor"
)

// The wire form of a snapshot. supervisor.Snapshot is made for Go, not JSON:
// registry.Server.Invalid is an error, and the latency fields the UI charts
// (Report.ConnectLatency, ProbeStats.Recent) are hidden from encoding/json.
// These types carry every field, so a snapshot taken from the daemon is the
// snapshot the daemon's engine holds. Durations travel as nanoseconds and
// times as RFC 3339 with nanoseconds, both exact.

type wireSnapshot struct {
	Time    time.Time         `json:"time"`
	Servers []wireServerState `json:"servers"`
	Engine  Status            `json:"engine"`
}

type wireServerState struct {
	Name         string                  `json:"name"`
	Server       *registry.ServerJSON    `json:"server,omitempty"`
	Transport    registry.Transport      `json:"transport"`
	State        supervisor.State        `json:"state"`
	Reason       string                  `json:"reason,omitempty"`
	Since        time.Time               `json:"since"`
	PID          int                     `json:"pid,omitempty"`
	Command      string                  `json:"command,omitempty"`
	ResolvedPath string                  `json:"resolvedPath,omitempty"`
	StartedAt    time.Time               `json:"startedAt"`
	Restarts     int                     `json:"restarts"`
	NextAttempt  time.Time               `json:"nextAttempt"`
	LastExit     *supervisor.ExitInfo    `json:"lastExit,omitempty"`
	StderrTail   []supervisor.LogLine    `json:"stderrTail,omitempty"`
	Diagnosis    *healthcheck.Diagnosis  `json:"diagnosis,omitempty"`
	Report       *wireReport             `json:"report,omitempty"`
	Probes       wireProbes              `json:"probes"`
	Era          healthcheck.Era         `json:"era,omitempty"`
	Warnings     []healthcheck.Diagnosis `json:"warnings,omitempty"`
	LastLive     time.Time               `json:"lastLive"`
	Failures     int                     `json:"failures,omitempty"`
	Level        supervisor.Level        `json:"level,omitempty"`
	// How clients start and stop it, and its per-session instances.
	Start          registry.StartMode `json:"start,omitempty"`
	IdleStop       time.Duration      `json:"idleStop,omitempty"`
	WaitsForClient bool               `json:"waitsForClient,omitempty"`
	Clients        int                `json:"clients,omitempty"`
	LastUse        time.Time          `json:"lastUse"`
	InstanceOf     string             `json:"instanceOf,omitempty"`
	Instances      int                `json:"instances,omitempty"`
}

// streamMessage is one message of the change stream: a snapshot and the
// transitions since the previous message.
type streamMessage struct {
	wireSnapshot
	Transitions    []supervisor.Transition `json:"transitions,omitempty"`
	NextTransition uint64                  `json:"nextTransition"`
}

// TransitionPage is a piece of the engine's transitions and the sequence
// number to ask for next.
type TransitionPage struct {
	Transitions []supervisor.Transition `json:"transitions"`
	Next        uint64                  `json:"next"`
}

// wireReport adds the connect latency, which Report keeps out of JSON.
type wireReport struct {
	healthcheck.Report
	ConnectLatency time.Duration `json:"connectLatency"`
}

// wireProbes adds the recent latencies, which ProbeStats keeps out of JSON.
type wireProbes struct {
	healthcheck.ProbeStats
	Recent []time.Duration `json:"recent,omitempty"`
}

func toWire(s supervisor.Snapshot, status Status) wireSnapshot {
	w := wireSnapshot{Time: s.Time, Servers: make([]wireServerState, 0, len(s.Servers)), Engine: status}
	for i := range s.Servers {
		st := &s.Servers[i]
		ws := wireServerState{
			Name: st.Name, Transport: st.Transport, State: st.State, Reason: st.Reason, Since: st.Since,
			PID: st.PID, Command: st.Command, ResolvedPath: st.ResolvedPath, StartedAt: st.StartedAt,
			Restarts: st.Restarts, NextAttempt: st.NextAttempt, LastExit: st.LastExit,
			StderrTail: st.StderrTail, Diagnosis: st.Diagnosis, Era: st.Era,
			Probes:   wireProbes{ProbeStats: st.Probes, Recent: st.Probes.Recent},
			Warnings: st.Warnings, LastLive: st.LastLive, Failures: st.Failures, Level: st.Level,
			Start: st.Start, IdleStop: st.IdleStop, WaitsForClient: st.WaitsForClient, Clients: st.Clients,
			LastUse: st.LastUse, InstanceOf: st.InstanceOf, Instances: st.Instances,
		}
		if srv := st.Server; srv != nil {
			// The socket is private to its user, and the desktop app edits
			// these entries: env and header values travel as written.
			j := srv.JSON()
			ws.Server = &j
		}
		if st.Report != nil {
			ws.Report = &wireReport{Report: *st.Report, ConnectLatency: st.Report.ConnectLatency}
		}
		w.Servers = append(w.Servers, ws)
	}
	return w
}

func fromWire(w wireSnapshot) (supervisor.Snapshot, Status) {
	s := supervisor.Snapshot{Time: w.Time, Servers: make([]supervisor.ServerState, 0, len(w.Servers))}
	for i := range w.Servers {
		ws := &w.Servers[i]
		st := supervisor.ServerState{
			Name: ws.Name, Transport: ws.Transport, State: ws.State, Reason: ws.Reason, Since: ws.Since,
			PID: ws.PID, Command: ws.Command, ResolvedPath: ws.ResolvedPath, StartedAt: ws.StartedAt,
			Restarts: ws.Restarts, NextAttempt: ws.NextAttempt, LastExit: ws.LastExit,
			StderrTail: ws.StderrTail, Diagnosis: ws.Diagnosis, Era: ws.Era,
			Probes:   ws.Probes.ProbeStats,
			Warnings: ws.Warnings, LastLive: ws.LastLive, Failures: ws.Failures, Level: ws.Level,
			Start: ws.Start, IdleStop: ws.IdleStop, WaitsForClient: ws.WaitsForClient, Clients: ws.Clients,
			LastUse: ws.LastUse, InstanceOf: ws.InstanceOf, Instances: ws.Instances,
		}
		st.Probes.Recent = ws.Probes.Recent
		if ws.Server != nil {
			st.Server = ws.Server.Server()
		}
		if ws.Report != nil {
			rep := ws.Report.Report
			rep.ConnectLatency = ws.Report.ConnectLatency
			st.Report = &rep
		}
		s.Servers = append(s.Servers, st)
	}
	return s, w.Engine
}

// Error codes in an error response, so that a client can give back the
// supervisor's sentinel errors (errors.Is works across the socket).
const (
	codeUnknownServer = "unknown-server"
	codeDisabled      = "disabled"
	codeBadRequest    = "bad-request"
	codeConfig        = "config"
	codeNoConfig      = "no-config"
	codeInternal      = "internal"
)

type errorBody struct {
	Error string `json:"error"`
	Code  string `json:"code"`
	// Problem is where the config file does not load (code "config").
	Problem *registry.Diagnostic `json:"problem,omitempty"`
}

func errorCode(err error) string {
	switch {
	case errors.Is(err, supervisor.ErrUnknownServer):
		return codeUnknownServer
	case errors.Is(err, supervisor.ErrDisabled):
		return codeDisabled
	}
	return codeInternal
}

// LogPage is a piece of a server's stderr: the lines and the sequence number
// to ask for next.
type LogPage struct {
	Lines []supervisor.LogLine `json:"lines"`
	Next  uint64               `json:"next"`
}

// Info describes a running daemon.
type Info struct {
	PID        int       `json:"pid"`
	Version    string    `json:"version"`
	Socket     string    `json:"socket"`
	ConfigPath string    `json:"configPath"`
	Started    time.Time `json:"started"`
	API        string    `json:"api"` // "v1"
}

// ReloadResult is what a reload found in the config file.
type ReloadResult struct {
	ConfigPath string `json:"configPath"`
	Servers    int    `json:"servers"`
	// Diagnostics are the file's problems, one line each ("file:line:col:
	// error: …"); servers with errors are kept but not started.
	Diagnostics []string `json:"diagnostics,omitempty"`
	Errors      int      `json:"errors"`
	// Notes say which [settings] changed and how they were applied.
	Notes []string `json:"notes,omitempty"`
}
