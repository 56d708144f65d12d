//go:build linux

package gui

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/app"
	"mcptray/app/present"
	"mcptray/control"
	"mcptray/gateway"
	"mcptray/registry"
	"mcptray/supervisor"
)

// userEnv is a scratch user for the real binaries: its own runtime, cache
// and home folders, and a servers.toml with the demo server.
type userEnv struct {
	bin, dir, cfg string
	env           []string
}

func newUserEnv(t *testing.T) *userEnv {
	t.Helper()
	bin := filepath.Join(binaries(t), "mcptray")
	// Socket paths are limited to ~108 bytes: keep the folder short.
	dir, err := os.MkdirTemp("", "mtg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	cfg := filepath.Join(dir, "servers.toml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, "[settings]\nprobe_interval = \"1s\"\n\n[servers.demo]\ncommand = %q\nargs = [\"serve-demo\"]\n", bin), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(dir, "run"), 0o700)
	u := &userEnv{bin: bin, dir: dir, cfg: cfg}
	u.env = append(os.Environ(), "XDG_RUNTIME_DIR="+filepath.Join(dir, "run"), "XDG_CACHE_HOME="+filepath.Join(dir, "cache"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "HOME="+dir, "MCPTRAY_CONFIG="+cfg)
	return u
}

// sock is the user's control socket: HOME is not the account's home, so
// the runtime folder is under it, whatever XDG_RUNTIME_DIR says.
func (u *userEnv) sock() string { return filepath.Join(u.dir, ".cache", "mcptray", control.SocketName) }

// daemon runs `mcptray daemon` for the user until the test ends; done
// gets its exit.
func (u *userEnv) daemon(t *testing.T) (*exec.Cmd, <-chan error) {
	t.Helper()
	cmd := exec.Command(u.bin, "daemon")
	cmd.Env = u.env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
		}
	})
	// Attach only once it answers: an app finding no daemon starts one.
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := control.Dial(ctx, &control.ClientOptions{Socket: u.sock()})
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemon does not answer on %s: %v", u.sock(), err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return cmd, done
}

// connectClient is an AI client whose config runs `mcptray connect NAME`:
// a go-sdk client over the bridge's stdio. It returns the session and the
// bridge's pid.
func (u *userEnv) connectClient(t *testing.T, name, client string) (*mcp.ClientSession, int) {
	t.Helper()
	cmd := exec.Command(u.bin, "connect", name)
	cmd.Env = u.env
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: client, Version: "1.0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("mcptray connect %s: %v", name, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, cmd.Process.Pid
}

func echo(t *testing.T, cs *mcp.ClientSession, msg string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": msg}})
	if err != nil || res.IsError {
		t.Fatalf("echo through mcptray: %v %+v", err, res)
	}
}

// gridTexts is what a grid of labels says, row by row ("|" between cells).
func gridTexts(objs []fyne.CanvasObject, cols int) []string {
	var rows []string
	var row []string
	for _, o := range objs {
		if l, ok := o.(*widget.Label); ok {
			row = append(row, l.Text)
		}
		if len(row) == cols {
			rows = append(rows, strings.Join(row, "|"))
			row = nil
		}
	}
	if len(row) > 0 {
		rows = append(rows, strings.Join(row, "|"))
	}
	return rows
}

// TestClientsAndTraceFromARealDaemon: the app attaches to a real daemon;
// three AI clients go through `mcptray connect demo`; the tray says "demo:
// ready, 3 clients", the Clients tab lists the three sessions with their
// requests and the calls per tool, and the Trace tab follows their frames
// live, health checks hidden until asked, still while paused. "Stop all
// servers and quit" then stops the daemon and its servers.
func TestClientsAndTraceFromARealDaemon(t *testing.T) {
	u := newUserEnv(t)
	dcmd, ddone := u.daemon(t)
	t.Setenv("HOME", u.dir)

	var stderr strings.Builder
	eng, run, host := newGUIEngine(context.Background(), &app.Env{Stderr: &stderr}, u.cfg, &registry.Config{Path: u.cfg})
	if host.daemonPID != dcmd.Process.Pid || host.fallback != "" {
		t.Fatalf("host %+v, want the daemon's pid %d; stderr: %s", host, dcmd.Process.Pid, stderr.String())
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { run(ctx); close(ran) }()
	t.Cleanup(func() { cancel(); <-ran })

	c := newTestController(t, eng, u.cfg)
	c.host = host
	deadline := time.Now().Add(30 * time.Second)
	for c.eng.Snapshot().Server("demo") == nil || c.eng.Snapshot().Server("demo").State != supervisor.StateReady {
		if time.Now().After(deadline) {
			t.Fatalf("demo never ready: %+v", c.eng.Snapshot())
		}
		select {
		case <-c.eng.Changes():
		case <-time.After(time.Second):
		}
	}
	demoPID := c.eng.Snapshot().Server("demo").PID

	clients := map[string]int{}
	var sessions []*mcp.ClientSession
	for i, name := range []string{"alpha", "beta", "gamma"} {
		cs, pid := u.connectClient(t, "demo", name)
		clients[name] = pid
		sessions = append(sessions, cs)
		for j := range i + 1 {
			echo(t, cs, fmt.Sprintf("%s %d", name, j))
		}
	}
	poller := &gatewayPoller{src: eng.(gatewaySource), start: host.start}
	gi, _ := poller.poll(ctx)
	if gi == nil {
		t.Fatal("no gateway from the daemon")
	}
	c.setGateway(gi, 0)
	c.apply(c.eng.Snapshot())

	// Profiles: the default one, over demo, and how a client reaches it.
	c.showProfiles()
	if text := overlayText(c.win); !strings.Contains(text, "default") || !strings.Contains(text, "• demo: ") ||
		!strings.Contains(text, "Clients run: ") || !strings.Contains(text, " connect") {
		t.Errorf("the Profiles dialog:\n%s", text)
	}
	if dir := os.Getenv("MCPTRAY_SCREENSHOTS"); dir != "" {
		writePNG(t, filepath.Join(dir, "profiles.png"), c.win.Canvas().Capture())
	}
	tapOverlayButton(t, c.win, "Close")

	// The tray: three clients, and Quit says what stays.
	menu := buildTrayMenu(c.snap, c.clientCounts(), "", c.trayActions())
	labels := menuLabels(menu)
	line := ""
	for _, l := range labels {
		if strings.HasPrefix(l, "demo: ") {
			line = l
			break
		}
	}
	if !strings.HasPrefix(line, "demo: ready, 3 clients") {
		t.Errorf("tray line %q, want demo: ready, 3 clients (menu %q)", line, labels)
	}
	last := menu.Items[len(menu.Items)-2:]
	if last[0].Label != "Stop all servers and quit" || last[1].Label != "Quit (servers keep running for your AI clients)" {
		t.Errorf("tray ends with %q, %q", last[0].Label, last[1].Label)
	}
	wantHost := fmt.Sprintf("Servers run in the background service (daemon pid %d)", dcmd.Process.Pid)
	if tip := c.host.tooltip(trayTooltip(c.snap, "")); !strings.Contains(tip, wantHost) {
		t.Errorf("tooltip %q lacks %q", tip, wantHost)
	}
	if !c.main.hostLine.Visible() || !strings.HasPrefix(c.main.hostLine.Text, wantHost) {
		t.Errorf("window's host line %q (visible %v)", c.main.hostLine.Text, c.main.hostLine.Visible())
	}

	// The Clients tab.
	c.main.selectServer("demo")
	c.main.showTab("Clients")
	if got := c.main.clientsTab.Text; got != "Clients (3)" {
		t.Errorf("tab title %q", got)
	}
	rows := gridTexts(c.main.clients.sessions.Objects, len(sessionColumns))
	if len(rows) != 4 || rows[0] != "Client|Via|PID|Since|Requests|Errors" {
		t.Fatalf("session rows %q", rows)
	}
	for name, pid := range clients {
		want := fmt.Sprintf("%s 1.0|stdio|%d|", name, pid)
		found := false
		for _, r := range rows[1:] {
			found = found || strings.HasPrefix(r, want)
		}
		if !found {
			t.Errorf("no session row starting %q in %q", want, rows)
		}
	}
	tools := gridTexts(c.main.clients.tools.Objects, len(toolColumns))
	if len(tools) != 2 || tools[1] != "echo|6|0" {
		t.Errorf("calls per tool %q, want echo 6 calls (1+2+3)", tools)
	}
	if l := c.main.clients.latency.Text; !strings.HasPrefix(l, "p50 ") || !strings.Contains(l, " · p95 ") {
		t.Errorf("latency %q", l)
	}

	// The Trace tab follows the frames, health checks hidden.
	c.main.showTab("Trace")
	tv := c.main.trace
	tv.follow("demo", true)
	t.Cleanup(tv.stop)
	waitTrace := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("trace never showed %s; status %q, %d frames", what, tv.status.Text, len(tv.frames))
			}
			time.Sleep(20 * time.Millisecond)
			tv.flush()
		}
	}
	shownWith := func(pred func(gateway.Frame) bool) bool {
		for _, i := range tv.shown {
			if pred(tv.frames[i]) {
				return true
			}
		}
		return false
	}
	gammaCall := func(f gateway.Frame) bool {
		return f.Method == "tools/call" && f.Dir == "client→mcptray" && strings.Contains(f.Body, "gamma 2")
	}
	waitTrace("gamma's last call", func() bool { return shownWith(gammaCall) })
	if shownWith(present.HealthCheckFrame) {
		t.Error("health checks shown while hidden")
	}
	if got := tv.cellText(tv.frames[tv.shown[0]], 1); tv.frames[tv.shown[0]].Session != "" && !strings.Contains(got, "#") {
		t.Errorf("session cell %q", got)
	}
	tv.health.SetChecked(false)
	waitTrace("a health check once shown", func() bool { return shownWith(present.HealthCheckFrame) })
	tv.health.SetChecked(true)

	// Paused: new frames are kept, not shown, until resumed.
	test.Tap(tv.pauseBtn)
	before := len(tv.shown)
	echo(t, sessions[0], "while paused")
	paused := func(f gateway.Frame) bool { return strings.Contains(f.Body, "while paused") }
	waitTrace("the paused call kept", func() bool {
		for _, f := range tv.frames {
			if paused(f) {
				return true
			}
		}
		return false
	})
	if len(tv.shown) != before || shownWith(paused) || !strings.Contains(tv.status.Text, "paused") {
		t.Errorf("paused view changed: %d → %d shown, status %q", before, len(tv.shown), tv.status.Text)
	}
	test.Tap(tv.pauseBtn)
	if !shownWith(paused) {
		t.Error("resume did not show the call made while paused")
	}
	test.Type(tv.search, "while paused")
	if len(tv.shown) == 0 || !shownWith(paused) || shownWith(gammaCall) {
		t.Errorf("filter: %d shown", len(tv.shown))
	}
	tv.table.Select(widget.TableCellID{Row: 0, Col: len(traceColumns) - 1})
	if !strings.Contains(tv.detail.Text, "while paused") {
		t.Errorf("selected frame's detail %q", tv.detail.Text)
	}

	// A profile's trace, from the Profiles dialog: the frames of its
	// aggregate sessions, a call to demo__echo among them.
	agg := exec.Command(u.bin, "connect", "--profile", "default")
	agg.Env = u.env
	actx, acancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer acancel()
	acs, err := mcp.NewClient(&mcp.Implementation{Name: "delta", Version: "1.0"}, nil).Connect(actx, &mcp.CommandTransport{Command: agg}, nil)
	if err != nil {
		t.Fatalf("mcptray connect --profile default: %v", err)
	}
	defer acs.Close()
	if res, err := acs.CallTool(actx, &mcp.CallToolParams{Name: "demo__echo", Arguments: map[string]any{"message": "through the profile"}}); err != nil || res.IsError {
		t.Fatalf("demo__echo through the aggregate: %v %+v", err, res)
	}
	c.showProfiles()
	tapOverlayButton(t, c.win, "Trace…")
	pt := c.profileTrace
	if pt == nil || pt.view.server != "default" || !pt.view.profile {
		t.Fatalf("Trace… in the Profiles dialog opened %+v", pt)
	}
	tv = pt.view
	waitTrace("the profile's call", func() bool {
		return shownWith(func(f gateway.Frame) bool {
			return f.Method == "tools/call" && strings.Contains(f.Body, "demo__echo") && strings.Contains(f.Body, "through the profile")
		})
	})
	pt.win.Close()
	if c.profileTrace != nil || pt.view.cancel != nil {
		t.Error("closing the profile's trace left it followed")
	}

	// Stop all servers and quit: the daemon stops its servers and exits 0.
	c.stopAllAction()()
	select {
	case err := <-ddone:
		if err != nil {
			t.Errorf("daemon exit after Stop all: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Stop all servers and quit did not stop the daemon")
	}
	if alive(demoPID) {
		t.Errorf("demo (pid %d) outlived Stop all", demoPID)
	}
}

// TestGUIFallsBackToAnInProcessEngine: when no daemon can be had, the app
// runs the servers itself and says why, in the window's banner and the
// tray (amber), and offers a plain Quit.
func TestGUIFallsBackToAnInProcessEngine(t *testing.T) {
	// The socket's folder cannot be made: a file stands where it goes.
	home := t.TempDir()
	file := filepath.Join(home, ".cache")
	os.WriteFile(file, nil, 0o600)
	t.Setenv("HOME", home)
	var stderr strings.Builder
	eng, _, host := newGUIEngine(context.Background(), &app.Env{Stderr: &stderr}, "", &registry.Config{})
	if _, ok := eng.(*control.Local); !ok || host.attached() || !strings.Contains(host.fallback, file) || host.start != nil {
		t.Fatalf("engine %T, host %+v; stderr %s", eng, host, stderr.String())
	}
	c := newTestController(t, newFakeEngine(sampleSnapshot()), "")
	c.host = host
	c.apply(c.eng.Snapshot())
	if w := c.main.warning.Text; !c.main.warning.Visible() || !strings.Contains(w, "The background service could not be started ("+host.fallback+"): the servers run in this app and stop when it quits.") {
		t.Errorf("banner %q", w)
	}
	if c.main.hostLine.Visible() {
		t.Errorf("host line shown for an in-process engine: %q", c.main.hostLine.Text)
	}
	w, level := c.host.warning(engineWarning(c.eng.Status()))
	menu := buildTrayMenu(c.snap, nil, firstLine(w), c.trayActions())
	if !strings.HasPrefix(menu.Items[1].Label, "The background service could not be started") || level != healthWarn {
		t.Errorf("tray: %q, level %v", menu.Items[1].Label, level)
	}
	if q := menu.Items[len(menu.Items)-1]; q.Label != "Quit" || menu.Items[len(menu.Items)-2].Label == "Stop all servers and quit" {
		t.Errorf("in-process tray ends with %q", q.Label)
	}
	c.main.selectServer("demo")
	if got := c.main.clients.none.Text; !strings.Contains(got, "the servers run in this app") {
		t.Errorf("clients tab: %q", got)
	}
}

// lockedBuffer is a buffer a process writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// runningGUI is `mcptray gui` of a scratch user.
type runningGUI struct {
	cmd    *exec.Cmd
	stderr *lockedBuffer
	done   chan struct{}
	err    error
}

func (u *userEnv) gui(t *testing.T, args ...string) *runningGUI {
	t.Helper()
	g := &runningGUI{cmd: exec.Command(u.bin, append([]string{"gui", "--config", u.cfg}, args...)...), stderr: &lockedBuffer{}, done: make(chan struct{})}
	g.cmd.Env = u.env
	g.cmd.Stderr = g.stderr
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { g.err = g.cmd.Wait(); close(g.done) }()
	t.Cleanup(func() { g.cmd.Process.Kill(); <-g.done })
	return g
}

func (g *runningGUI) pid() int { return g.cmd.Process.Pid }

// clickMenu clicks the tray item whose label starts with prefix and waits
// for the app to exit.
func (g *runningGUI) quitWith(t *testing.T, prefix string) {
	t.Helper()
	items, _ := trayMenu(g.pid())
	i, ok := labelWith(items, prefix)
	if !ok {
		t.Fatalf("no tray item %q: %v", prefix, items)
	}
	if err := clickItem(g.pid(), items[i].id); err != nil {
		t.Fatal(err)
	}
	select {
	case <-g.done:
		if g.err != nil {
			t.Errorf("mcptray gui exited with %v\n%s", g.err, g.stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not end the app\n%s", prefix, g.stderr)
	}
}

// daemonPID is the pid of the daemon answering on the user's socket (0:
// none).
func (u *userEnv) daemonPID() int {
	c, err := control.Dial(context.Background(), &control.ClientOptions{Socket: u.sock()})
	if err != nil {
		return 0
	}
	return c.Info().PID
}

// TestTrayClientsEndToEnd runs the real binaries as a user would: the
// desktop app starts the daemon; three AI clients connect through
// `mcptray connect demo`; the tray, read over D-Bus, says "demo: ready, 3
// clients" and where the servers run. Quit leaves the daemon serving the
// clients; the app started again attaches to it; a daemon killed is
// replaced (by the app or a bridge) and the tray names the new one; "Stop
// all servers and quit" stops the daemon, its servers and the bridges.
// With MCPTRAY_SCREENSHOTS set it photographs the Clients and Trace tabs.
func TestTrayClientsEndToEnd(t *testing.T) {
	needDesktop(t)
	u := newUserEnv(t)
	t.Cleanup(func() { stopDaemon(u.sock()) })
	g := u.gui(t)
	waitMenu(t, g.pid(), "demo ready", func(items []menuItem) bool { _, ok := labelWith(items, "demo: ready"); return ok })
	first := u.daemonPID()
	if first == 0 || first == g.pid() || !strings.Contains(g.stderr.String(), fmt.Sprintf("attached to the daemon (pid %d)", first)) {
		t.Fatalf("the app did not start a daemon: daemon pid %d, app pid %d\n%s", first, g.pid(), g.stderr)
	}
	var sessions []*mcp.ClientSession
	for i, name := range []string{"claude-code", "cursor", "gemini-cli"} {
		cs, _ := u.connectClient(t, "demo", name)
		sessions = append(sessions, cs)
		for j := range 3 * (i + 1) {
			echo(t, cs, fmt.Sprintf("%s says %d", name, j))
		}
	}
	threeClients := func(items []menuItem) bool { _, ok := labelWith(items, "demo: ready, 3 clients"); return ok }
	items := waitMenu(t, g.pid(), "demo: ready, 3 clients", threeClients)
	for _, want := range []string{"Stop all servers and quit", "Quit (servers keep running for your AI clients)"} {
		if _, ok := labelWith(items, want); !ok {
			t.Errorf("tray menu lacks %q: %v", want, items)
		}
	}
	if tip := trayProperty(t, g.pid(), "ToolTip"); !strings.Contains(tip, fmt.Sprintf("Servers run in the background service (daemon pid %d)", first)) {
		t.Errorf("tooltip %s does not say where the servers run", tip)
	}
	if dir := os.Getenv("MCPTRAY_SCREENSHOTS"); dir != "" {
		// The tabs of the 1100×700 window: Clients and Trace follow Latency.
		id := mainWindowID(t)
		click := func(x, y int) {
			if out, err := exec.Command("xdotool", "mousemove", "--window", id, fmt.Sprint(x), fmt.Sprint(y), "click", "1").CombinedOutput(); err != nil {
				t.Fatalf("xdotool: %v: %s", err, out)
			}
		}
		click(700, 300) // the first click gives the window the pointer
		click(990, 116)
		time.Sleep(gatewayPoll + time.Second) // a poll of the sessions
		screenshot(t, id, filepath.Join(dir, "clients-tab.png"))
		click(1064, 116)
		time.Sleep(time.Second) // a few flushes of the followed trace
		click(640, 321)         // a frame: its body below
		screenshot(t, id, filepath.Join(dir, "trace-tab.png"))
	}

	// Quit: the daemon keeps serving the clients.
	g.quitWith(t, "Quit (servers keep running")
	if u.daemonPID() != first {
		t.Fatalf("after Quit the daemon is %d, was %d", u.daemonPID(), first)
	}
	echo(t, sessions[0], "after the tray quit")

	// Started again, the app attaches to the same daemon.
	g = u.gui(t, "--hide")
	waitMenu(t, g.pid(), "demo: ready, 3 clients again", threeClients)
	if !strings.Contains(g.stderr.String(), fmt.Sprintf("attached to the daemon (pid %d)", first)) {
		t.Errorf("the second app did not attach to daemon %d:\n%s", first, g.stderr)
	}

	// A daemon killed is replaced; the tray says whose servers it shows.
	syscall.Kill(first, syscall.SIGKILL)
	var next int
	deadline := time.Now().Add(60 * time.Second)
	for {
		next = u.daemonPID()
		if next != 0 && next != first && strings.Contains(trayProperty(t, g.pid(), "ToolTip"), fmt.Sprintf("(daemon pid %d)", next)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no new daemon named in the tray (daemon now %d): %s", next, trayProperty(t, g.pid(), "ToolTip"))
		}
		time.Sleep(200 * time.Millisecond)
	}
	waitMenu(t, g.pid(), "the bridges back on the new daemon", threeClients)
	echo(t, sessions[1], "on the new daemon")
	demo := 0
	if c, err := control.Dial(context.Background(), &control.ClientOptions{Socket: u.sock()}); err == nil {
		if s, err := c.FetchSnapshot(context.Background()); err == nil && s.Server("demo") != nil {
			demo = s.Server("demo").PID
		}
	}

	// Stop all servers and quit: nothing of it is left.
	g.quitWith(t, "Stop all servers and quit")
	for deadline := time.Now().Add(30 * time.Second); alive(next) || (demo > 0 && alive(demo)); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after Stop all: daemon %d alive %v, demo %d alive %v", next, alive(next), demo, alive(demo))
		}
	}
	for _, cs := range sessions {
		ended := make(chan struct{})
		go func() { cs.Wait(); close(ended) }()
		select {
		case <-ended:
		case <-time.After(30 * time.Second):
			t.Fatal("a bridge outlived Stop all servers and quit")
		}
	}
	if p := u.daemonPID(); p != 0 {
		t.Errorf("a daemon (pid %d) answers after Stop all servers and quit", p)
	}
}

// goneDaemon is a gateway source whose daemon is gone.
type goneDaemon struct{ gatewaySource }

func (goneDaemon) Gateway(context.Context) (*control.GatewayInfo, error) {
	return nil, control.ErrNoDaemon
}

// TestNoDaemonStartedWhileStopping: the daemon gone starts another,
// unless "Stop all servers and quit" stopped it.
func TestNoDaemonStartedWhileStopping(t *testing.T) {
	var stopping bool
	starts := 0
	p := &gatewayPoller{src: goneDaemon{}, stopping: func() bool { return stopping },
		start: func(context.Context) (*control.Client, error) { starts++; return nil, control.ErrNoDaemon }}
	stopping = true
	if gi, pid := p.poll(t.Context()); gi != nil || pid != 0 || starts != 0 {
		t.Fatalf("while stopping: gateway %v, pid %d, %d daemons started", gi, pid, starts)
	}
	stopping = false
	p.poll(t.Context())
	if starts != 1 {
		t.Fatalf("the daemon gone started %d daemons, want 1", starts)
	}
}
