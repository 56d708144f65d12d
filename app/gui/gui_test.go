package gui

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"mcptray/app"
	"mcptray/app/present"
	"mcptray/control"
	"mcptray/healthcheck"
	"mcptray/registry"
	"mcptray/supervisor"
)

// fakeEngine satisfies control.Engine for UI tests: it serves a fixed
// snapshot and records the commands it gets.
type fakeEngine struct {
	mu       sync.Mutex
	snap     supervisor.Snapshot
	status   control.Status
	calls    []string
	logs     map[string][]supervisor.LogLine
	changes  chan struct{}
	watch    chan struct{}
	trans    []supervisor.Transition
	fail     error
	commands chan string
}

func newFakeEngine(snap supervisor.Snapshot) *fakeEngine {
	return &fakeEngine{snap: snap, logs: map[string][]supervisor.LogLine{}, changes: make(chan struct{}, 1),
		watch: make(chan struct{}), commands: make(chan string, 100)}
}

// changed signals a change the way the supervisor does: Changes and Watch.
func (f *fakeEngine) changed() {
	f.mu.Lock()
	close(f.watch)
	f.watch = make(chan struct{})
	f.mu.Unlock()
	select {
	case f.changes <- struct{}{}:
	default:
	}
}

func (f *fakeEngine) Watch() <-chan struct{} { f.mu.Lock(); defer f.mu.Unlock(); return f.watch }
func (f *fakeEngine) Transitions(since uint64) ([]supervisor.Transition, uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []supervisor.Transition
	for _, t := range f.trans {
		if t.Seq >= since {
			out = append(out, t)
		}
	}
	return out, uint64(len(f.trans)) + 1
}

func (f *fakeEngine) Snapshot() supervisor.Snapshot { f.mu.Lock(); defer f.mu.Unlock(); return f.snap }
func (f *fakeEngine) Status() control.Status        { f.mu.Lock(); defer f.mu.Unlock(); return f.status }
func (f *fakeEngine) Changes() <-chan struct{}      { return f.changes }
func (f *fakeEngine) record(c string) error {
	f.mu.Lock()
	f.calls = append(f.calls, c)
	err := f.fail
	f.mu.Unlock()
	f.commands <- c
	return err
}
func (f *fakeEngine) Start(_ context.Context, n string) error    { return f.record("start " + n) }
func (f *fakeEngine) Stop(_ context.Context, n string) error     { return f.record("stop " + n) }
func (f *fakeEngine) Restart(_ context.Context, n string) error  { return f.record("restart " + n) }
func (f *fakeEngine) CheckNow(_ context.Context, n string) error { return f.record("check " + n) }
func (f *fakeEngine) Reload(context.Context) (*control.ReloadResult, error) {
	return &control.ReloadResult{}, f.record("reload")
}
func (f *fakeEngine) Log(_ context.Context, name string, since uint64) ([]supervisor.LogLine, uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []supervisor.LogLine
	next := since
	for _, l := range f.logs[name] {
		if l.Seq > since {
			out = append(out, l)
			next = l.Seq
		}
	}
	return out, next, nil
}

// called reports whether the engine got command c.
func (f *fakeEngine) called(c string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Contains(f.calls, c)
}

// waitCommand waits for the engine to get a command.
func (f *fakeEngine) waitCommand(t *testing.T, want string) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case c := <-f.commands:
			if c == want {
				return
			}
		case <-deadline:
			f.mu.Lock()
			defer f.mu.Unlock()
			t.Fatalf("engine never got %q; got %v", want, f.calls)
		}
	}
}

var t0 = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

func init() {
	// Goldens show times; make them the same on every machine.
	time.Local = time.UTC
}

// sampleSnapshot holds a server in every state the UI distinguishes.
func sampleSnapshot() supervisor.Snapshot {
	demo := &registry.Server{Name: "demo", Command: "/usr/local/bin/mcptray", Args: []string{"serve-demo"}, Autostart: true}
	report := &healthcheck.Report{
		Era: healthcheck.EraModern, EraSource: "server/discover answered", ProtocolVersion: "2026-07-28",
		ServerInfo:   healthcheck.ServerInfo{Name: "mcptray-demo", Version: "1.0.0", Title: "mcptray demo"},
		Capabilities: json.RawMessage(`{"tools":{"listChanged":true},"resources":{},"prompts":{}}`),
		Instructions: "A demo server.",
		Tools: []healthcheck.Tool{
			{Name: "echo", Description: "Repeats the message back.", InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}}}`)},
			{Name: "add", Description: "Adds two numbers."},
			{Name: "time", Description: "Tells the current time."},
		},
		Resources: []healthcheck.Resource{{URI: "demo://readme", Name: "readme", MIMEType: "text/plain"}},
		Prompts:   []healthcheck.Prompt{{Name: "greet", Description: "A greeting.", Arguments: []healthcheck.PromptArgument{{Name: "name", Required: true}}}},
	}
	st := func(name string, state supervisor.State, srv *registry.Server) supervisor.ServerState {
		if srv == nil {
			srv = &registry.Server{Name: name, Command: "x", Autostart: true}
		}
		return supervisor.ServerState{Name: name, Server: srv, Transport: srv.Transport(), State: state, Since: t0, Reason: "because"}
	}
	ready := st("demo", supervisor.StateReady, demo)
	ready.PID, ready.StartedAt, ready.Report, ready.Command = 4242, t0, report, "/usr/local/bin/mcptray"
	ready.Probes = healthcheck.ProbeStats{Count: 3, Last: 3 * time.Millisecond, Min: time.Millisecond, Median: 2 * time.Millisecond, P95: 3 * time.Millisecond,
		Recent: []time.Duration{time.Millisecond, 2 * time.Millisecond, 3 * time.Millisecond}}
	crash := st("github", supervisor.StateCrashLooping, nil)
	crash.LastExit = &supervisor.ExitInfo{Code: 1, Uptime: time.Second, Time: t0}
	crash.Restarts = 5
	crash.Diagnosis = &healthcheck.Diagnosis{Code: healthcheck.CodeExitedDuringStartup, Message: "github exited with code 1 during startup.", Fix: "Set GITHUB_TOKEN."}
	failed := st("missing", supervisor.StateFailed, nil)
	failed.Diagnosis = &healthcheck.Diagnosis{Code: healthcheck.CodeCommandNotFound, Message: "nosuchcmd was not found on PATH."}
	backoff := st("flaky", supervisor.StateBackoff, nil)
	backoff.LastExit = &supervisor.ExitInfo{Code: -1, Signal: "SIGKILL", Time: t0}
	stopped := st("idle", supervisor.StateStopped, nil)
	return supervisor.Snapshot{Time: t0, Servers: []supervisor.ServerState{ready, crash, failed, backoff, stopped}}
}

func TestAggregate(t *testing.T) {
	mk := func(states ...supervisor.State) supervisor.Snapshot {
		var s supervisor.Snapshot
		for i, st := range states {
			s.Servers = append(s.Servers, supervisor.ServerState{Name: fmt.Sprint(i), State: st, Server: &registry.Server{}})
		}
		return s
	}
	for _, tt := range []struct {
		states []supervisor.State
		want   health
	}{
		{nil, healthIdle},
		{[]supervisor.State{supervisor.StateStopped, supervisor.StateStopped}, healthIdle},
		{[]supervisor.State{supervisor.StateReady, supervisor.StateStopped}, healthReady},
		{[]supervisor.State{supervisor.StateReady, supervisor.StateStarting}, healthWarn},
		{[]supervisor.State{supervisor.StateReady, supervisor.StateDegraded}, healthWarn},
		{[]supervisor.State{supervisor.StateBackoff, supervisor.StateReady}, healthWarn},
		{[]supervisor.State{supervisor.StateReady, supervisor.StateFailed}, healthError},
		{[]supervisor.State{supervisor.StateStarting, supervisor.StateUnhealthy}, healthError},
		{[]supervisor.State{supervisor.StateCrashLooping}, healthError},
	} {
		if got := aggregate(mk(tt.states...)); got != tt.want {
			t.Errorf("%v: %v, want %v", tt.states, got, tt.want)
		}
	}
	// A disabled server does not count.
	s := mk(supervisor.StateReady, supervisor.StateFailed)
	s.Servers[1].Server.Disabled = true
	if got := aggregate(s); got != healthReady {
		t.Errorf("disabled failed server counted: %v", got)
	}
}

// TestWarningsShow: a server the engine says works with warnings (here,
// stdout noise) is amber in the tray and the list, names the warning in the
// tray line, and has a card in the window; a stopped one's catalog is
// marked as last seen.
func TestWarningsShow(t *testing.T) {
	snap := sampleSnapshot()
	demo := &snap.Servers[0]
	demo.Level = supervisor.LevelWarn
	demo.Warnings = []healthcheck.Diagnosis{{Code: healthcheck.CodeStdoutNoise, Message: "The server printed 1 non-JSON line on stdout.", Evidence: []string{`"Welcome"`}}}
	for i := range snap.Servers[1:] {
		snap.Servers[i+1].Server.Disabled = true
	}
	if got := aggregate(snap); got != healthWarn {
		t.Errorf("tray health %v, want warn", got)
	}
	if got := dotColor(demo); got != dotColor(&supervisor.ServerState{State: supervisor.StateStarting}) {
		t.Errorf("dot %v, want amber", got)
	}
	menu := buildTrayMenu(snap, nil, "", trayActions{})
	if l := menu.Items[3].Label; !strings.Contains(l, "warning: stdout-noise") { // after Open and the summary line
		t.Errorf("tray line %q does not name the warning", l)
	}
	c := newTestController(t, newFakeEngine(snap), "")
	c.apply(snap)
	m := c.main
	m.selectServer("demo")
	if !m.diagCard.Visible() || m.diagCard.Title != "warning: stdout-noise" || !strings.Contains(m.diagText.Text, "Welcome") {
		t.Errorf("warning card: visible=%v title=%q text=%q", m.diagCard.Visible(), m.diagCard.Title, m.diagText.Text)
	}
	// Stopped: the tools are as last seen.
	demo.State, demo.Level, demo.Warnings, demo.LastLive = supervisor.StateStopped, supervisor.LevelIdle, nil, t0
	c.apply(snap)
	m.selectServer("demo")
	if got := m.tabs.Items[1].Text; !strings.Contains(got, "last seen") {
		t.Errorf("tools tab of a stopped server: %q", got)
	}
	if got := m.fields["Server"].Text; !strings.Contains(got, "last seen") {
		t.Errorf("server field of a stopped server: %q", got)
	}
}

// TestBackoffCountsDown: the retry is said as time left, which moves.
func TestBackoffCountsDown(t *testing.T) {
	st := supervisor.ServerState{Name: "x", State: supervisor.StateBackoff, NextAttempt: t0.Add(10 * time.Second), Server: &registry.Server{Command: "x"}}
	if got := present.StateDetailAt(&st, t0); !strings.Contains(got, "restart in 10s") {
		t.Errorf("at t0: %q", got)
	}
	if got := present.StateDetailAt(&st, t0.Add(7*time.Second)); !strings.Contains(got, "restart in 3s") {
		t.Errorf("7 s later: %q", got)
	}
	st.Server = &registry.Server{URL: "http://x/mcp"}
	st.Restarts = 2
	if got := present.StateDetailAt(&st, t0); !strings.Contains(got, "reconnect in 10s") || !strings.Contains(got, "2 reconnects") {
		t.Errorf("remote: %q", got)
	}
}

func TestTrayMenu(t *testing.T) {
	test.NewTempApp(t)
	var got []string
	act := trayActions{
		restart:     func(n string) { got = append(got, "restart "+n) },
		startStop:   func(n string, start bool) { got = append(got, fmt.Sprintf("startStop %s %v", n, start)) },
		showDetails: func(n string) { got = append(got, "details "+n) },
		viewLog:     func(n string) { got = append(got, "log "+n) },
		copyConfig:  func(n, c string) { got = append(got, "copy "+n+" "+c) },
		openMain:    func() { got = append(got, "open") },
		checkAll:    func() { got = append(got, "check") },
		reload:      func() { got = append(got, "reload") },
		quit:        func() { got = append(got, "quit") },
	}
	copyClients = func() [][2]string { return [][2]string{{"cursor", "Cursor"}} }
	menu := buildTrayMenu(sampleSnapshot(), nil, "", act)
	var labels []string
	for _, it := range menu.Items {
		labels = append(labels, it.Label)
	}
	// Open first; no figure that moves on its own (a latency, a countdown).
	want := []string{
		"Open mcptray", "1 ready · 2 failing · 1 retrying · 1 stopped", "",
		"github: crash-looping, exit 1, 5 restarts",
		"missing: failed, command-not-found",
		"flaky: retrying, SIGKILL",
		"demo: ready, 3 tools",
		"idle: stopped",
		"", "Check all now", "Reload config", "", "Quit",
	}
	if !slices.Equal(labels, want) {
		t.Errorf("labels:\n%q\nwant\n%q", labels, want)
	}
	if !menu.Items[1].Disabled {
		t.Error("the summary line is a menu item that does something")
	}
	sub := func(i int) []string {
		var out []string
		for _, it := range menu.Items[i].ChildMenu.Items {
			out = append(out, it.Label)
		}
		return out
	}
	if s := sub(6); !slices.Equal(s, []string{"Restart", "Stop", "Show details", "View log", "Copy config for"}) {
		t.Errorf("ready submenu: %q", s)
	}
	// A server that is not running offers Start, with Restart greyed out
	// (the submenu keeps its shape, so its items keep their ids).
	for _, i := range []int{3, 4, 7} {
		if s := sub(i); s[1] != "Start" || !menu.Items[i].ChildMenu.Items[0].Disabled {
			t.Errorf("%s submenu: %q", menu.Items[i].Label, s)
		}
	}
	menu.Items[6].ChildMenu.Items[0].Action()
	menu.Items[7].ChildMenu.Items[1].Action()
	menu.Items[6].ChildMenu.Items[1].Action()
	menu.Items[3].ChildMenu.Items[3].Action()
	menu.Items[6].ChildMenu.Items[4].ChildMenu.Items[0].Action()
	menu.Items[0].Action()
	menu.Items[9].Action()
	menu.Items[10].Action()
	menu.Items[12].Action()
	wantCalls := []string{"restart demo", "startStop idle true", "startStop demo false", "log github", "copy demo cursor", "open", "check", "reload", "quit"}
	if !slices.Equal(got, wantCalls) {
		t.Errorf("calls %q\nwant %q", got, wantCalls)
	}

	tip := trayTooltip(sampleSnapshot(), "")
	if tip != "mcptray: 1 ready · 2 failing · 1 retrying · 1 stopped\ngithub: crash-looping, exit 1, 5 restarts\nmissing: failed, command-not-found\nflaky: retrying, SIGKILL" {
		t.Errorf("tooltip %q", tip)
	}
}

func newTestController(t *testing.T, eng control.Engine, cfgPath string) *controller {
	t.Helper()
	a := test.NewTempApp(t)
	c := newController(a, eng, cfgPath, &app.Env{})
	c.now = func() time.Time { return t0.Add(5 * time.Minute) }
	c.openMain()
	c.win.Resize(fyne.NewSize(1100, 700))
	return c
}

func TestMainWindowShowsEveryState(t *testing.T) {
	eng := newFakeEngine(sampleSnapshot())
	c := newTestController(t, eng, "")
	c.apply(eng.Snapshot())
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
	if got := m.fields["Protocol"].Text; !strings.Contains(got, "2026-07-28 · modern") {
		t.Errorf("protocol field = %q", got)
	}
	if m.tabs.Items[1].Text != "Tools (3)" || len(m.tools.shown) != 3 {
		t.Errorf("tools tab %q, %d shown", m.tabs.Items[1].Text, len(m.tools.shown))
	}
	// Searching tools narrows the list; selecting shows the input schema.
	test.Type(m.tools.search, "ech")
	if len(m.tools.shown) != 1 {
		t.Fatalf("search: %d shown", len(m.tools.shown))
	}
	m.tools.list.Select(0)
	if !strings.Contains(m.tools.detail.Text, `"message"`) {
		t.Errorf("schema not shown: %q", m.tools.detail.Text)
	}

	m.selectServer("github")
	if !m.diagCard.Visible() || m.diagCard.Title != "exited-during-startup" || !strings.Contains(m.diagText.Text, "Set GITHUB_TOKEN.") {
		t.Errorf("diagnosis card: visible=%v title=%q text=%q", m.diagCard.Visible(), m.diagCard.Title, m.diagText.Text)
	}
	if m.startStop.Text != "Start" {
		t.Errorf("crash-looping server offers %q", m.startStop.Text)
	}
	test.AssertRendersToMarkup(t, "main_crashlooping.xml", c.win.Canvas())

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
}

func TestLogView(t *testing.T) {
	eng := newFakeEngine(sampleSnapshot())
	for i := 1; i <= 30; i++ {
		eng.logs["demo"] = append(eng.logs["demo"], supervisor.LogLine{Seq: uint64(i), Time: t0, Text: fmt.Sprintf("line %d %s", i, map[bool]string{true: "ERROR", false: "info"}[i%10 == 0])})
	}
	c := newTestController(t, eng, "")
	c.apply(eng.Snapshot())
	lv := c.main.log
	lv.SetServer("demo")
	lv.poll() // on the test driver, fyne.Do runs at once
	if len(lv.shown) != 30 {
		t.Fatalf("shown %d", len(lv.shown))
	}
	test.Type(lv.search, "error")
	if len(lv.shown) != 3 || !strings.Contains(lv.text(), "line 20 ERROR") {
		t.Errorf("search: %d shown\n%s", len(lv.shown), lv.text())
	}
	lv.search.SetText("")
	test.Tap(lv.pauseBtn)
	lv.append("demo", []supervisor.LogLine{{Seq: 31, Time: t0, Text: "while paused"}})
	if len(lv.shown) != 30 {
		t.Errorf("paused view changed: %d", len(lv.shown))
	}
	test.Tap(lv.pauseBtn)
	if len(lv.shown) != 31 {
		t.Errorf("resume did not show kept lines: %d", len(lv.shown))
	}
	// The view keeps at most logViewLimit lines.
	big := make([]supervisor.LogLine, logViewLimit+500)
	for i := range big {
		big[i] = supervisor.LogLine{Seq: uint64(100 + i), Text: "x"}
	}
	lv.append("demo", big)
	if len(lv.lines) != logViewLimit {
		t.Errorf("kept %d lines", len(lv.lines))
	}
	// Another server's lines arriving late are ignored.
	lv.SetServer("github")
	lv.append("demo", []supervisor.LogLine{{Seq: 1, Text: "late"}})
	if len(lv.lines) != 0 {
		t.Errorf("late lines from another server shown")
	}
}

func TestServerFormValidatesAsYouType(t *testing.T) {
	test.NewTempApp(t)
	f := newServerForm(nil, []string{"demo"})
	w := test.NewTempWindow(t, f.content)
	w.Resize(fyne.NewSize(640, 620))
	valid := true
	f.onValid = func(ok bool) { valid = ok }
	// A new form is not wrong yet: nothing was touched.
	if got := f.problemText(); got != "" {
		t.Errorf("a new form shows %q", got)
	}
	test.AssertRendersToMarkup(t, "form_new.xml", w.Canvas())

	test.Type(f.name, "demo")
	if valid || f.errs["name"].Text != `A server called "demo" already exists.` || f.errs["command"].Visible() {
		t.Errorf("duplicate name: valid=%v %q", valid, f.problemText())
	}
	f.name.SetText("bad name!")
	test.Type(f.command, "npx")
	if valid || f.errs["name"].Text != "Use up to 64 letters, digits, - or _ (no spaces)." {
		t.Errorf("bad name: %q", f.problemText())
	}
	f.name.SetText("fs")
	f.env.SetText("NOEQUALS")
	if valid || f.errs["env"].Text != "Line 1: write KEY=VALUE." {
		t.Errorf("bad env: %q", f.problemText())
	}
	f.env.SetText("API_TOKEN=abc123")
	if !valid || !strings.Contains(f.hints["env"].Text, "literal secret") {
		t.Errorf("no literal-secret hint, or it blocks saving: %v %q", valid, f.problemText())
	}
	f.env.SetText("API_TOKEN=${env:API_TOKEN}")
	f.args.SetText("-y\n@modelcontextprotocol/server-filesystem\n~/docs")
	if !valid || f.problemText() != "" {
		t.Errorf("valid stdio form: %v %q", valid, f.problemText())
	}
	s, _ := f.server()
	if s.Command != "npx" || len(s.Args) != 3 || s.Env["API_TOKEN"] != "${env:API_TOKEN}" || !s.Autostart {
		t.Errorf("server = %+v", s)
	}

	f.kind.SetSelected(kindRemote)
	// The URL is required, but not said before it is touched...
	if valid || f.errs["url"].Visible() {
		t.Errorf("untouched url: valid=%v %q", valid, f.problemText())
	}
	// ...or before Save is pressed.
	f.showAll = true
	f.validate()
	if f.errs["url"].Text != "Give the server's address, e.g. https://example.com/mcp." {
		t.Errorf("after Save: %q", f.problemText())
	}
	f.showAll = false
	test.Type(f.url, "ftp://x")
	if valid || !strings.Contains(f.errs["url"].Text, "Must start with http:// or https://") {
		t.Errorf("bad url: %q", f.problemText())
	}
	f.url.SetText("https://example.com/mcp")
	f.headers.SetText("Authorization: Bearer ${env:TOKEN}")
	f.transport.SetSelected(transportChoices[1])
	if !valid {
		t.Errorf("valid remote form: %q", f.problemText())
	}
	s, _ = f.server()
	if s.URL != "https://example.com/mcp" || s.TransportName != registry.TransportSSE || s.Headers["Authorization"] != "Bearer ${env:TOKEN}" || s.Command != "" {
		t.Errorf("remote server = %+v", s)
	}
	test.AssertRendersToMarkup(t, "form_remote.xml", w.Canvas())
}

// An entry with both a command and a url says so, and what saving drops.
// What the form does not show of an entry (start = "lazy", idle_stop,
// share = false) is saved as it was; checking "Start with mcptray" makes
// it start = "auto".
func TestServerFormKeepsLifecycle(t *testing.T) {
	test.NewTempApp(t)
	lazy := &registry.Server{Name: "browser", Command: "npx", Start: registry.StartLazy, IdleStop: 10 * time.Minute, Unshared: true}
	f := newServerForm(lazy, nil)
	if f.autostart.Checked {
		t.Error("a lazy server shows as starting with mcptray")
	}
	f.description.SetText("a browser")
	s, _ := f.server()
	if s.StartMode() != registry.StartLazy || s.IdleStop != 10*time.Minute || !s.Unshared || s.Description != "a browser" {
		t.Errorf("edited lazy server = %+v", s)
	}
	f.autostart.SetChecked(true)
	if s, _ := f.server(); s.StartMode() != registry.StartAuto || s.IdleStop != 10*time.Minute {
		t.Errorf("checked: %+v", s)
	}
	old := newServerForm(&registry.Server{Name: "old", Command: "x"}, nil) // autostart = false
	if s, _ := old.server(); s.StartMode() != registry.StartManual || s.Start != "" {
		t.Errorf("autostart = false entry: %+v", s)
	}
}

func TestServerFormWithCommandAndURL(t *testing.T) {
	test.NewTempApp(t)
	f := newServerForm(&registry.Server{Name: "both", Command: "npx", URL: "https://example.com/mcp"}, nil)
	if !f.note.Visible() || !strings.Contains(f.note.Text, "drops its url https://example.com/mcp") || f.kind.Selected != kindStdio {
		t.Errorf("note %v %q, kind %q", f.note.Visible(), f.note.Text, f.kind.Selected)
	}
	f.kind.SetSelected(kindRemote)
	if !strings.Contains(f.note.Text, "drops its command npx") {
		t.Errorf("note after switching: %q", f.note.Text)
	}
	s, _ := f.server()
	if s.URL != "https://example.com/mcp" || s.Command != "" {
		t.Errorf("server %+v", s)
	}
}

// An entry added from a catalog keeps its source through an edit in the
// form, which has no field for it.
func TestServerFormKeepsSource(t *testing.T) {
	test.NewTempApp(t)
	f := newServerForm(nil, nil)
	f.load(&registry.Server{Name: "everything", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-everything@2.0.0", "stdio"},
		Autostart: true, Source: "registry:io.github.modelcontextprotocol/server-everything@2.0.0"})
	f.description.SetText("edited")
	s, problems := f.server()
	if len(problems) != 0 || s.Source != "registry:io.github.modelcontextprotocol/server-everything@2.0.0" || s.Description != "edited" {
		t.Errorf("server %+v, problems %v", s, problems)
	}
}

// What a person pastes (a client's JSON entry, Codex TOML, a command line)
// fills the form, through clients.ParseSnippet and the importers.
func TestServerFormPaste(t *testing.T) {
	test.NewTempApp(t)
	for _, tt := range []struct{ name, text, want string }{
		{"entry", `{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}}`, "npx|2|github|${env:GITHUB_TOKEN}"},
		{"named", `"gh": {"command": "npx", "args": ["x"]},`, "npx|1|gh|"},
		{"file", `{"mcpServers": {"remote": {"url": "https://example.com/mcp"}, "two": {"command": "y"}}}`, "https://example.com/mcp|0|remote|"},
		{"remote entry", `{"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer x"}}`, "https://example.com/mcp|0|github|"},
		{"command line", `GITHUB_TOKEN='${env:GH}' npx -y @modelcontextprotocol/server-github`, "npx|2|server-github|${env:GH}"},
		{"codex toml", "[mcp_servers.docs]\ncommand = \"uvx\"\nargs = [\"mcp-docs\"]\n", "uvx|1|docs|"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newServerForm(nil, nil)
			f.name.SetText("github")
			f.paste(tt.text)
			s, _ := f.server()
			target := s.Command
			if s.URL != "" {
				target = s.URL
			}
			got := fmt.Sprintf("%s|%d|%s|%s", target, len(s.Args), s.Name, s.Env["GITHUB_TOKEN"])
			if got != tt.want {
				t.Errorf("got %s, want %s (%q)", got, tt.want, f.testResult.Text)
			}
		})
	}
	f := newServerForm(nil, nil)
	f.paste(`{"command": `)
	if !strings.HasPrefix(f.testResult.Text, "Nothing pasted: ") {
		t.Errorf("bad paste: %q", f.testResult.Text)
	}
}

// Test runs what the form holds through the engine's check, before saving.
func TestServerFormTest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "servers.toml")
	os.WriteFile(path, nil, 0o600)
	c := newTestController(t, newFakeEngine(sampleSnapshot()), path)
	var checked *registry.Server
	c.checkServer = func(s *registry.Server, _ *registry.Config) supervisor.ServerState {
		checked = s
		st := sampleSnapshot().Servers[2] // failed: command not found
		return st
	}
	c.editServer("", false)
	c.adding.tabs.SelectIndex(3) // Manual
	f := c.form
	test.Type(f.name, "x")
	test.Type(f.command, "nosuchcmd")
	done := make(chan struct{})
	c.afterTest = func() { close(done) }
	tapOverlayButton(t, c.win, "Test")
	<-done
	if checked == nil || checked.Command != "nosuchcmd" {
		t.Fatalf("checked %+v", checked)
	}
	if !strings.Contains(f.testResult.Text, "Does not work: nosuchcmd was not found on PATH.") {
		t.Errorf("result %q", f.testResult.Text)
	}
	// Fixing the command takes the outcome of the old one away.
	test.Type(f.command, "x")
	if f.testResult.Visible() {
		t.Errorf("after an edit the old Test outcome stays: %q", f.testResult.Text)
	}
	// Escape closes the form.
	f.name.TypedKey(&fyne.KeyEvent{Name: fyne.KeyEscape})
	if c.win.Canvas().Overlays().Top() != nil {
		t.Error("Escape did not close the form")
	}
}

func TestEditSaveAndRemoveLeaveApplyingToTheEngine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "servers.toml")
	os.WriteFile(path, []byte("# mine\n[servers.a]\ncommand = \"x\"\n\n[servers.b]\ncommand = \"y\"\n"), 0o600)
	eng := newFakeEngine(sampleSnapshot())
	c := newTestController(t, eng, path)

	if err := c.saveServer("", &registry.Server{Name: "new", URL: "http://127.0.0.1:9/mcp", Autostart: true}); err != nil {
		t.Fatal(err)
	}
	if err := c.saveServer("a", &registry.Server{Name: "a", Command: "x", Args: []string{"--v"}, Autostart: true}); err != nil {
		t.Fatal(err)
	}
	cfg, _ := registry.Load(path)
	var names []string
	for _, s := range cfg.Servers {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"a", "b", "new"}) || cfg.Server("a").Args[0] != "--v" {
		t.Errorf("saved config: %v %+v", names, cfg.Server("a"))
	}
	// The engine follows its file: the app does not reload on top.
	if eng.called("reload") {
		t.Errorf("the app reloaded after a save: %v", eng.calls)
	}
	if bak, _ := os.ReadFile(path + ".bak"); !strings.Contains(string(bak), "--v") && !strings.Contains(string(bak), "new") {
		t.Errorf("no backup: %q", bak)
	}
	// A file that no longer loads is not touched.
	os.WriteFile(path, []byte("[servers.a\n"), 0o600)
	if err := c.saveServer("", &registry.Server{Name: "z", Command: "z", Autostart: true}); err == nil || !strings.Contains(err.Error(), "was not changed") {
		t.Errorf("broken file: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "[servers.a\n" {
		t.Errorf("broken file changed: %q", b)
	}
}

func TestNotifications(t *testing.T) {
	a := test.NewTempApp(t)
	now := t0
	n := newNotifier(a, func() time.Time { return now })
	n.send = func(notice) {}
	tr := func(server string, ev supervisor.Event, reason string) supervisor.Transition {
		return supervisor.Transition{Server: server, Event: ev, Reason: reason}
	}
	crash := []supervisor.Transition{
		tr("demo", supervisor.EventCrashed, "crashed: killed by SIGKILL after 1m0s; restarting in 1s"),
		tr("flaky", supervisor.EventRecovered, "flaky 1.0 ready"),
		{Server: "quiet", From: supervisor.StateStarting, To: supervisor.StateReady}, // no news
	}
	n.Observe(crash)
	if len(n.sent) != 2 || n.sent[0].title != "demo crashed" || !strings.Contains(n.sent[0].body, "SIGKILL") || n.sent[1].title != "flaky recovered" {
		t.Fatalf("sent %+v", n.sent)
	}
	// The recoveries and crashes that follow are news once each...
	back := []supervisor.Transition{tr("demo", supervisor.EventRecovered, "ready"), tr("flaky", supervisor.EventCrashed, "crashed")}
	n.Observe(back)
	titles := n.sent[2].title + "|" + n.sent[3].title
	if len(n.sent) != 4 || !strings.Contains(titles, "demo recovered") || !strings.Contains(titles, "flaky crashed") {
		t.Fatalf("recovery and crash: %+v", n.sent)
	}
	// ...but the same news again within the rate limit is not.
	n.Observe(crash)
	n.Observe(back)
	if len(n.sent) != 4 {
		t.Errorf("rate limit: %+v", n.sent)
	}
	now = now.Add(time.Minute)
	n.SetEnabled(false)
	n.Observe(crash)
	if len(n.sent) != 4 {
		t.Errorf("sent while switched off")
	}
	n.SetEnabled(true)
	n.Observe([]supervisor.Transition{tr("demo", supervisor.EventFlapping, "ready"), tr("web", supervisor.EventDisconnected, "connection refused")})
	if len(n.sent) != 6 || n.sent[4].title != "demo keeps going down" || n.sent[5].title != "web disconnected" {
		t.Errorf("flapping and disconnect: %+v", n.sent[4:])
	}
	// One "keeps going down" per server, however often it flaps.
	for range 5 {
		now = now.Add(2 * time.Minute)
		n.Observe([]supervisor.Transition{tr("demo", supervisor.EventFlapping, "ready")})
	}
	if len(n.sent) != 6 {
		t.Errorf("flapping said again: %+v", n.sent[6:])
	}
}

// TestNotificationWords: a server mcptray ended (a handshake it never
// finished) is "stopped by mcptray", not "crashed"; bodies keep their words
// as written; each notice expires and names its server (so the next one of
// the same server replaces it).
func TestNotificationWords(t *testing.T) {
	a := test.NewTempApp(t)
	n := newNotifier(a, nil)
	var got []notice
	n.send = func(x notice) { got = append(got, x) }
	n.Observe([]supervisor.Transition{
		{Server: "mute", Event: supervisor.EventCrashed, Code: healthcheck.CodeHandshakeTimeout, Reason: "no answer to initialize within 2s; restarting in 1s"},
		{Server: "demo", Event: supervisor.EventCrashLooping, Reason: "crashed 5 times in 1m0s"},
	})
	if len(got) != 2 {
		t.Fatalf("sent %+v", got)
	}
	if got[0].title != "mute stopped by mcptray: handshake-timeout" || got[0].body != "no answer to initialize within 2s; restarting in 1s." {
		t.Errorf("stopped by mcptray: %+v", got[0])
	}
	if !strings.Contains(got[1].body, ". mcptray stopped restarting it") {
		t.Errorf("words changed: %q", got[1].body)
	}
	for _, x := range got {
		if x.expire <= 0 || x.server == "" {
			t.Errorf("notice %+v does not expire or names no server", x)
		}
	}
}

func TestLatencyChartRenders(t *testing.T) {
	test.NewTempApp(t)
	c := newLatencyChart()
	w := test.NewTempWindow(t, c)
	w.Resize(fyne.NewSize(300, 150))
	c.SetSamples([]time.Duration{time.Millisecond, 4 * time.Millisecond, 2 * time.Millisecond}, 4*time.Millisecond)
	test.AssertRendersToMarkup(t, "latency_chart.xml", w.Canvas())
}

func TestStaleDaemonIsShown(t *testing.T) {
	eng := newFakeEngine(sampleSnapshot())
	eng.status.Unreachable = fmt.Errorf("connection refused")
	c := newTestController(t, eng, "")
	c.apply(eng.Snapshot())
	if !c.main.warning.Visible() || !strings.Contains(c.main.warning.Text, "not answering") {
		t.Errorf("warning: visible=%v %q", c.main.warning.Visible(), c.main.warning.Text)
	}
	warning, level := engineWarning(eng.Status())
	menu := buildTrayMenu(eng.Snapshot(), nil, warning, c.trayActions())
	// Open mcptray first, then the warning.
	if !strings.Contains(menu.Items[1].Label, "not answering") || !menu.Items[1].Disabled || level != healthError {
		t.Errorf("tray's item after Open: %+v (level %v)", menu.Items[1], level)
	}
	if w, _ := engineWarning(newFakeEngine(sampleSnapshot()).Status()); w != "" {
		t.Error("an in-process engine is never stale")
	}
}

// Switching from a server with a long list to one with none must not draw
// the old rows (a selected row made the list redraw before refiltering).
func TestCatalogShrinksWithASelectedRow(t *testing.T) {
	test.NewTempApp(t)
	c := newCatalogView("tools", nil, false)
	w := test.NewTempWindow(t, c.content)
	w.Resize(fyne.NewSize(600, 400))
	c.SetItems(toolItems([]healthcheck.Tool{{Name: "a"}, {Name: "b"}, {Name: "c"}}, 3), false)
	c.list.Select(2)
	c.SetItems(nil, false)
	if len(c.shown) != 0 || c.count.Text != "no tools" {
		t.Errorf("after shrinking: %d shown, %q", len(c.shown), c.count.Text)
	}
}

// manySnapshot is n servers in config order, every tenth failing (the third
// of them crash-looping), one stopped; the rest ready.
func manySnapshot(n int) supervisor.Snapshot {
	base := sampleSnapshot()
	var snap supervisor.Snapshot
	snap.Time = t0
	for i := range n {
		var s supervisor.ServerState
		switch {
		case i%10 == 4:
			s = base.Servers[2] // failed
		case i%10 == 7 && i > 20:
			s = base.Servers[1] // crash-looping
		case i == n-2:
			s = base.Servers[4] // stopped
		default:
			s = base.Servers[0] // ready
		}
		s.Name = fmt.Sprintf("server-%02d", i+1)
		srv := *s.Server
		srv.Name = s.Name
		s.Server = &srv
		snap.Servers = append(snap.Servers, s)
	}
	return snap

}

// TestNotificationsFromARealEngine: a real supervisor whose server crashes
// again and again; the app's notifications follow the engine's
// transitions: one crash, one recovery, never a second "recovered".
func TestNotificationsFromARealEngine(t *testing.T) {
	srv := &registry.Server{Name: "flaky", Command: "sh", Args: []string{"-c", "sleep 0.2; exit 1"}, Autostart: true}
	sup := control.NewLocal(&registry.Config{Servers: []*registry.Server{srv}}, &control.LocalOptions{
		Supervisor: &supervisor.Options{
			NoLogFiles: true, BackoffBase: 10 * time.Millisecond, Jitter: -1, CrashLoopCount: 100,
			Environ: func(context.Context) []string { return os.Environ() },
		},
		NoWatch: true,
	})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	c := newTestController(t, sup, "")
	c.setUp()
	wg.Go(func() { c.watch(ctx, 5*time.Millisecond) })
	wg.Go(func() { sup.Run(ctx) })
	// Four crashes and restarts.
	deadline := time.Now().Add(30 * time.Second)
	for sup.Snapshot().Server("flaky").Restarts < 4 {
		if time.Now().After(deadline) {
			t.Fatalf("restarts: %d", sup.Snapshot().Server("flaky").Restarts)
		}
		time.Sleep(10 * time.Millisecond)
	}
	var titles []string
	for time.Now().Before(deadline) {
		titles = c.notify.sentTitles()
		if len(titles) >= 2 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if strings.Join(titles, "|") != "flaky crashed|flaky recovered" {
		t.Errorf("notifications %q, want one crash and one recovery", titles)
	}
	var events []string
	trs, _ := sup.Transitions(0)
	for _, tr := range trs {
		if tr.Event != "" {
			events = append(events, string(tr.Event))
		}
	}
	if n := strings.Count(strings.Join(events, ","), string(supervisor.EventRecovered)); n != 1 {
		t.Errorf("engine events %v: %d recoveries, want 1 (then flapping)", events, n)
	}
}

// TestServerTextShownVisibly: a server's name, instructions and stderr show
// their control characters as escapes in the window.
func TestServerTextShownVisibly(t *testing.T) {
	snap := sampleSnapshot()
	rep := *snap.Servers[0].Report
	rep.ServerInfo.Name = "evil\x1b]52;c;ZXZpbA==\x07"
	rep.Instructions = "clear\x1b[2J"
	snap.Servers[0].Report = &rep
	c := newTestController(t, newFakeEngine(snap), "")
	c.apply(snap)
	c.main.selectServer("demo")
	if got := c.main.fields["Server"].Text; !strings.HasPrefix(got, `evil\x1b]52;c;ZXZpbA==\x07 `) {
		t.Errorf("server field %q", got)
	}
	if got := c.main.instructions.Text; got != `clear\x1b[2J` {
		t.Errorf("instructions %q", got)
	}
}
