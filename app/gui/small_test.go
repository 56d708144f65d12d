package gui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"mcptray/app"
	"mcptray/app/present"
	"mcptray/healthcheck"
	"mcptray/internal/testenv"
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
	s := &supervisor.ServerState{Command: "npx → /usr/bin/npx", ResolvedPath: "/usr/bin/npx", Server: &registry.Server{Command: "npx", Args: []string{"-y", "pkg"}}}
	if got := present.CommandWords(s); got != "npx  -y pkg  (runs /usr/bin/npx)" {
		t.Errorf("resolved: %q", got)
	}
	s = &supervisor.ServerState{Command: "/usr/local/bin/mcptray → /usr/local/bin/mcptray", ResolvedPath: "/usr/local/bin/mcptray", Server: &registry.Server{Command: "/usr/local/bin/mcptray"}}
	if got := present.CommandWords(s); got != "/usr/local/bin/mcptray" {
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

// The log wraps long lines, stops following when scrolled up and resumes
// at the bottom, starts unfiltered for each server, and asks what to save
// while filtered.
func TestLogViewFollowsWrapsAndAsks(t *testing.T) {
	eng := newFakeEngine(sampleSnapshot())
	for i := 1; i <= 200; i++ {
		text := fmt.Sprintf("line %d", i)
		if i == 200 {
			text = strings.Repeat("a very long line ", 40)
		}
		eng.logs["demo"] = append(eng.logs["demo"], supervisor.LogLine{Seq: uint64(i), Time: t0, Text: text})
	}
	c := newTestController(t, eng, "")
	c.apply(eng.Snapshot())
	c.main.selectServer("demo")
	c.main.showTab("Log")
	lv := c.main.log
	lv.poll()
	if !lv.tall[199] || len(lv.tall) != 1 {
		t.Errorf("wrapped rows: %v", lv.tall)
	}
	if !lv.follow {
		t.Fatal("not following at first")
	}
	lv.followScroll()
	if !lv.follow {
		t.Error("at the bottom, following stopped")
	}
	lv.list.ScrollToTop()
	lv.followScroll()
	if lv.follow || lv.followCh.Checked {
		t.Error("scrolled up, still following")
	}
	eng.logs["demo"] = append(eng.logs["demo"], supervisor.LogLine{Seq: 201, Time: t0, Text: "new"})
	lv.poll()
	if lv.list.GetScrollOffset() != 0 {
		t.Errorf("a new line moved the view to %v", lv.list.GetScrollOffset())
	}
	lv.list.ScrollToBottom()
	lv.followScroll()
	if !lv.follow {
		t.Error("back at the bottom, not following again")
	}

	test.Type(lv.search, "line 1")
	if !strings.Contains(lv.status.Text, `of 201 lines hold "line 1"`) {
		t.Errorf("status %q", lv.status.Text)
	}
	lv.save()
	if lv.asked == nil || !strings.Contains(overlayText(c.win), "Which should the file hold?") {
		t.Errorf("Save did not ask: %q", overlayText(c.win))
	}
	lv.asked.Hide()
	c.main.selectServer("github")
	if lv.search.Text != "" || lv.filter != "" {
		t.Errorf("the filter stays for another server: %q", lv.search.Text)
	}
}

// The tray counts each server's client sessions after its state, and,
// attached to a daemon, ends with both ways out.
func TestTrayCountsClients(t *testing.T) {
	test.NewTempApp(t)
	var stopped bool
	menu := buildTrayMenu(sampleSnapshot(), map[string]int{"demo": 3, "idle": 1}, "", trayActions{stopAll: func() { stopped = true }})
	labels := map[string]bool{}
	for _, it := range menu.Items {
		labels[it.Label] = true
	}
	for _, want := range []string{"demo: ready, 3 clients, 3 tools", "idle: stopped", "github: crash-looping, exit 1, 5 restarts"} {
		if !labels[want] {
			t.Errorf("no tray line %q in %v", want, labels)
		}
	}
	n := len(menu.Items)
	if menu.Items[n-2].Label != "Stop all servers and quit" || menu.Items[n-1].Label != "Quit (servers keep running for your AI clients)" || !menu.Items[n-1].IsQuit {
		t.Errorf("the menu ends %q, %q", menu.Items[n-2].Label, menu.Items[n-1].Label)
	}
	menu.Items[n-2].Action()
	if !stopped {
		t.Error("Stop all servers and quit did nothing")
	}
}

// TestSecretHintsFollowTheOneRule: the form warns about the keys `mcptray
// import` warns about (registry.SecretName), a session cookie included, and
// not about a reference or a plain setting.
func TestSecretHintsFollowTheOneRule(t *testing.T) {
	s := &registry.Server{Name: "x", Command: "x", Env: map[string]string{
		"SESSION_COOKIE": "c0ffee-literal",
		"API_TOKEN":      "${env:API_TOKEN}",
		"LOG_LEVEL":      "debug",
	}}
	hints := secretHints(s)["env"]
	if len(hints) != 1 || !strings.HasPrefix(hints[0], "SESSION_COOKIE holds a literal secret") {
		t.Errorf("hints %q, want one for SESSION_COOKIE", hints)
	}
	if !registry.SecretName("SESSION_COOKIE") || registry.SecretName("LOG_LEVEL") {
		t.Errorf("the registry's rule changed under the form")
	}
}

// TestTestQuotesANodeServersError: the form's Test of a Node server whose
// script is missing quotes Node's error, not the version Node prints last.
func TestTestQuotesANodeServersError(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		testenv.Need(t, "node")
	}
	srv := &registry.Server{Name: "nodebad", Command: "node", Args: []string{"/nonexistent/mcptray-test/index.js"}, Autostart: true}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st := app.CheckServer(ctx, &registry.Config{}, srv, 30*time.Second)
	text, good := testWords(&st)
	if good || !strings.Contains(text, "From its stderr: Error: Cannot find module '/nonexistent/mcptray-test/index.js'") {
		t.Errorf("Test says %q", text)
	}
}
