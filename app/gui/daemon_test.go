//go:build unix

package gui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"mcptray/app"
	"mcptray/control"
	"mcptray/supervisor"
)

// serveEngine puts eng behind a control server on a socket of its own and
// returns a client for it: what the desktop app gets when a daemon runs.
func serveEngine(t *testing.T, eng control.Engine) *control.Client {
	t.Helper()
	dir, err := os.MkdirTemp("", "mtg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "mcptray", control.SocketName)
	ln, err := control.Listen(sock, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- control.NewServer(eng, nil).Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })
	c, err := control.Dial(context.Background(), &control.ClientOptions{Socket: sock})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { c.Run(runCtx); close(ran) }()
	t.Cleanup(func() { stop(); <-ran })
	return c
}

// TestMainWindowThroughDaemon runs TestMainWindowShowsEveryState's checks,
// goldens included, with the engine behind the control socket: the window
// cannot tell a daemon from an in-process engine.
func TestMainWindowThroughDaemon(t *testing.T) {
	eng := newFakeEngine(sampleSnapshot())
	c := newTestController(t, serveEngine(t, eng), "")
	c.apply(c.eng.Snapshot())
	m := c.main
	// Problems first: the failing server is at the top, and selected.
	if m.selected != "github" {
		t.Fatalf("first server not selected: %q", m.selected)
	}
	m.selectServer("demo")
	test.AssertRendersToMarkup(t, "main_ready.xml", c.win.Canvas())
	if got := m.fields["Server"].Text; got != "mcptray-demo 1.0.0 (mcptray demo)" {
		t.Errorf("server field = %q", got)
	}
	if m.tabs.Items[1].Text != "Tools (3)" || len(m.tools.shown) != 3 {
		t.Errorf("tools tab %q, %d shown", m.tabs.Items[1].Text, len(m.tools.shown))
	}
	m.selectServer("github")
	if !m.diagCard.Visible() || m.diagCard.Title != "exited-during-startup" || !strings.Contains(m.diagText.Text, "Set GITHUB_TOKEN.") {
		t.Errorf("diagnosis card: visible=%v title=%q text=%q", m.diagCard.Visible(), m.diagCard.Title, m.diagText.Text)
	}
	test.AssertRendersToMarkup(t, "main_crashlooping.xml", c.win.Canvas())

	// Clicks travel over the socket to the engine.
	test.Tap(m.startStop)
	eng.waitCommand(t, "start github")
	if m.restart.Visible() {
		t.Error("a server that is not running offers Restart beside Start")
	}
	m.selectServer("demo")
	test.Tap(m.restart)
	eng.waitCommand(t, "restart demo")
	test.Tap(m.startStop)
	eng.waitCommand(t, "stop demo")
	c.checkAll()
	eng.waitCommand(t, "check ")

	// A change in the engine reaches the window through the stream.
	eng.mu.Lock()
	eng.snap.Servers[0].State = supervisor.StateBackoff
	eng.mu.Unlock()
	eng.changes <- struct{}{}
	deadline := time.After(10 * time.Second)
	for c.eng.Snapshot().Servers[0].State != supervisor.StateBackoff {
		select {
		case <-c.eng.Changes():
		case <-deadline:
			t.Fatal("change never arrived")
		}
	}
	c.apply(c.eng.Snapshot())
	if !strings.Contains(app.ListLine(&c.snap.Servers[0]), "backoff") {
		t.Errorf("list line %q", app.ListLine(&c.snap.Servers[0]))
	}
}

// TestLogViewThroughDaemon feeds the log view from the engine's stderr
// ring over the socket.
func TestLogViewThroughDaemon(t *testing.T) {
	eng := newFakeEngine(sampleSnapshot())
	for i := 1; i <= 30; i++ {
		eng.logs["demo"] = append(eng.logs["demo"], supervisor.LogLine{Seq: uint64(i), Time: t0, Text: "line"})
	}
	c := newTestController(t, serveEngine(t, eng), "")
	c.apply(c.eng.Snapshot())
	lv := c.main.log
	lv.SetServer("demo")
	lv.poll()
	if len(lv.shown) != 30 {
		t.Fatalf("shown %d", len(lv.shown))
	}
}
