package present

import (
	"strings"
	"testing"
	"time"

	"mcptray/internal/human"
	"mcptray/registry"
	"mcptray/supervisor"
)

// The tray's and status's words for what clients do with a server.
func TestStateDetailDemand(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	srv := &registry.Server{Name: "b", Command: "x", Start: registry.StartLazy, IdleStop: 10 * time.Minute}
	for _, tt := range []struct {
		st   supervisor.ServerState
		want string
	}{
		{supervisor.ServerState{Name: "b", Server: srv, State: supervisor.StateStopped, WaitsForClient: true},
			"stopped, waits for a client"},
		{supervisor.ServerState{Name: "b", Server: srv, State: supervisor.StateReady, Clients: 3, IdleStop: 10 * time.Minute, LastUse: now.Add(-3 * time.Minute)},
			"ready, 3 clients, idle stop in 7m0s"},
		{supervisor.ServerState{Name: "b", Server: srv, State: supervisor.StateReady, Clients: 1, Instances: 2},
			"ready, 1 client, 2 instances"},
		{supervisor.ServerState{Name: "b#2", Server: srv, State: supervisor.StateStarting, InstanceOf: "b"},
			"starting, instance of b"},
	} {
		if got := StateDetailAt(&tt.st, now); got != tt.want {
			t.Errorf("%s %s: %q, want %q", tt.st.Name, tt.st.State, got, tt.want)
		}
	}
}

// TestWaitReadsAsInTheState: the window's "restart in …" says the wait as
// the supervisor's reason does ("trying again in 3.2s"), not rounded apart.
func TestWaitReadsAsInTheState(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	st := supervisor.ServerState{Name: "b", Server: &registry.Server{Name: "b", Command: "x"}, State: supervisor.StateBackoff,
		NextAttempt: now.Add(3240 * time.Millisecond)}
	if got, want := StateDetailAt(&st, now), "restart in "+human.Duration(3240*time.Millisecond); !strings.Contains(got, want) || !strings.Contains(got, "3.2s") {
		t.Errorf("%q, want it to say %q", got, want)
	}
}
