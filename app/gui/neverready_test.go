package gui

import (
	"slices"
	"strings"
	"testing"
	"time"

	"mcptray/supervisor"
)

// TestStartingAgainIsAProblem: a server starting again after it failed (one
// that never becomes ready is starting most of the time) is among the
// problems everywhere: counted as retrying, named in the tooltip, listed
// with the problems first in the window; a server starting after a restart
// a person asked for is not.
func TestStartingAgainIsAProblem(t *testing.T) {
	snap := thirtyServers(time.Millisecond, time.Now().Add(time.Second))
	if got := countSummary(snap); strings.Contains(got, "starting") || !strings.Contains(got, "2 retrying") {
		t.Errorf("counts %q: want mute counted as retrying", got)
	}
	tip := trayTooltip(snap, "")
	if !strings.Contains(tip, "mute: retrying") {
		t.Errorf("the tooltip does not name mute:\n%s", tip)
	}
	order := problemsFirst(snap)
	var first []string
	for _, i := range order[:3] {
		first = append(first, snap.Servers[i].Name)
	}
	if !slices.Contains(first, "mute") {
		t.Errorf("problems first: %v, want mute among the first three", first)
	}

	// Restarted on request: starting, not a problem.
	asked := thirtyServers(time.Millisecond, time.Now())
	asked.Servers[0].State, asked.Servers[0].Restarts = supervisor.StateStarting, 1
	if got := countSummary(asked); !strings.Contains(got, "1 starting") {
		t.Errorf("counts %q: a restart a person asked for is not a retry", got)
	}
	if rank(&asked.Servers[0]) != 2 || trayProblem(&asked.Servers[0]) {
		t.Error("a server restarted on request is listed among the problems")
	}
}

// TestCheckAllProgress: Check all says how many of the servers it waits
// for have answered as they do, and it waits only for the servers that are
// probed: one starting again (never ready) does not hold it up.
func TestCheckAllProgress(t *testing.T) {
	snap := thirtyServers(time.Millisecond, time.Now().Add(time.Second))
	eng := newFakeEngine(snap)
	c := newTestController(t, eng, "")
	c.apply(snap)
	m := c.main
	c.checkAll()
	eng.waitCommand(t, "check ")
	if m.checkLine.Text != "Checking 27 servers…" {
		t.Errorf("at first: %q", m.checkLine.Text)
	}
	answered := func(n int) supervisor.Snapshot {
		next := thirtyServers(time.Millisecond, time.Now().Add(time.Second))
		for i := range n {
			next.Servers[i].Probes.Count++
		}
		return next
	}
	c.apply(answered(12))
	if m.checkLine.Text != "Checking servers: 12 of 27 answered…" || !m.checkBtn.Disabled() {
		t.Errorf("after 12 answers: %q (button disabled %v)", m.checkLine.Text, m.checkBtn.Disabled())
	}
	c.apply(answered(27))
	if !strings.HasPrefix(m.checkLine.Text, "Checked at ") || m.checkBtn.Disabled() {
		t.Errorf("after every probed server answered: %q", m.checkLine.Text)
	}
}
