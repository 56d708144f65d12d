package gui

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"mcptray/app"
	"mcptray/registry"
	"mcptray/registry/clients"
	"mcptray/registry/secrets"
)

// TestExportDialog: the dialog offers what the command line would export,
// renders every output of a client through one Render, never shows or
// copies the mask, and copies secret values only when asked.
func TestExportDialog(t *testing.T) {
	cfgPath := filepath.Join(t.TempDir(), "servers.toml")
	if err := os.WriteFile(cfgPath, []byte(`[servers.gh]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-github"]
env = { GITHUB_PERSONAL_ACCESS_TOKEN = "ghp_literal_1" }

[servers.off]
command = "x"
disabled = true

[servers.bad]
command = "y"
restart = "sometimes"
`), 0o600); err != nil {
		t.Fatal(err)
	}
	c := newTestController(t, newFakeEngine(sampleSnapshot()), cfgPath)
	c.env.Exe = "/usr/local/bin/mcptray"
	offered, ticked, err := c.exportChoices()
	if err != nil || !slices.Equal(offered, []string{"gh", "off"}) || !slices.Equal(ticked, []string{"gh"}) {
		t.Fatalf("choices %v %v %v", offered, ticked, err)
	}
	e := c.newExportDialog(offered, ticked)
	selectClient(t, e, "claude-code")
	// Through mcptray by default: the one entry, as install writes it.
	if e.route.Selected != "One entry: mcptray" || !e.servers.Disabled() || e.profile.Disabled() {
		t.Errorf("route %q, servers disabled %v, profile disabled %v", e.route.Selected, e.servers.Disabled(), e.profile.Disabled())
	}
	if got := e.snippet.Text; !strings.Contains(got, `"mcptray": {`) || !strings.Contains(got, `"args": ["connect", "--config", `+jsonQuote(cfgPath)+`]`) || strings.Contains(got, "ghp_") || strings.Contains(got, "server-github") {
		t.Errorf("one entry:\n%s", got)
	}
	if !strings.Contains(e.notes.Text, "One entry, mcptray, running mcptray connect --config") || !strings.Contains(e.notes.Text, "profile default (gh)") {
		t.Errorf("route said: %q", e.notes.Text)
	}
	e.route.SetSelected("Per server, through mcptray")
	if got := e.snippet.Text; !strings.Contains(got, `"gh": {`) || !strings.Contains(got, `"/usr/local/bin/mcptray"`) || strings.Contains(got, "server-github") || e.servers.Disabled() {
		t.Errorf("per server through mcptray:\n%s", got)
	}
	e.route.SetSelected("Direct, without mcptray")
	if !slices.Equal(e.output.Options, []string{"Config snippet", "Add command"}) {
		t.Errorf("outputs %v", e.output.Options)
	}
	if got := e.snippet.Text; !strings.Contains(got, `"GITHUB_PERSONAL_ACCESS_TOKEN": "<hidden>"`) || strings.Contains(got, registry.Masked) {
		t.Errorf("snippet:\n%s", got)
	}
	if !strings.Contains(e.notes.Text, "not a working value") {
		t.Errorf("notes: %s", e.notes.Text)
	}
	// The fix is the window's box, not a command-line flag.
	if !strings.Contains(e.notes.Text, `tick "Include secret values" to write it`) || strings.Contains(e.notes.Text, "--") {
		t.Errorf("the notes' fix is not the window's:\n%s", e.notes.Text)
	}
	e.output.SetSelected("Add command")
	if got := e.snippet.Text; !strings.HasPrefix(got, "claude mcp add gh --transport stdio") {
		t.Errorf("add command:\n%s", got)
	}
	test.Tap(e.copyBtn)
	if got := c.app.Clipboard().Content(); strings.Contains(got, "ghp_literal_1") || !strings.Contains(got, clients.Hidden) {
		t.Errorf("copied without asking for secrets:\n%s", got)
	}
	e.reveal.SetChecked(true)
	test.Tap(e.copyBtn)
	if got := c.app.Clipboard().Content(); !strings.Contains(got, "GITHUB_PERSONAL_ACCESS_TOKEN=ghp_literal_1") {
		t.Errorf("copied with secrets:\n%s", got)
	}
	if strings.Contains(e.snippet.Text, "ghp_literal_1") || strings.Contains(e.notes.Text, "ghp_literal_1") {
		t.Error("the dialog shows the secret")
	}
	if strings.Contains(e.notes.Text, "Include secret values") {
		t.Errorf("ticked, the notes still ask to tick it:\n%s", e.notes.Text)
	}
	// Ticking the disabled server names it, as on the command line.
	e.servers.SetSelected([]string{"off"})
	if !strings.Contains(e.snippet.Text, "claude mcp add off") {
		t.Errorf("named disabled server:\n%s", e.snippet.Text)
	}
}

func jsonQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// selectClient picks a client in the dialog by its ID.
func selectClient(t *testing.T, e *exportDialog, id string) {
	t.Helper()
	for label, cl := range e.byName {
		if cl.ID == id {
			e.client.SetSelected(label)
			return
		}
	}
	t.Fatalf("no client %s", id)
}

// One bad entry does not block exporting the others, a failing server is
// offered but not ticked, the servers are a list that scrolls, installed
// clients come first and the last choice is remembered.
func TestExportDialogForThirtyServers(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("PATH", t.TempDir())
	os.MkdirAll(filepath.Join(home, ".cursor"), 0o755)
	// The default config: the entries name no --config, and the markup
	// holds no temporary path.
	cfgPath := filepath.Join(home, ".config", "mcptray", "servers.toml")
	os.MkdirAll(filepath.Dir(cfgPath), 0o755)
	var b strings.Builder
	for i := range 30 {
		fmt.Fprintf(&b, "[servers.server-%02d]\ncommand = \"/bin/sh\"\n\n", i+1)
	}
	b.WriteString("[servers.broken]\ncommand = \"y\"\nrestart = \"sometimes\"\n")
	os.WriteFile(cfgPath, []byte(b.String()), 0o600)

	eng := newFakeEngine(manySnapshot(30))
	c := newTestController(t, eng, cfgPath)
	c.env.Exe = "/usr/local/bin/mcptray"
	c.apply(eng.Snapshot())
	offered, ticked, err := c.exportChoices()
	if err != nil || len(offered) != 30 || len(ticked) != 26 || slices.Contains(ticked, "server-05") || slices.Contains(ticked, "server-28") {
		t.Fatalf("offered %d, ticked %v, %v", len(offered), ticked, err)
	}
	e := c.newExportDialog(offered, ticked)
	if e.client.Selected != "Cursor (installed)" || e.client.Options[0] != "Cursor (installed)" {
		t.Errorf("installed client not first and picked: %q, %q", e.client.Selected, e.client.Options[:2])
	}
	if e.servers.Horizontal || !e.copyBtn.Visible() || e.copyBtn.Disabled() {
		t.Errorf("servers horizontal %v; copy disabled %v", e.servers.Horizontal, e.copyBtn.Disabled())
	}
	if !strings.Contains(e.snippet.Text, `"mcptray"`) || strings.Contains(e.snippet.Text, "server-01") || !strings.Contains(e.notes.Text, "the 30 servers of profile default") {
		t.Errorf("one entry:\n%.300s\n%s", e.snippet.Text, e.notes.Text)
	}
	e.route.SetSelected("Per server, through mcptray")
	if !strings.Contains(e.snippet.Text, "server-01") || strings.Contains(e.snippet.Text, "broken") || strings.Contains(e.snippet.Text, "server-05") {
		t.Errorf("snippet:\n%.300s", e.snippet.Text)
	}
	e.route.SetSelected("One entry: mcptray")
	w := test.NewTempWindow(t, e.content)
	w.Resize(fyne.NewSize(820, 640))
	if h := e.content.MinSize().Height; h > 640 {
		t.Errorf("the dialog needs %.0f px for thirty servers", h)
	}
	before := e.snippet.Size()
	selectClient(t, e, "codex")
	if after := e.snippet.Size(); after != before {
		t.Errorf("the layout moved with the client: %v then %v", before, after)
	}
	test.AssertRendersToMarkup(t, "export_thirty.xml", w.Canvas())
	if d := os.Getenv("MCPTRAY_SCREENSHOTS"); d != "" {
		writePNG(t, filepath.Join(d, "export.png"), w.Canvas().Capture())
	}

	// The last choice is what the next dialog opens on.
	e2 := c.newExportDialog(offered, ticked)
	if e2.byName[e2.client.Selected].ID != "codex" {
		t.Errorf("the next dialog opens on %q", e2.client.Selected)
	}
	// A per-server export of a healthy one, with a broken one in the file.
	e3 := c.newExportDialog(offered, []string{"server-02"})
	e3.route.SetSelected("Per server, through mcptray")
	if !strings.Contains(e3.snippet.Text, "server-02") || e3.copyBtn.Disabled() {
		t.Errorf("per-server export: %q", e3.notes.Text)
	}
}

// The dialog's Install writes what `mcptray install` writes: the one entry
// by default, replacing the per-server entries mcptray wrote, and per
// server through mcptray when asked; the tray's Copy config copies a
// server's entry through mcptray, never the server's own command.
func TestExportDialogInstallsThroughMcptray(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	cfgPath := filepath.Join(t.TempDir(), "servers.toml")
	os.WriteFile(cfgPath, []byte("[servers.gh]\ncommand = \"npx\"\nargs = [\"-y\", \"@modelcontextprotocol/server-github\"]\nenv = { GITHUB_PERSONAL_ACCESS_TOKEN = \"ghp_literal_2\" }\n\n[servers.files]\ncommand = \"npx\"\nargs = [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"/tmp\"]\n"), 0o600)
	file := filepath.Join(home, ".cursor", "mcp.json")
	os.MkdirAll(filepath.Dir(file), 0o755)
	c := newTestController(t, newFakeEngine(sampleSnapshot()), cfgPath)
	c.env.Exe = "/usr/local/bin/mcptray"
	entries := func() map[string][]any {
		t.Helper()
		var v struct {
			MCPServers map[string]struct {
				Command string
				Args    []any
			} `json:"mcpServers"`
		}
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%v:\n%s", err, b)
		}
		out := map[string][]any{}
		for n, e := range v.MCPServers {
			out[n] = append([]any{e.Command}, e.Args...)
		}
		return out
	}
	install := func(e *exportDialog) {
		t.Helper()
		e.confirmInstall()
		tapOverlayButton(t, c.win, "Install")
	}

	e := c.newExportDialog([]string{"gh", "files"}, []string{"gh", "files"})
	selectClient(t, e, "cursor")
	e.route.SetSelected(app.RoutePerServer.Label())
	install(e)
	if got := entries(); len(got) != 2 || fmt.Sprint(got["gh"]) != fmt.Sprint([]any{"/usr/local/bin/mcptray", "connect", "--config", cfgPath, "gh"}) {
		t.Fatalf("per server through mcptray: %v", got)
	}
	e.route.SetSelected(app.RouteOne.Label())
	e.confirmInstall()
	if say := overlayText(c.win); !strings.Contains(say, "mcptray replaces the per-server entries mcptray wrote (gh, files)") {
		t.Errorf("the confirmation does not say the per-server entries go:\n%s", say)
	}
	tapOverlayButton(t, c.win, "Install")
	if got := entries(); len(got) != 1 || fmt.Sprint(got["mcptray"]) != fmt.Sprint([]any{"/usr/local/bin/mcptray", "connect", "--config", cfgPath}) {
		t.Fatalf("the one entry: %v", got)
	}
	if b, _ := os.ReadFile(file); strings.Contains(string(b), "ghp_literal_2") || strings.Contains(string(b), "server-github") {
		t.Errorf("the file holds the server's own settings:\n%s", b)
	}

	// A server's own Export… opens on its entry through mcptray.
	c.showExport("files")
	if top := c.win.Canvas().Overlays().Top(); top == nil {
		t.Fatal("no export dialog")
	}
	if say := overlayText(c.win); !strings.Contains(say, "One entry per server (1), each through mcptray") {
		t.Errorf("a server's Export… says:\n%s", say)
	}

	// The tray's Copy config.
	got, note, err := c.configCopy("gh", "claude-code")
	if err != nil || !strings.Contains(note.Content, "through mcptray") {
		t.Fatalf("Copy config: %v, %+v", err, note)
	}
	if !strings.Contains(got, `"gh": {`) || !strings.Contains(got, `"args": ["connect", "--config", `+jsonQuote(cfgPath)+`, "gh"]`) ||
		strings.Contains(got, "server-github") || strings.Contains(got, "ghp_literal_2") || strings.Contains(got, "GITHUB_PERSONAL_ACCESS_TOKEN") {
		t.Errorf("Copy config copied:\n%s", got)
	}
}

// Import keeps a client's literal secrets in the keyring, as `mcptray
// import --keyring` does, unless the box is unticked; the warning's fix
// is that box, not a flag.
func TestImportKeepsSecretsInTheKeyring(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("MCPTRAY_KEYRING", "file")
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("HOME", dir)
	cfgPath := filepath.Join(dir, "servers.toml")
	os.WriteFile(cfgPath, nil, 0o600)
	file := filepath.Join(dir, "claude_desktop_config.json")
	os.WriteFile(file, []byte(`{"mcpServers": {"gh": {"command": "npx", "args": ["-y", "gh-mcp"], "env": {"GITHUB_TOKEN": "ghp_literal_9"}}}}`), 0o600)
	c := newTestController(t, newFakeEngine(sampleSnapshot()), cfgPath)
	c.showImport()
	var path *widget.Entry
	var keep *widget.Check
	walk(c.win.Canvas().Overlays().Top(), func(o fyne.CanvasObject) {
		switch x := o.(type) {
		case *widget.Entry:
			if path == nil {
				path = x
			}
		case *widget.Check:
			if x.Text == keyringLabel {
				keep = x
			}
		}
	})
	if path == nil || keep == nil {
		t.Fatal("no path field or keyring box in the Import dialog")
	}
	path.SetText(file)
	text := overlayText(c.win)
	if !strings.Contains(text, "1 literal secret kept in the keyring, not in servers.toml: gh env.GITHUB_TOKEN") || strings.Contains(text, "ghp_literal_9") {
		t.Errorf("the preview:\n%s", text)
	}
	keep.SetChecked(false)
	if text := overlayText(c.win); !strings.Contains(text, `or tick "`+keyringLabel+`"`) || strings.Contains(text, "--keyring") {
		t.Errorf("unticked, the warning's fix is not the box:\n%s", text)
	}
	keep.SetChecked(true)
	tapOverlayButton(t, c.win, "Import")
	b, _ := os.ReadFile(cfgPath)
	if strings.Contains(string(b), "ghp_literal_9") || !strings.Contains(string(b), "${keyring:") {
		t.Fatalf("servers.toml after the import:\n%s", b)
	}
	st, err := app.OpenSecrets(&app.Env{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := registry.Load(cfgPath)
	if err != nil || cfg.Server("gh") == nil {
		t.Fatalf("load: %v", err)
	}
	ref := cfg.Server("gh").Env["GITHUB_TOKEN"]
	name := strings.TrimSuffix(strings.TrimPrefix(ref, "${keyring:"), "}")
	if v, err := st.Get(secrets.SecretKey(name)); err != nil || v != "ghp_literal_9" {
		t.Errorf("the keyring holds %q for %s (%v)", v, ref, err)
	}
}
