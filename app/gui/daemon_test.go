//go:build unix

package gui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"mcptray/app/present"
	"mcptray/control"
	"mcptray/registry"
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
	eng.changed()
	deadline := time.After(10 * time.Second)
	for c.eng.Snapshot().Servers[0].State != supervisor.StateBackoff {
		select {
		case <-c.eng.Changes():
		case <-deadline:
			t.Fatal("change never arrived")
		}
	}
	c.apply(c.eng.Snapshot())
	if !strings.Contains(present.ListLine(&c.snap.Servers[0]), "backoff") {
		t.Errorf("list line %q", present.ListLine(&c.snap.Servers[0]))
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

// TestAttachedSaveDoesNotReload: attached to a daemon, a save from the
// window is applied by the daemon's own watcher; the app sends no reload.
func TestAttachedSaveDoesNotReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "servers.toml")
	os.WriteFile(path, []byte("[servers.a]\ncommand = \"x\"\n"), 0o600)
	eng := newFakeEngine(sampleSnapshot())
	c := newTestController(t, serveEngine(t, eng), path)
	if err := c.saveServer("", &registry.Server{Name: "new", Command: "y", Autostart: true}); err != nil {
		t.Fatal(err)
	}
	if err := c.updateConfig(func(cfg *registry.Config) error {
		cfg.Servers = cfg.Servers[1:]
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Commands travel one after another on the socket: once this one has
	// arrived, a reload sent by the saves would have too.
	if err := c.eng.CheckNow(context.Background(), "sentinel"); err != nil {
		t.Fatal(err)
	}
	eng.waitCommand(t, "check sentinel")
	if eng.called("reload") {
		t.Errorf("the app reloaded the daemon after saving: %v", eng.calls)
	}
}

// localEngine runs an in-process engine on the config at path.
func localEngine(t *testing.T, path string) *control.Local {
	t.Helper()
	cfg, err := registry.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	l := control.NewLocal(cfg, &control.LocalOptions{Debounce: 20 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { l.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return l
}

// waitLocal waits for cond on each change the engine signals.
func waitLocal(t *testing.T, l *control.Local, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for !cond() {
		select {
		case <-l.Changes():
		case <-deadline:
			t.Fatalf("timed out waiting for %s: %+v", what, l.Status())
		}
	}
}

// TestSaveIsAppliedByTheEngine: in this process too, the engine applies
// what the window saves.
func TestSaveIsAppliedByTheEngine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "servers.toml")
	os.WriteFile(path, []byte("[servers.a]\ncommand = \"x\"\nautostart = false\n"), 0o600)
	l := localEngine(t, path)
	c := newTestController(t, l, path)
	if err := c.saveServer("", &registry.Server{Name: "new", Command: "y"}); err != nil {
		t.Fatal(err)
	}
	c.main.selectServer("new") // what the form's Save does next
	waitLocal(t, l, "the new server", func() bool { return l.Snapshot().Server("new") != nil })
	// Once the engine lists it, the window shows it.
	c.apply(l.Snapshot())
	if c.main.selected != "new" {
		t.Errorf("after Save the window shows %q, not the new server", c.main.selected)
	}
}

// TestConfigProblemBanner: a servers.toml that does not load is said in
// the window and the tray, with its position, until it is fixed.
func TestConfigProblemBanner(t *testing.T) {
	path := filepath.Join(t.TempDir(), "servers.toml")
	good := "[servers.a]\ncommand = \"x\"\nautostart = false\n"
	os.WriteFile(path, []byte(good), 0o600)
	l := localEngine(t, path)
	c := newTestController(t, l, path)
	c.apply(l.Snapshot())
	if c.main.warning.Visible() {
		t.Fatalf("banner on a good file: %q", c.main.warning.Text)
	}
	os.WriteFile(path, []byte(good+"[servers.b\n"), 0o600)
	waitLocal(t, l, "the problem", func() bool { return l.Status().ConfigProblem != nil })
	c.apply(l.Snapshot())
	d := l.Status().ConfigProblem
	want := fmt.Sprintf("%s:%d:%d: ", path, d.Line, d.Col)
	// The window's config banner says it, once (not the warning line too).
	if d.Line == 0 || !c.main.config.banner.Visible() || !strings.Contains(c.main.config.problem.Text, want) || c.main.warning.Visible() {
		t.Errorf("banner: visible=%v %q, want it to hold %q; warning %q", c.main.config.banner.Visible(), c.main.config.problem.Text, want, c.main.warning.Text)
	}
	warning, level := engineWarning(l.Status())
	menu := buildTrayMenu(l.Snapshot(), nil, firstLine(warning), c.trayActions())
	if !strings.Contains(menu.Items[1].Label, want) || level != healthWarn {
		t.Errorf("tray: %q, level %v", menu.Items[1].Label, level)
	}
	os.WriteFile(path, []byte(good), 0o600)
	waitLocal(t, l, "the fix", func() bool { return l.Status().ConfigProblem == nil })
	c.apply(l.Snapshot())
	if c.main.warning.Visible() || c.main.config.banner.Visible() {
		t.Errorf("banner after the fix: %q %q", c.main.warning.Text, c.main.config.problem.Text)
	}
}

// TestConfigProblemThroughDaemon: the daemon's config problem reaches the
// window's banner through the change stream.
func TestConfigProblemThroughDaemon(t *testing.T) {
	eng := newFakeEngine(sampleSnapshot())
	eng.status = control.Status{ConfigPath: "/home/me/servers.toml", ConfigProblem: &registry.Diagnostic{
		Severity: registry.SeverityError, File: "/home/me/servers.toml", Line: 4, Col: 2, Message: "expected a key"}}
	c := newTestController(t, serveEngine(t, eng), "")
	deadline := time.After(10 * time.Second)
	for c.eng.Status().ConfigProblem == nil {
		select {
		case <-c.eng.Changes():
		case <-deadline:
			t.Fatal("the problem never arrived")
		}
	}
	c.apply(c.eng.Snapshot())
	if want := "/home/me/servers.toml:4:2: expected a key"; !c.main.config.banner.Visible() || !strings.Contains(c.main.config.problem.Text, want) {
		t.Errorf("banner: visible=%v %q, want %q", c.main.config.banner.Visible(), c.main.config.problem.Text, want)
	}
}
