//go:build unix

package gui

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"mcptray/app"
	"mcptray/healthcheck"
	"mcptray/internal/testenv"
	"mcptray/registry"
	"mcptray/supervisor"
)

// npmServers writes a config with server-everything and server-memory
// (from npm, run by node) and checks both for real: the snapshot holds
// what they listed. It skips when they are not installed.
func npmServers(t *testing.T) (string, supervisor.Snapshot) {
	t.Helper()
	dir := os.Getenv("MCPTRAY_TEST_SERVERS")
	everything := filepath.Join(dir, "@modelcontextprotocol", "server-everything", "dist", "index.js")
	memory := filepath.Join(dir, "@modelcontextprotocol", "server-memory", "dist", "index.js")
	if _, err := exec.LookPath("node"); err != nil || dir == "" {
		testenv.Need(t, "node and MCPTRAY_TEST_SERVERS (make test installs them)")
	}
	for _, f := range []string{everything, memory} {
		if _, err := os.Stat(f); err != nil {
			testenv.Need(t, fmt.Sprintf("the test server (%v)", err))
		}
	}
	tmp := t.TempDir()
	cfgPath := filepath.Join(tmp, "servers.toml")
	toml := fmt.Sprintf("[servers.everything]\ncommand = \"node\"\nargs = [%q, \"stdio\"]\n\n[servers.memory]\ncommand = \"node\"\nargs = [%q]\nenv = { MEMORY_FILE_PATH = %q }\n",
		everything, memory, filepath.Join(tmp, "memory.jsonl"))
	if err := os.WriteFile(cfgPath, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := registry.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	snap := supervisor.Snapshot{Time: t0}
	for _, s := range cfg.Servers {
		st := app.CheckServer(context.Background(), cfg, s, time.Minute)
		if st.Report == nil {
			t.Fatalf("%s did not answer its check: %s %s", s.Name, st.State, st.Reason)
		}
		st.State, st.Level, st.Since = supervisor.StateReady, supervisor.LevelOK, t0
		snap.Servers = append(snap.Servers, st)
	}
	return cfgPath, snap
}

// tryWindow opens the window on server, one of npmServers', for calls;
// wait waits for the outcome of the next call.
func tryWindow(t *testing.T, server string) (c *controller, m *mainWindow, wait func()) {
	t.Helper()
	cfgPath, snap := npmServers(t)
	c = newTestController(t, newFakeEngine(snap), cfgPath)
	c.apply(snap)
	wait = waitCalls(t, c)
	c.main.selectServer(server)
	return c, c.main, wait
}

// waitCalls returns a wait for the outcome of the next call from the window.
func waitCalls(t *testing.T, c *controller) func() {
	done := make(chan struct{}, 16)
	c.afterCall = func() { done <- struct{}{} }
	return func() {
		t.Helper()
		select {
		case <-done:
		case <-time.After(2 * time.Minute):
			t.Fatal("a call from the window never ended")
		}
	}
}

// toolPanelOf selects a tool on the Tools tab and returns its panel.
func toolPanelOf(t *testing.T, m *mainWindow, name string) *toolPanel {
	t.Helper()
	m.showTab("Tools")
	if !m.tools.selectKey(name) {
		t.Fatalf("the Tools tab has no %s", name)
	}
	p, ok := m.panel.(*toolPanel)
	if !ok || p.tool.Name != name {
		t.Fatalf("the panel shown is not %s's: %#v", name, m.panel)
	}
	return p
}

// input is the input of a top-level field of a panel's form.
func input(t *testing.T, f *schemaForm, name string) fieldInput {
	t.Helper()
	for i, fd := range f.root.fields {
		if fd.Name == name {
			return f.root.inputs[i]
		}
	}
	t.Fatalf("the form has no field %s", name)
	return nil
}

func resultText(v *runView) string {
	var b strings.Builder
	var walk func(o fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch o := o.(type) {
		case *widget.Label:
			b.WriteString(o.Text + "\n")
		case *fyne.Container:
			for _, x := range o.Objects {
				walk(x)
			}
		}
	}
	walk(v.result)
	return b.String()
}

// renderPanel renders a fresh panel of a tool alone, for its golden.
func renderPanel(t *testing.T, m *mainWindow, server, tool, golden string) {
	t.Helper()
	for _, tl := range m.snap.Server(server).Report.Tools {
		if tl.Name == tool {
			p := m.newToolPanel(server, tl)
			w := test.NewTempWindow(t, p.content())
			w.Resize(fyne.NewSize(560, 620))
			p.content().Refresh() // wrapped text takes its height at the width it got
			test.AssertRendersToMarkup(t, golden, w.Canvas())
			if dir := os.Getenv("MCPTRAY_SCREENSHOTS"); dir != "" {
				writePNG(t, filepath.Join(dir, strings.TrimSuffix(golden, ".xml")+".png"), w.Canvas().Capture())
			}
			return
		}
	}
	t.Fatalf("%s lists no %s", server, tool)
}

// TestRunToolsFromTheWindow fills the forms made from server-everything's
// and server-memory's own schemas, runs the tools on a real instance of
// each, and reads the results as a person would: text, an image,
// structured content checked against its outputSchema, errors in red, a
// history that runs a call again.
func TestRunToolsFromTheWindow(t *testing.T) {
	c, m, wait := tryWindow(t, "everything")

	// The forms as the servers' schemas make them.
	renderPanel(t, m, "everything", "echo", "run_echo.xml")
	renderPanel(t, m, "everything", "get-sum", "run_get_sum.xml")
	renderPanel(t, m, "everything", "get-annotated-message", "run_enum.xml")

	// echo: a required string.
	p := toolPanelOf(t, m, "echo")
	test.Tap(p.run.button)
	if !p.form.problem.Visible() || !strings.Contains(p.form.problem.Text, "message: required") {
		t.Errorf("running without the required message: problem %q", p.form.problem.Text)
	}
	test.Type(input(t, p.form, "message").(*textInput).e, "hello from the window")
	test.Tap(p.run.button)
	wait()
	if got := resultText(p.run); !strings.Contains(got, "Echo: hello from the window") || p.run.status.Importance != widget.SuccessImportance {
		t.Errorf("echo: status %q, result %q", p.run.status.Text, got)
	}

	// get-sum: numbers.
	p = toolPanelOf(t, m, "get-sum")
	test.Type(input(t, p.form, "a").(*textInput).e, "2")
	test.Type(input(t, p.form, "b").(*textInput).e, "x")
	test.Tap(p.run.button)
	if !strings.Contains(p.form.problem.Text, "not a number") {
		t.Errorf("a letter for a number: problem %q", p.form.problem.Text)
	}
	e := input(t, p.form, "b").(*textInput).e
	e.SetText("3")
	test.Tap(p.run.button)
	wait()
	if got := resultText(p.run); !strings.Contains(got, "5") {
		t.Errorf("get-sum 2+3: %q", got)
	}

	// The enum is a drop-down; the image is drawn.
	p = toolPanelOf(t, m, "get-annotated-message")
	ch := input(t, p.form, "messageType").(*choiceInput)
	ch.s.SetSelected("success")
	input(t, p.form, "includeImage").(*boolInput).c.SetChecked(true)
	test.Tap(p.run.button)
	wait()
	if !hasImage(p.run.result) {
		t.Errorf("get-annotated-message with an image: none drawn; %q", resultText(p.run))
	}

	// Structured content, checked against the tool's outputSchema.
	p = toolPanelOf(t, m, "get-structured-content")
	input(t, p.form, "location").(*choiceInput).s.SetSelected("Chicago")
	test.Tap(p.run.button)
	wait()
	if got := resultText(p.run); !strings.Contains(got, "It matches the tool's outputSchema.") || !strings.Contains(got, "temperature") {
		t.Errorf("structured content: %q", got)
	}

	// The JSON editor says the same, and takes over.
	p = toolPanelOf(t, m, "get-sum")
	p.form.mode.SetSelected(modeJSON)
	if got := p.form.json.Text; !strings.Contains(got, `"a": 2`) || !strings.Contains(got, `"b": 3`) {
		t.Errorf("JSON of the form: %q", got)
	}
	p.form.json.SetText(`{"a": 40, "b": 2}`)
	test.Tap(p.run.button)
	wait()
	if got := resultText(p.run); !strings.Contains(got, "42") {
		t.Errorf("get-sum from JSON: %q", got)
	}
	p.form.mode.SetSelected(modeForm)
	if got := input(t, p.form, "a").(*textInput).e.Text; got != "40" {
		t.Errorf("back to the form: a = %q", got)
	}

	// History: every call, newest first; Re-run makes the first again.
	recs := c.history["everything"]
	if len(recs) != 5 || recs[0].name != "echo" || !recs[0].good {
		t.Fatalf("history: %d calls, first %+v", len(recs), recs[0])
	}
	m.history.acc.Open(0)
	if n := len(m.history.rows.Objects); n != 5 || m.history.item.Title != "History (5)" {
		t.Errorf("history: %d rows, title %q", n, m.history.item.Title)
	}
	m.rerun(recs[1]) // get-sum 2+3
	wait()
	if last := c.history["everything"][5]; last.name != "get-sum" || last.args["a"] != 2.0 || !last.good {
		t.Errorf("re-run: %+v", last)
	}
	if got := resultText(m.panel.(*toolPanel).run); !strings.Contains(got, "5") {
		t.Errorf("re-run of get-sum 2+3: %q", got)
	}
}

func hasImage(o fyne.CanvasObject) bool {
	switch o := o.(type) {
	case *canvas.Image:
		return true
	case *fyne.Container:
		for _, x := range o.Objects {
			if hasImage(x) {
				return true
			}
		}
	}
	return false
}

// TestRunNestedAndDestructiveTools: server-memory's create_entities takes
// a list of objects with a list inside; its delete_entities is marked
// destructive and asks first.
func TestRunNestedAndDestructiveTools(t *testing.T) {
	c, m, wait := tryWindow(t, "memory")
	renderPanel(t, m, "memory", "create_entities", "run_nested.xml")

	p := toolPanelOf(t, m, "create_entities")
	list := input(t, p.form, "entities").(*listInput)
	if len(list.items) != 1 {
		t.Fatalf("the required list starts with %d rows", len(list.items))
	}
	ent := list.items[0].(*objectInput)
	for i, f := range ent.fields {
		switch f.Name {
		case "name":
			ent.inputs[i].(*textInput).e.SetText("Ada")
		case "entityType":
			ent.inputs[i].(*textInput).e.SetText("person")
		case "observations":
			obs := ent.inputs[i].(*listInput)
			obs.items[0].set("wrote the first program")
			obs.add("born 1815")
		}
	}
	test.Tap(p.run.button)
	wait()
	if got := resultText(p.run); !strings.Contains(got, `"Ada"`) || !strings.Contains(got, "born 1815") || !strings.Contains(got, "It matches the tool's outputSchema.") {
		t.Errorf("create_entities: status %q, result %q", p.run.status.Text, got)
	}

	p = toolPanelOf(t, m, "delete_entities")
	if !strings.Contains(toolHints(p), "destructive") {
		t.Errorf("delete_entities hints: %q", toolHints(p))
	}
	input(t, p.form, "entityNames").(*listInput).items[0].set("Ada")
	c.lastConfirm = nil
	test.Tap(p.run.button)
	if c.lastConfirm == nil {
		t.Fatal("a destructive tool ran without asking")
	}
	if n := len(c.history["memory"]); n != 1 {
		t.Errorf("%d calls before the confirmation", n)
	}
	confirmButton(t, c.win, "Run")
	wait()
	if got := resultText(p.run); !strings.Contains(got, "deleted") {
		t.Errorf("delete_entities: %q", got)
	}
}

func toolHints(p *toolPanel) string {
	for _, o := range p.box.Objects {
		if l, ok := o.(*widget.Label); ok && strings.HasPrefix(l.Text, "Hints:") {
			return l.Text
		}
	}
	return ""
}

// confirmButton taps the button labelled text in the window's top dialog.
func confirmButton(t *testing.T, w fyne.Window, text string) {
	t.Helper()
	over := w.Canvas().Overlays().Top()
	if over == nil {
		t.Fatal("no dialog on screen")
	}
	var found *widget.Button
	var walk func(o fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch o := o.(type) {
		case *widget.Button:
			if o.Text == text {
				found = o
			}
		case *fyne.Container:
			for _, x := range o.Objects {
				walk(x)
			}
		case fyne.Widget:
			r := test.WidgetRenderer(o)
			for _, x := range r.Objects() {
				walk(x)
			}
		}
	}
	walk(over)
	if found == nil {
		t.Fatalf("the dialog has no %q button", text)
	}
	test.Tap(found)
}

// TestElicitationDialog: server-everything offers trigger-elicitation-request
// only to a session that answers elicitation, as the window's calls and
// mcptray's checks do, so the Tools tab lists it from the start; running
// it opens a dialog made from the requested schema, whose answers go back
// to the server.
func TestElicitationDialog(t *testing.T) {
	c, m, wait := tryWindow(t, "everything")
	asked := make(chan struct{}, 4)
	c.afterElicit = func() { asked <- struct{}{} }
	if !m.tools.selectKey("trigger-elicitation-request") {
		t.Fatal("the catalog lacks the tool offered only to sessions that answer elicitation: the check did not offer elicitation")
	}
	p := toolPanelOf(t, m, "get-tiny-image")
	test.Tap(p.run.button)
	wait()
	if !hasImage(p.run.result) {
		t.Errorf("get-tiny-image: no image drawn; %q", resultText(p.run))
	}

	p = toolPanelOf(t, m, "trigger-elicitation-request")
	test.Tap(p.run.button)
	select {
	case <-asked:
	case <-time.After(time.Minute):
		t.Fatal("no elicitation dialog")
	}
	e := c.lastElicitation
	if e == nil || e.form == nil {
		t.Fatal("the elicitation has no form")
	}
	// Send without the required name: the dialog stays and says why.
	test.Tap(e.send)
	if !strings.Contains(e.form.problem.Text, "required") {
		t.Errorf("sent without the required name: %q", e.form.problem.Text)
	}
	input(t, e.form, "name").(*textInput).e.SetText("Ada Lovelace")
	if got := input(t, e.form, "integer").(*textInput).e.Text; got != "42" {
		t.Errorf("integer default %q", got)
	}
	test.Tap(e.send)
	wait()
	got := resultText(p.run)
	if !strings.Contains(got, "Name: Ada Lovelace") || !strings.Contains(got, "Favorite Integer: 42") {
		t.Errorf("elicitation answered: %q", got)
	}

	// Declined: the server says so.
	test.Tap(p.run.button)
	<-asked
	test.Tap(c.lastElicitation.decline)
	wait()
	if got := resultText(p.run); !strings.Contains(got, "declined") {
		t.Errorf("elicitation declined: %q", got)
	}

	// Sampling is declined with a message.
	p = toolPanelOf(t, m, "trigger-sampling-request")
	input(t, p.form, "prompt").(*textInput).e.SetText("Say hi")
	test.Tap(p.run.button)
	wait()
	if !strings.Contains(p.run.notes.Text, "declined") {
		t.Errorf("sampling: notes %q, status %q, result %q", p.run.notes.Text, p.run.status.Text, resultText(p.run))
	}
}

// TestReadAndGetFromTheWindow reads server-everything's resources (a
// listed one, and blobs and text made from its templates: the blob is
// saved to a file the window names) and gets a prompt from its form.
func TestReadAndGetFromTheWindow(t *testing.T) {
	downloads := t.TempDir()
	t.Setenv("XDG_DOWNLOAD_DIR", downloads)
	c, m, wait := tryWindow(t, "everything")

	m.showTab("Resources")
	if !m.resources.selectKey("demo://resource/static/document/features.md") {
		t.Fatal("no features.md")
	}
	rp := m.panel.(*readPanel)
	test.Tap(rp.run.button)
	wait()
	if got := resultText(rp.run); !strings.Contains(got, "demo://resource/static/document/features.md") || len(got) < 200 {
		t.Errorf("features.md: %q", got)
	}

	m.showTab("Templates")
	if !m.templates.selectKey("demo://resource/dynamic/blob/{resourceId}") {
		t.Fatal("no blob template")
	}
	rp = m.panel.(*readPanel)
	test.Tap(rp.run.button)
	if !strings.Contains(rp.form.problem.Text, "resourceId: required") {
		t.Errorf("read without the template's variable: %q", rp.form.problem.Text)
	}
	input(t, rp.form, "resourceId").(*textInput).e.SetText("2")
	test.Tap(rp.run.button)
	wait()
	got := resultText(rp.run)
	if !strings.Contains(got, "saved to "+downloads) {
		t.Fatalf("blob resource: %q", got)
	}
	files, _ := filepath.Glob(filepath.Join(downloads, "*"))
	if len(files) != 1 || rp.preview.Text != "demo://resource/dynamic/blob/2" {
		t.Errorf("saved %v; read %q", files, rp.preview.Text)
	}

	m.showTab("Prompts")
	if !m.prompts.selectKey("args-prompt") {
		t.Fatal("no args-prompt")
	}
	pp := m.panel.(*promptPanel)
	input(t, pp.form, "city").(*textInput).e.SetText("Lyon")
	test.Tap(pp.run.button)
	wait()
	if got := resultText(pp.run); !strings.Contains(got, "Lyon") || !strings.Contains(got, "user") {
		t.Errorf("args-prompt: %q", got)
	}
	if h := c.history["everything"]; len(h) != 3 || h[1].kind != callTemplate || h[1].args["resourceId"] != "2" || h[2].kind != callPrompt {
		t.Errorf("history: %+v", h)
	}
}

// TestRunOnAServerThatDoesNotStart: the call's failure says why the
// server did not start (its exit and its last stderr line), in red, and
// the window does not keep the failed instance retrying behind the scenes.
func TestRunOnAServerThatDoesNotStart(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "servers.toml")
	toml := "[servers.broken]\ncommand = \"sh\"\nargs = [\"-c\", \"echo 'Error: BROKEN_TOKEN is not set' >&2; exit 3\"]\n"
	if err := os.WriteFile(cfgPath, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := registry.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	// As the engine last saw it: up, with one tool.
	st := supervisor.ServerState{Name: "broken", Server: cfg.Servers[0], State: supervisor.StateReady, Level: supervisor.LevelOK, Since: t0,
		Report: &healthcheck.Report{Tools: []healthcheck.Tool{{Name: "ping", InputSchema: json.RawMessage(`{"type":"object"}`)}}}}
	snap := supervisor.Snapshot{Time: t0, Servers: []supervisor.ServerState{st}}
	c := newTestController(t, newFakeEngine(snap), cfgPath)
	c.apply(snap)
	wait := waitCalls(t, c)
	c.main.selectServer("broken")
	p := toolPanelOf(t, c.main, "ping")
	test.Tap(p.run.button)
	wait()
	got := resultText(p.run)
	if p.run.status.Importance != widget.DangerImportance || !strings.Contains(got, "exit") || !strings.Contains(got, "BROKEN_TOKEN is not set") {
		t.Errorf("status %q (%v), result %q", p.run.status.Text, p.run.status.Importance, got)
	}
	if c.trials["broken"] != nil {
		t.Error("the instance that failed to start is kept")
	}
	if h := c.history["broken"]; len(h) != 1 || h[0].good || h[0].outcome != "failed" {
		t.Errorf("history %+v", h)
	}
}

// TestProgressAndCancel: a long operation shows its progress as a bar;
// Cancel ends the call, and the server is sent notifications/cancelled.
func TestProgressAndCancel(t *testing.T) {
	c, m, wait := tryWindow(t, "everything")
	progressed := make(chan struct{}, 100)
	c.afterProgress = func() { progressed <- struct{}{} }
	p := toolPanelOf(t, m, "trigger-long-running-operation")
	input(t, p.form, "duration").(*textInput).e.SetText("600")
	input(t, p.form, "steps").(*textInput).e.SetText("600")
	test.Tap(p.run.button)
	select {
	case <-progressed:
	case <-time.After(time.Minute):
		t.Fatal("no progress shown")
	}
	if !p.run.bar.Visible() || p.run.bar.Max != 600 || p.run.bar.Value < 1 || !p.run.cancel.Visible() || !p.run.button.Disabled() {
		t.Errorf("while it runs: bar shown %v at %v of %v; Cancel shown %v; Run disabled %v",
			p.run.bar.Visible(), p.run.bar.Value, p.run.bar.Max, p.run.cancel.Visible(), p.run.button.Disabled())
	}
	test.Tap(p.run.cancel)
	wait()
	got := resultText(p.run)
	if p.run.status.Importance != widget.DangerImportance || p.run.status.Text != "Cancelled." || !strings.Contains(got, "notifications/cancelled") {
		t.Errorf("after Cancel: status %q, result %q", p.run.status.Text, got)
	}
	if p.run.button.Disabled() || p.run.cancel.Visible() {
		t.Error("Run is not offered again after Cancel")
	}
}
