package gui

import (
	"errors"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"mcptray/supervisor"
)

// TestRestartNotification: the restart is said once, and for a while after
// it a server's news that only repeats what it was under the old daemon (a
// failing server failing again, a server coming back) is not sent; a
// server that was up and now fails is.
func TestRestartNotification(t *testing.T) {
	a := test.NewTempApp(t)
	now := t0
	n := newNotifier(a, func() time.Time { return now })
	var got []notice
	n.send = func(x notice) { got = append(got, x) }
	before := map[string]supervisor.Level{"missing": supervisor.LevelError, "demo": supervisor.LevelOK, "flaky": supervisor.LevelOK}
	n.serviceRestarted(restartedWords(101, 202, ""), before, now.Add(restartQuiet))
	if len(got) != 1 || got[0].title != "Background service restarted" ||
		!strings.Contains(got[0].body, "(daemon pid 101) ended without a word in its log") || !strings.Contains(got[0].body, "(pid 202)") {
		t.Fatalf("sent %+v", got)
	}
	now = now.Add(5 * time.Second)
	n.Observe([]supervisor.Transition{
		{Server: "missing", Event: supervisor.EventFailed, Reason: "not found"},
		{Server: "demo", Event: supervisor.EventRecovered, Reason: "ready"},
		{Server: "flaky", Event: supervisor.EventCrashed, Reason: "exited with code 1"},
	})
	if len(got) != 2 || got[1].title != "flaky crashed" {
		t.Errorf("after the restart, sent %+v; want only flaky's crash", got[1:])
	}
	now = now.Add(restartQuiet)
	n.Observe([]supervisor.Transition{{Server: "missing", Event: supervisor.EventFailed, Reason: "not found"}})
	if len(got) != 3 || got[2].title != "missing cannot start" {
		t.Errorf("once the restart is past, sent %+v", got[2:])
	}
	if w := restartedWords(101, 202, "stopped by signal SIGTERM (from the system, the service manager or a kill); every server it started is stopped"); !strings.Contains(w, "said “stopped by signal SIGTERM") {
		t.Errorf("with the log's words: %s", w)
	}
}

// TestRestartingSnapshot: while the daemon is away, what was up shows as
// starting again, with no process, clients or problem of the old daemon's;
// what was not up is left as it was.
func TestRestartingSnapshot(t *testing.T) {
	snap := thirtyServers(time.Millisecond, time.Now().Add(time.Second))
	snap.Servers[0].PID, snap.Servers[0].Clients = 4242, 2
	got := restartingSnapshot(snap, t0)
	if s := got.Servers[0]; s.State != supervisor.StateStarting || !s.Since.Equal(t0) || s.PID != 0 || s.Clients != 0 || !strings.Contains(s.Reason, "background service is restarting") {
		t.Errorf("a ready server while the daemon is away: %+v", s)
	}
	if s := got.Server("missing"); s.State != supervisor.StateFailed {
		t.Errorf("a failed server while the daemon is away: %s", s.State)
	}
	if s := got.Server("quitter"); s.State != supervisor.StateStarting || retrying(s) {
		t.Errorf("a server in backoff while the daemon is away: %s, retrying %v", s.State, retrying(s))
	}
	if snap.Servers[0].State != supervisor.StateReady {
		t.Error("the engine's snapshot was changed")
	}
	if c := countSummary(got); strings.Contains(c, "ready") {
		t.Errorf("counts while the daemon is away: %s", c)
	}
}

// TestDaemonRestartSeenEitherWay: the daemon's end is seen on the change
// stream or first by the gateway poll meeting another pid; either way the
// window says the service is restarting while no daemon answers, and one
// notification names the daemon that went and the one that came.
func TestDaemonRestartSeenEitherWay(t *testing.T) {
	for _, streamFirst := range []bool{true, false} {
		c, got, setReachable := attachedToDaemon100(t)
		if streamFirst {
			setReachable(false)
			if !strings.Contains(c.main.warning.Text, "Background service restarting: daemon pid 100 ended") {
				t.Errorf("stream first: the window says %q", c.main.warning.Text)
			}
			if s := c.snap.Server("demo"); s.State != supervisor.StateStarting {
				t.Errorf("stream first: demo shows %s while the daemon is away", s.State)
			}
			c.setGateway(nil, 0) // no daemon answers yet
			c.setGateway(nil, 200)
			if len(*got) != 0 {
				t.Errorf("stream first: notified while the stream is still down: %+v", got)
			}
			setReachable(true)
		} else {
			c.setGateway(nil, 200) // the poll meets the new daemon first
			setReachable(false)
			setReachable(true)
			c.setGateway(nil, 200)
		}
		if len(*got) != 1 || !strings.Contains((*got)[0].body, "(daemon pid 100)") || !strings.Contains((*got)[0].body, "(pid 200)") {
			t.Errorf("stream first %v: sent %+v", streamFirst, *got)
		}
		if c.main.warning.Visible() || c.lost != nil {
			t.Errorf("stream first %v: after the restart the window still says %q", streamFirst, c.main.warning.Text)
		}
	}
}

// TestNewDaemonNewsBeforeItIsNamed: the new daemon's first news of a
// server that was failing under the old one (it fails again) comes on the
// change stream before the gateway poll names the new daemon; it is held
// as it is after, and the restart is the one notification. Had the same
// daemon come back, its news would be news.
func TestNewDaemonNewsBeforeItIsNamed(t *testing.T) {
	for _, same := range []bool{false, true} {
		c, got, setReachable := attachedToDaemon100(t)
		setReachable(false)
		setReachable(true)
		if !same {
			c.notify.Observe([]supervisor.Transition{{Server: "github", Event: supervisor.EventCrashed, Reason: "exited with code 1"}})
			c.setGateway(nil, 200)
			if len(*got) != 1 || (*got)[0].title != "Background service restarted" {
				t.Errorf("a new daemon: sent %+v; want only the restart", *got)
			}
			continue
		}
		c.setGateway(nil, 100)
		c.notify.Observe([]supervisor.Transition{{Server: "github", Event: supervisor.EventCrashed, Reason: "exited with code 1"}})
		if len(*got) != 1 || (*got)[0].title != "github crashed" {
			t.Errorf("the same daemon: sent %+v; want github's crash", *got)
		}
	}
}

// attachedToDaemon100 is a controller attached to daemon 100 whose
// notifications are collected in got; setReachable breaks (false) or
// restores (true) its change stream.
func attachedToDaemon100(t *testing.T) (c *controller, got *[]notice, setReachable func(ok bool)) {
	eng := newFakeEngine(sampleSnapshot())
	c = newTestController(t, eng, "")
	got = &[]notice{}
	c.notify.send = func(x notice) { *got = append(*got, x) }
	c.host = engineHost{daemonPID: 100}
	c.apply(eng.Snapshot())
	setReachable = func(ok bool) {
		eng.mu.Lock()
		eng.status.Unreachable = nil
		if !ok {
			eng.status.Unreachable = errors.New("daemon closed the change stream: EOF")
		}
		eng.mu.Unlock()
		c.apply(eng.Snapshot())
	}
	return c, got, setReachable
}
