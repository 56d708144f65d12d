package cli

import (
	"encoding/json"
	"time"

	"mcptray/healthcheck"
	"mcptray/supervisor"
)

// serverReport is one server as `check --json` and `status --json` print it:
// every field of the health check's report, under the same names
// (TestServerReportEveryField keeps it so).
// Secrets never appear: the config's env and header values are not part of
// it, and diagnoses are written without them.
type serverReport struct {
	Name      string `json:"name"`
	Transport string `json:"transport"` // stdio, http or sse
	Status    string `json:"status"`    // ready, degraded or failed
	// Level is the one-glance colour the tray and window show: ok, warn,
	// error or idle. A ready server with warnings is "warn".
	Level             string                         `json:"level,omitempty"`
	Warnings          []healthcheck.Diagnosis        `json:"warnings"`
	Era               string                         `json:"era,omitempty"`
	EraSource         string                         `json:"eraSource,omitempty"` // how the era was found
	ProtocolVersion   string                         `json:"protocolVersion,omitempty"`
	ServerInfo        *healthcheck.ServerInfo        `json:"serverInfo,omitempty"`
	Capabilities      json.RawMessage                `json:"capabilities,omitempty"`
	Instructions      string                         `json:"instructions,omitempty"`
	Tools             []healthcheck.Tool             `json:"tools"`
	Resources         []healthcheck.Resource         `json:"resources"`
	ResourceTemplates []healthcheck.ResourceTemplate `json:"resourceTemplates"`
	Prompts           []healthcheck.Prompt           `json:"prompts"`
	LatencyMs         latencyMs                      `json:"latencyMs"`
	Diagnostics       []healthcheck.Diagnosis        `json:"diagnostics"`
	StderrTail        []string                       `json:"stderrTail"`

	// Set by status only (the daemon's live view).
	State    string   `json:"state,omitempty"`
	Reason   string   `json:"reason,omitempty"`
	PID      int      `json:"pid,omitempty"`
	Restarts *int     `json:"restarts,omitempty"`
	Uptime   *float64 `json:"uptimeSeconds,omitempty"`
	// How clients start and stop it: start mode, idle_stop in seconds,
	// whether the next client starts it, how many hold it, and the
	// server an instance (share = false) belongs to.
	Start           string   `json:"start,omitempty"`
	IdleStopSeconds *float64 `json:"idleStopSeconds,omitempty"`
	WaitsForClient  bool     `json:"waitsForClient,omitempty"`
	Clients         *int     `json:"clients,omitempty"`
	InstanceOf      string   `json:"instanceOf,omitempty"`
}

type latencyMs struct {
	Connect *float64 `json:"connect"`
	Probe   *float64 `json:"probe"`
}

func ms(d time.Duration) *float64 {
	if d <= 0 {
		return nil
	}
	v := float64(d.Microseconds()) / 1000
	return &v
}

// checkStatus folds a state into check's outcomes: ready, degraded,
// sign-in-required (a remote server waiting for a person to sign in),
// interrupted (the check was stopped before the server had an outcome) or
// failed.
func checkStatus(st *supervisor.ServerState) string {
	switch st.State {
	case supervisor.StateReady:
		return "ready"
	case supervisor.StateDegraded:
		return "degraded"
	case supervisor.StateSignIn:
		return "sign-in-required"
	}
	if st.Diagnosis != nil && st.Diagnosis.Code == healthcheck.CodeInterrupted {
		return "interrupted"
	}
	return "failed"
}

// newServerReport describes one server's state. With live set, it adds the
// engine's view (state, reason, pid, restarts, uptime at now).
func newServerReport(st *supervisor.ServerState, live bool, now time.Time) serverReport {
	r := serverReport{
		Name:              st.Name,
		Transport:         string(st.Transport),
		Status:            checkStatus(st),
		Era:               string(st.Era),
		Tools:             []healthcheck.Tool{},
		Resources:         []healthcheck.Resource{},
		ResourceTemplates: []healthcheck.ResourceTemplate{},
		Prompts:           []healthcheck.Prompt{},
		Diagnostics:       []healthcheck.Diagnosis{},
		Warnings:          orEmpty(st.Warnings),
		StderrTail:        []string{},
		Level:             string(st.Level),
	}
	if rep := st.Report; rep != nil {
		r.Era = string(rep.Era)
		r.EraSource = rep.EraSource
		r.ProtocolVersion = rep.ProtocolVersion
		info := rep.ServerInfo
		r.ServerInfo = &info
		r.Capabilities = rep.Capabilities
		r.Instructions = rep.Instructions
		r.Tools = orEmpty(rep.Tools)
		r.Resources = orEmpty(rep.Resources)
		r.ResourceTemplates = orEmpty(rep.ResourceTemplates)
		r.Prompts = orEmpty(rep.Prompts)
		r.LatencyMs.Connect = ms(rep.ConnectLatency)
		r.Diagnostics = append(r.Diagnostics, rep.Diagnoses...)
	}
	if st.Probes.Count > 0 {
		r.LatencyMs.Probe = ms(st.Probes.Last)
	}
	if d := st.Diagnosis; d != nil {
		dup := false
		for _, x := range r.Diagnostics {
			dup = dup || x.Code == d.Code && x.Message == d.Message
		}
		if !dup {
			r.Diagnostics = append([]healthcheck.Diagnosis{*d}, r.Diagnostics...)
		}
	}
	for _, l := range st.StderrTail {
		r.StderrTail = append(r.StderrTail, l.Text)
	}
	if !live {
		// A check's verdict: a server it did not find working is red,
		// whatever the engine would have tried next.
		switch r.Status {
		case "failed":
			r.Level = string(supervisor.LevelError)
		case "degraded", "sign-in-required", "interrupted":
			r.Level = string(supervisor.LevelWarn)
		}
	}
	if live {
		r.State = string(st.State)
		r.Reason = st.Reason
		r.PID = st.PID
		restarts := st.Restarts
		r.Restarts = &restarts
		if up := st.Uptime(now); up > 0 {
			secs := up.Seconds()
			r.Uptime = &secs
		}
		r.Start, r.WaitsForClient, r.InstanceOf = string(st.Start), st.WaitsForClient, st.InstanceOf
		if st.IdleStop > 0 {
			secs := st.IdleStop.Seconds()
			r.IdleStopSeconds = &secs
		}
		clients := st.Clients
		r.Clients = &clients
	}
	return r
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
