package present

import (
	"slices"
	"testing"
	"time"

	"mcptray/healthcheck"
	"mcptray/registry"
	"mcptray/supervisor"
)

// TestDetails: every row the window has a label for, in its order, with the
// words of a running stdio server.
func TestDetails(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := &supervisor.ServerState{
		Name: "demo", State: supervisor.StateReady, Since: now.Add(-time.Minute),
		Server: &registry.Server{Name: "demo", Command: "npx", Args: []string{"-y", "pkg"}},
		PID:    42, StartedAt: now.Add(-90 * time.Second), Restarts: 2,
		Probes: healthcheck.ProbeStats{Count: 3, Last: 2 * time.Millisecond, Min: time.Millisecond, Median: 2 * time.Millisecond, P95: 3 * time.Millisecond},
	}
	rows := Details(s, now)
	var labels []string
	got := map[string]string{}
	for _, d := range rows {
		labels = append(labels, d.Label)
		got[d.Label] = d.Text
	}
	if !slices.Equal(labels, DetailLabels) {
		t.Fatalf("labels %q, want %q", labels, DetailLabels)
	}
	for label, want := range map[string]string{
		"Command":       "npx  -y pkg",
		"Process":       "pid 42, up 1m",
		"Restarts":      "2",
		"Probe latency": "last 2.0 ms · min 1.0 ms · median 2.0 ms · p95 3.0 ms · 3 probes",
		"Last exit":     "",
	} {
		if got[label] != want {
			t.Errorf("%s = %q, want %q", label, got[label], want)
		}
	}
}

// TestSourceWords: an entry added from the MCP Registry or a bundle says
// where it came from; one written by hand says nothing.
func TestSourceWords(t *testing.T) {
	for _, c := range []struct {
		server registry.Server
		want   string
	}{
		{registry.Server{}, ""},
		{registry.Server{Source: "registry:io.github.acme/weather@1.2.0"}, "the MCP Registry: io.github.acme/weather, version 1.2.0"},
		{registry.Server{Source: "mcpb:echo@1.0.0", Cwd: "/data/bundles/echo/1.0.0"}, "an MCP bundle: echo, version 1.0.0, unpacked in /data/bundles/echo/1.0.0"},
		{registry.Server{Source: "mcpb:echo"}, "an MCP bundle: echo"},
		{registry.Server{Source: "elsewhere"}, "elsewhere"},
	} {
		if got := SourceWords(&c.server); got != c.want {
			t.Errorf("%q: %q, want %q", c.server.Source, got, c.want)
		}
	}
	if got := SourceWords(nil); got != "" {
		t.Errorf("no entry: %q", got)
	}
}

// TestUptimeStopsWithTheProcess: the uptime is of a process that is there,
// and moves on to the second only in its first minute.
func TestUptimeStopsWithTheProcess(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := &supervisor.ServerState{Name: "demo", State: supervisor.StateBackoff, PID: 42, StartedAt: now.Add(-time.Hour)}
	if got := Details(s, now)[slices.Index(DetailLabels, "Process")]; got.Label != "Process" || got.Text != "" {
		t.Errorf("in backoff: %s = %q, want nothing", got.Label, got.Text)
	}
	for d, want := range map[time.Duration]string{
		1500 * time.Millisecond:       "1s",
		59 * time.Second:              "59s",
		61 * time.Second:              "1m",
		2*time.Hour + 5*time.Minute:   "2h05m",
		50*time.Hour + 59*time.Minute: "2d02h",
	} {
		if got := Uptime(d); got != want {
			t.Errorf("Uptime(%s) = %q, want %q", d, got, want)
		}
	}
}
