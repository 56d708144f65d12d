package gui

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"mcptray/supervisor"
)

func TestCountSummary(t *testing.T) {
	if got := countSummary(manySnapshot(30)); got != "25 ready · 4 failing · 1 stopped" {
		t.Errorf("summary %q", got)
	}
	snap := sampleSnapshot()
	snap.Servers[4].Server.Disabled = true
	if got := countSummary(snap); got != "1 ready · 2 failing · 1 retrying · 1 disabled" {
		t.Errorf("summary %q", got)
	}
	if got := countSummary(supervisor.Snapshot{}); got != "no servers" {
		t.Errorf("empty: %q", got)
	}
}

// The list shows failing servers first, finds servers by search, and its
// rows are one line: at 1100×700 at least 17 show.
func TestServerListFindsFailingServers(t *testing.T) {
	eng := newFakeEngine(manySnapshot(30))
	c := newTestController(t, eng, "")
	c.apply(eng.Snapshot())
	l := c.main.servers
	var top []string
	for r := range 4 {
		top = append(top, l.name(r))
	}
	if want := []string{"server-05", "server-15", "server-25", "server-28"}; !slices.Equal(top, want) {
		t.Errorf("top rows %v, want the failing ones %v", top, want)
	}
	if c.main.selected != "server-05" {
		t.Errorf("selected %q", c.main.selected)
	}
	if got := l.summary.Text; got != "25 ready · 4 failing · 1 stopped" {
		t.Errorf("summary %q", got)
	}
	if h := rowHeight(); h > 30 {
		t.Errorf("rows are %.0f px high", h)
	}
	if n := int(l.list.Size().Height / (rowHeight() + 1)); n < 17 {
		t.Errorf("only %d rows fit in the window", n)
	}

	// Config order keeps the file's order.
	l.order.SetChecked(false)
	if l.name(0) != "server-01" || l.name(4) != "server-05" {
		t.Errorf("config order: %s, %s", l.name(0), l.name(4))
	}
	l.order.SetChecked(true)

	// Search narrows the list; the selection follows what is shown.
	c.main.shortcut(shortcutFind)
	if c.win.Canvas().Focused() != l.search {
		t.Fatal("Ctrl+F does not focus the search")
	}
	test.Type(l.search, "server-1")
	if len(l.shown) != 10 || !strings.HasPrefix(l.summary.Text, "10 of 30 shown") {
		t.Errorf("search: %d shown, %q", len(l.shown), l.summary.Text)
	}
	if c.main.selected != "server-15" {
		t.Errorf("after search the details show %q, not the first match", c.main.selected)
	}
	// Down in the search field moves the selection.
	l.search.TypedKey(&fyne.KeyEvent{Name: fyne.KeyDown})
	if c.main.selected != "server-10" || c.main.header.Text != "server-10" {
		t.Errorf("Down: %q, header %q", c.main.selected, c.main.header.Text)
	}
	test.Type(l.search, "zzz")
	if c.main.selected != "" || !c.main.empty.content.Visible() || c.main.details.Visible() || c.main.empty.title.Text != "No server matches" {
		t.Errorf("no match: selected %q, empty shown %v", c.main.selected, c.main.empty.content.Visible())
	}
	l.search.TypedKey(&fyne.KeyEvent{Name: fyne.KeyEscape})
	if l.search.Text != "" || len(l.shown) != 30 || c.main.selected != "server-05" {
		t.Errorf("Escape: %q, %d shown, %q", l.search.Text, len(l.shown), c.main.selected)
	}
	l.search.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	if c.win.Canvas().Focused() != nil {
		t.Error("Enter leaves the focus in the search")
	}
	// Three failing servers selected: the bulk panel.
	l.click(0, 0)
	l.click(2, fyne.KeyModifierShift)
	test.AssertRendersToMarkup(t, "main_bulk.xml", c.win.Canvas())
}

// Arrows move, Shift and Ctrl select several, bulk actions go to each
// selected server, Ctrl+R restarts the selection, Delete asks.
func TestServerListKeyboardAndBulk(t *testing.T) {
	path := filepath.Join(t.TempDir(), "servers.toml")
	os.WriteFile(path, []byte("[servers.demo]\ncommand = \"x\"\n\n[servers.idle]\ncommand = \"y\"\n"), 0o600)
	eng := newFakeEngine(sampleSnapshot())
	c := newTestController(t, eng, path)
	c.apply(eng.Snapshot())
	m := c.main
	key := func(k fyne.KeyName) { c.win.Canvas().OnTypedKey()(&fyne.KeyEvent{Name: k}) }
	key(fyne.KeyDown)
	key(fyne.KeyDown)
	if m.selected != "flaky" {
		t.Errorf("two Downs from github: %q", m.selected)
	}
	key(fyne.KeyEnd)
	if m.selected != "idle" {
		t.Errorf("End: %q", m.selected)
	}
	key(fyne.KeyHome)
	key(fyne.KeyUp)
	if m.selected != "github" {
		t.Errorf("Home then Up: %q", m.selected)
	}

	// Click demo, Shift+click idle: two; Ctrl+click github: three.
	m.servers.click(m.servers.row("demo"), 0)
	m.servers.click(m.servers.row("idle"), fyne.KeyModifierShift)
	m.servers.click(m.servers.row("github"), fyne.KeyModifierControl)
	if got := m.servers.Selected(); !slices.Equal(got, []string{"github", "demo", "idle"}) {
		t.Fatalf("selected %v", got)
	}
	if !m.bulk.content.Visible() || m.details.Visible() || m.bulk.title.Text != "3 servers selected" {
		t.Errorf("bulk panel: visible %v, %q", m.bulk.content.Visible(), m.bulk.title.Text)
	}
	test.Tap(m.bulk.restart)
	eng.waitCommands(t, "restart github", "restart demo", "restart idle")
	test.Tap(m.bulk.stop)
	eng.waitCommands(t, "stop github", "stop demo", "stop idle")
	test.Tap(m.bulk.start)
	eng.waitCommands(t, "start github", "start demo", "start idle")
	m.shortcut(shortcutRestart)
	eng.waitCommands(t, "restart github", "restart demo", "restart idle")
	// Ctrl+click takes one off again.
	m.servers.click(m.servers.row("demo"), fyne.KeyModifierControl)
	if got := m.servers.Selected(); !slices.Equal(got, []string{"github", "idle"}) {
		t.Errorf("after Ctrl+click: %v", got)
	}
	m.shortcut(&fyne.ShortcutSelectAll{}) // what the desktop driver sends for Ctrl+A
	if len(m.servers.Selected()) != 5 {
		t.Errorf("Ctrl+A: %v", m.servers.Selected())
	}

	// Delete asks, naming the backup; Remove removes.
	m.servers.click(m.servers.row("demo"), 0)
	m.servers.click(m.servers.row("idle"), fyne.KeyModifierControl)
	key(fyne.KeyDelete)
	if !strings.Contains(overlayText(c.win), "Remove 2 servers?") || !strings.Contains(overlayText(c.win), "servers.toml.bak") {
		t.Fatalf("no confirmation: %q", overlayText(c.win))
	}
	// Escape cancels, as Cancel does: nothing is removed.
	key(fyne.KeyEscape)
	if c.win.Canvas().Overlays().Top() != nil {
		t.Fatalf("Escape left the confirmation on screen: %q", overlayText(c.win))
	}
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), "demo") || !strings.Contains(string(b), "idle") {
		t.Fatalf("Escape removed servers: %q", b)
	}
	key(fyne.KeyDelete)
	tapOverlayButton(t, c.win, "Remove") // saves the file; the engine applies it
	b, _ := os.ReadFile(path)
	if strings.Contains(string(b), "demo") || strings.Contains(string(b), "idle") {
		t.Errorf("not removed: %q", b)
	}
}

// After the last server goes, nothing of it stays: the window says what
// to do next.
func TestEmptyStateAfterTheLastServer(t *testing.T) {
	snap := sampleSnapshot()
	snap.Servers = snap.Servers[:1]
	eng := newFakeEngine(snap)
	c := newTestController(t, eng, "")
	c.apply(snap)
	m := c.main
	if m.tabs.Items[1].Text != "Tools (3)" {
		t.Fatalf("tools %q", m.tabs.Items[1].Text)
	}
	c.apply(supervisor.Snapshot{Time: t0})
	if m.selected != "" || m.details.Visible() || !m.empty.content.Visible() {
		t.Errorf("selected %q, details shown %v", m.selected, m.details.Visible())
	}
	if m.tabs.Items[1].Text != "Tools (0)" || len(m.tools.shown) != 0 || m.fields["Status"].Text != "–" {
		t.Errorf("stale details: %q, %d tools, status %q", m.tabs.Items[1].Text, len(m.tools.shown), m.fields["Status"].Text)
	}
	if m.empty.title.Text != "No servers yet" || !m.empty.add.Visible() || !m.empty.imp.Visible() {
		t.Errorf("empty state: %q", m.empty.title.Text)
	}
	test.AssertRendersToMarkup(t, "main_empty.xml", c.win.Canvas())
	c.apply(snap)
	if m.selected != "demo" || !m.details.Visible() {
		t.Errorf("a server added back is not shown: %q", m.selected)
	}
}

// walk visits o and everything inside it.
func walk(o fyne.CanvasObject, visit func(fyne.CanvasObject)) {
	visit(o)
	switch x := o.(type) {
	case *fyne.Container:
		for _, c := range x.Objects {
			walk(c, visit)
		}
	case fyne.Widget:
		for _, c := range test.WidgetRenderer(x).Objects() {
			walk(c, visit)
		}
	}
}

// overlayText is the text of the top dialog.
func overlayText(w fyne.Window) string {
	top := w.Canvas().Overlays().Top()
	if top == nil {
		return ""
	}
	var b strings.Builder
	walk(top, func(o fyne.CanvasObject) {
		switch x := o.(type) {
		case *widget.Label:
			b.WriteString(x.Text + "\n")
		case *canvas.Text:
			b.WriteString(x.Text + "\n")
		}
	})
	return b.String()
}

// tapOverlayButton taps the top dialog's button labelled text.
func tapOverlayButton(t *testing.T, w fyne.Window, text string) {
	t.Helper()
	var found *widget.Button
	if top := w.Canvas().Overlays().Top(); top != nil {
		walk(top, func(o fyne.CanvasObject) {
			if b, ok := o.(*widget.Button); ok && b.Text == text && found == nil {
				found = b
			}
		})
	}
	if found == nil {
		t.Fatalf("no %q button in %q", text, overlayText(w))
	}
	test.Tap(found)
}

// waitCommands waits for the engine to get every one of want, in any order
// (each runs in its own goroutine).
func (f *fakeEngine) waitCommands(t *testing.T, want ...string) {
	t.Helper()
	missing := map[string]bool{}
	for _, w := range want {
		missing[w] = true
	}
	deadline := time.After(5 * time.Second)
	for len(missing) > 0 {
		select {
		case c := <-f.commands:
			delete(missing, c)
		case <-deadline:
			t.Fatalf("engine never got %v", missing)
		}
	}
}

// Ctrl+W closes the window, a dialog open on it or not, and gives back
// what it held; the app goes on.
func TestCtrlWClosesTheWindow(t *testing.T) {
	eng := newFakeEngine(sampleSnapshot())
	c := newTestController(t, eng, "")
	c.apply(eng.Snapshot())
	c.editServer("", false) // the Add dialog is open
	if !c.main.shortcut(shortcutClose) {
		t.Fatal("Ctrl+W was not taken")
	}
	if c.win != nil || c.main != nil {
		t.Fatal("Ctrl+W left the window open")
	}
	c.openMain() // opens anew
	if c.win == nil || c.main == nil {
		t.Fatal("the window does not open again after Ctrl+W")
	}
}

// Escape closes the dialog on top, as its Close button does: the one on
// top first, then the one under it.
func TestEscapeClosesDialogs(t *testing.T) {
	eng := newFakeEngine(sampleSnapshot())
	path := filepath.Join(t.TempDir(), "servers.toml")
	os.WriteFile(path, nil, 0o600)
	c := newTestController(t, eng, path)
	c.apply(eng.Snapshot())
	c.showProfiles()
	c.showError(errors.New("something to say"))
	escape := func() { c.main.typedKey(&fyne.KeyEvent{Name: fyne.KeyEscape}) }
	if !strings.Contains(overlayText(c.win), "something to say") {
		t.Fatalf("the error is not on top:\n%s", overlayText(c.win))
	}
	escape()
	if text := overlayText(c.win); strings.Contains(text, "something to say") || !strings.Contains(text, "Profiles") {
		t.Fatalf("after one Escape:\n%s", text)
	}
	escape()
	if top := c.win.Canvas().Overlays().Top(); top != nil || len(c.escapes) != 0 {
		t.Fatalf("after two Escapes a dialog is still open:\n%s", overlayText(c.win))
	}

	// Over the Add dialog, which takes the keys while it is open, too.
	c.editServer("", false)
	c.showError(errors.New("over the form"))
	key := func(name fyne.KeyName) { c.win.Canvas().OnTypedKey()(&fyne.KeyEvent{Name: name}) }
	key(fyne.KeyReturn) // the form is not on top: Enter saves nothing
	key(fyne.KeyEscape)
	if text := overlayText(c.win); strings.Contains(text, "over the form") || c.adding.closed {
		t.Fatalf("Escape over the Add dialog: error still shown %v, Add dialog closed %v", strings.Contains(text, "over the form"), c.adding.closed)
	}
	key(fyne.KeyEscape)
	if !c.adding.closed || len(c.escapes) != 0 {
		t.Errorf("a second Escape left the Add dialog open (%d dialogs)", len(c.escapes))
	}
}
