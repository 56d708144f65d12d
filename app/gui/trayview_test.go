package gui

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"mcptray/registry"
	"mcptray/supervisor"
)

// thirtyServers is a daily config's snapshot: 27 ready, a missing command,
// one in backoff and one that never finishes its handshake (starting again
// after it went down).
func thirtyServers(latency time.Duration, next time.Time) supervisor.Snapshot {
	var snap supervisor.Snapshot
	for i := range 27 {
		s := supervisor.ServerState{Name: fmt.Sprintf("demo%02d", i+1), State: supervisor.StateReady, Server: &registry.Server{Command: "x"}}
		s.Probes.Count, s.Probes.Last = 5, latency
		snap.Servers = append(snap.Servers, s)
	}
	snap.Servers = append(snap.Servers,
		supervisor.ServerState{Name: "missing", State: supervisor.StateFailed, Server: &registry.Server{Command: "x"}},
		supervisor.ServerState{Name: "quitter", State: supervisor.StateBackoff, NextAttempt: next, Restarts: 2, Failures: 2, Server: &registry.Server{Command: "x"}},
		supervisor.ServerState{Name: "mute", State: supervisor.StateStarting, Restarts: 3, Failures: 3, Server: &registry.Server{Command: "x"}},
	)
	return snap
}

// TestTrayModelForManyServers: with 30 servers the top level holds Open,
// the counts, the problems, one submenu of the healthy servers, Stop all and
// Quit; and a snapshot that differs only in figures that move on their own
// (a probe's latency, a backoff's countdown) gives the same menu.
func TestTrayModelForManyServers(t *testing.T) {
	act := trayActions{stopAll: func() {}}
	now := time.Now()
	m := trayModel(thirtyServers(3*time.Millisecond, now.Add(3*time.Second)), nil, "", act)
	var top []string
	for _, n := range m {
		top = append(top, n.label)
	}
	// A server being retried reads the same in backoff and starting again.
	want := []string{"Open mcptray", "27 ready · 1 failing · 2 retrying", "",
		"missing: failed", "quitter: retrying", "mute: retrying",
		"Healthy: 27 servers", "", "Check all now", "Reload config", "",
		"Stop all servers and quit", "Quit (servers keep running for your AI clients)"}
	if !slices.Equal(top, want) {
		t.Errorf("top level:\n%q\nwant\n%q", top, want)
	}
	if h := m[6]; len(h.children) != 27 || h.children[0].label != "demo01: ready" {
		t.Errorf("healthy submenu: %d items, first %q", len(h.children), h.children[0].label)
	}
	later := trayModel(thirtyServers(9*time.Millisecond, now.Add(700*time.Millisecond)), nil, "", act)
	if a, b := fmt.Sprint(flatLabels(m)), fmt.Sprint(flatLabels(later)); a != b {
		t.Errorf("the menu changed with a latency and a countdown:\n%s\n%s", a, b)
	}
	if trayShape(m, "") != trayShape(later, "") {
		t.Error("the menu's shape changed")
	}
	// A server going from Start to Stop keeps its submenu's shape.
	stopped := thirtyServers(0, now)
	stopped.Servers[0].State = supervisor.StateStopped
	stopped.Servers[1].State = supervisor.StateStopped
	ready := thirtyServers(0, now)
	ready.Servers[0].State = supervisor.StateStopped
	if strings.Contains(trayShape(trayModel(stopped, nil, "", act), ""), "startstop") != true ||
		trayShape(trayModel(stopped, nil, "", act), "") != trayShape(trayModel(ready, nil, "", act), "") {
		t.Error("a server stopped or running changes the shape of the menu")
	}
}

func flatLabels(nodes []trayNode) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.label)
		out = append(out, flatLabels(n.children)...)
	}
	return out
}
