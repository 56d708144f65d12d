package gui

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"mcptray/healthcheck"
	"mcptray/registry"
	"mcptray/supervisor"
)

func TestCapabilityList(t *testing.T) {
	got := capabilityList(json.RawMessage(`{"tools":{"listChanged":true},"resources":{"subscribe":true,"listChanged":false},"prompts":{},"logging":{},"experimental":{"x":{}}}`))
	want := "• experimental (x)\n• logging\n• prompts\n• resources (subscribe)\n• tools (listChanged)"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := capabilityList(json.RawMessage(`{}`)); got != "none declared" {
		t.Errorf("empty: %q", got)
	}
}

func TestPromptArgumentWithoutDescription(t *testing.T) {
	items := promptItems([]healthcheck.Prompt{{Name: "p", Arguments: []healthcheck.PromptArgument{{Name: "state"}, {Name: "city", Description: "Where.", Required: true}}}})
	if d := items[0].detail; strings.Contains(d, "state:") || !strings.Contains(d, "  state\n") || !strings.Contains(d, "city (required): Where.") {
		t.Errorf("detail:\n%s", d)
	}
}

func TestCommandWords(t *testing.T) {
	s := &supervisor.ServerState{Command: "/usr/bin/npx", Server: &registry.Server{Command: "npx", Args: []string{"-y", "pkg"}}}
	if got := commandWords(s); got != "npx  -y pkg\n(runs /usr/bin/npx)" {
		t.Errorf("resolved: %q", got)
	}
	s = &supervisor.ServerState{Command: "/usr/local/bin/mcptray", Server: &registry.Server{Command: "/usr/local/bin/mcptray"}}
	if got := commandWords(s); got != "/usr/local/bin/mcptray" {
		t.Errorf("identical: %q", got)
	}
}

// Check all says it is checking, then how it went once every running
// server answered.
func TestCheckAllFeedback(t *testing.T) {
	eng := newFakeEngine(sampleSnapshot())
	c := newTestController(t, eng, "")
	c.apply(eng.Snapshot())
	m := c.main
	test.Tap(m.checkBtn)
	eng.waitCommand(t, "check ")
	if m.checkLine.Text != "Checking 1 server…" || !m.checkBtn.Disabled() {
		t.Errorf("while checking: %q, button disabled %v", m.checkLine.Text, m.checkBtn.Disabled())
	}
	c.apply(eng.Snapshot()) // nothing answered yet
	if m.checkLine.Text != "Checking 1 server…" {
		t.Errorf("finished before the probe: %q", m.checkLine.Text)
	}
	next := sampleSnapshot()
	next.Servers[0].Probes.Count++
	c.apply(next)
	if m.checkLine.Text != "Checked at 10:05:00: 1 ready · 2 failing · 1 retrying · 1 stopped." || m.checkBtn.Disabled() {
		t.Errorf("after: %q", m.checkLine.Text)
	}
}

// An error is shown as written: a server's name keeps its case.
func TestErrorKeepsTheServerName(t *testing.T) {
	c := newTestController(t, newFakeEngine(sampleSnapshot()), "")
	c.showError(errors.New("github-mcp: no such server"))
	if !strings.Contains(overlayText(c.win), "github-mcp: no such server") {
		t.Errorf("dialog: %q", overlayText(c.win))
	}
}
