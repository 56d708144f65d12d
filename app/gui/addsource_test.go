package gui

import (
	"archive/zip"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"mcptray/registry"
	"mcptray/registry/catalog/catalogtest"
)

// Add server opens on the catalog: a search as the person types lists the
// registry's servers (here recorded answers served over HTTP), a pick
// shows its version, source and how it runs, and Add writes the entry
// `mcptray add` writes, with its source, and selects it in the window.
func TestAddFromTheCatalog(t *testing.T) {
	reg := catalogtest.Serve(t, filepath.Join("..", "..", "registry", "catalog", "testdata", "registry", "servers"))
	path := filepath.Join(t.TempDir(), "servers.toml")
	if err := os.WriteFile(path, []byte("[settings]\nregistry = \""+reg.URL+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := newTestController(t, newFakeEngine(sampleSnapshot()), path)
	c.editServer("", false)
	p := c.adding.registry
	if got := c.adding.tabs.Selected().Text; got != "From the catalog" {
		t.Fatalf("Add server opened on %q", got)
	}
	if !strings.Contains(p.status.Text, "Type to search the MCP Registry ("+reg.URL+")") {
		t.Errorf("status %q", p.status.Text)
	}
	// The registry's answers are shown as they come, in turn: what the
	// test reads is on its own goroutine, as Fyne's test driver wants.
	p.async = func(f func()) { f() }
	p.soon = func(f func()) { f() }
	tapOverlayButton(t, c.win, "List all")
	if len(p.results) <= 3 {
		t.Fatalf("List all: %d servers: %s", len(p.results), p.status.Text)
	}
	p.search.SetText("everything")
	if len(p.results) != 1 || p.results[0].Server.Name != "io.github.modelcontextprotocol/server-everything" {
		t.Fatalf("searching everything: %d servers: %s", len(p.results), p.status.Text)
	}
	if !strings.Contains(strings.Join(reg.Requests(), " "), "search=everything") {
		t.Errorf("the registry was not asked: %q", reg.Requests())
	}
	p.list.Select(0)
	detail := p.detail.Text
	for _, want := range []string{"version 2.0.0", "Source: https://github.com/modelcontextprotocol/servers", "mcptray will run the npm package @modelcontextprotocol/server-everything 2.0.0 (stdio)"} {
		if !strings.Contains(detail, want) {
			t.Errorf("details lack %q:\n%s", want, detail)
		}
	}
	if os.Getenv("MCPTRAY_SCREENSHOTS") != "" {
		writePNG(t, filepath.Join(os.Getenv("MCPTRAY_SCREENSHOTS"), "add-from-catalog.png"), c.win.Canvas().Capture())
	}
	test.Tap(p.add)
	if !strings.HasPrefix(p.status.Text, "Added ") {
		t.Fatalf("nothing was added: %s", p.status.Text)
	}
	cfg, err := registry.Load(path)
	if err != nil || len(cfg.Servers) != 1 {
		t.Fatalf("after the add: %v\n%s", err, cfg.Saved())
	}
	s := cfg.Servers[0]
	if s.Name != "server-everything" || s.Command != "npx" || s.Source != "registry:io.github.modelcontextprotocol/server-everything@2.0.0" {
		t.Errorf("entry %s: %s %q, source %q", s.Name, s.Command, s.Args, s.Source)
	}
	// A server that needs a secret asks for it, hidden, and says so when
	// it is left empty.
	c.editServer("", false)
	p = c.adding.registry
	p.async, p.soon = func(f func()) { f() }, func(f func()) { f() }
	p.start()
	p.search.SetText("brave")
	if len(p.results) == 0 {
		t.Fatalf("searching brave: %s", p.status.Text)
	}
	p.list.Select(0)
	if len(p.fields.entries) != 1 || !p.fields.entries[0].Password || !strings.Contains(p.fields.content.Objects[1].(*widget.Label).Text, "BRAVE_API_KEY (required; secret") {
		t.Errorf("the fields of brave-search: %d entries", len(p.fields.entries))
	}
	if os.Getenv("MCPTRAY_SCREENSHOTS") != "" {
		writePNG(t, filepath.Join(os.Getenv("MCPTRAY_SCREENSHOTS"), "add-from-catalog-fields.png"), c.win.Canvas().Capture())
	}
	test.Tap(p.add)
	if !strings.Contains(p.status.Text, "Fill in BRAVE_API_KEY first") {
		t.Errorf("Add with the key empty: %q", p.status.Text)
	}
	if cfg.Settings.Registry != reg.URL {
		t.Errorf("the settings were lost: %+v", cfg.Settings)
	}
}

// Paste takes any client's snippet: it says what it holds as it is
// typed, and Add writes every server in it, under a new name when one is
// taken.
func TestAddFromAPastedSnippet(t *testing.T) {
	path := filepath.Join(t.TempDir(), "servers.toml")
	if err := os.WriteFile(path, []byte("[servers.memory]\ncommand = \"x\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := newTestController(t, newFakeEngine(sampleSnapshot()), path)
	c.editServer("", false)
	c.adding.tabs.SelectIndex(2)
	p := c.adding.paste
	p.text.SetText(`{"mcpServers": {"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]},
	 "remote": {"url": "https://example.com/mcp?key=sk-live-123456"}}}`)
	preview := p.preview.Text
	if !strings.Contains(preview, "memory: npx -y @modelcontextprotocol/server-memory") || !strings.Contains(preview, "remote: https://example.com/mcp") {
		t.Errorf("preview:\n%s", preview)
	}
	if strings.Contains(preview, "sk-live") {
		t.Errorf("the preview shows a secret:\n%s", preview)
	}
	if p.add.Text != "Add 2 servers" || p.add.Disabled() {
		t.Errorf("button %q (disabled %v)", p.add.Text, p.add.Disabled())
	}
	test.Tap(p.add)
	cfg, err := registry.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Servers) != 3 || cfg.Server("memory").Command != "x" || cfg.Server("memory-2") == nil || cfg.Server("remote") == nil {
		var names []string
		for _, s := range cfg.Servers {
			names = append(names, s.Name+"="+s.Command+s.URL)
		}
		t.Errorf("servers after the paste: %q", names)
	}
	p.text.SetText(`{"mcpServers": {"memory": `)
	if !p.add.Disabled() || p.preview.Text == "" {
		t.Errorf("unreadable text: button disabled %v, preview %q", p.add.Disabled(), p.preview.Text)
	}
}

// From a bundle: the file's manifest is shown with what it needs, and Add
// unpacks it into the data folder and writes its entry, with its source.
func TestAddFromABundle(t *testing.T) {
	data := t.TempDir()
	t.Setenv("XDG_DATA_HOME", data)
	file := echoBundle(t)

	path := filepath.Join(t.TempDir(), "servers.toml")
	os.WriteFile(path, nil, 0o600)
	c := newTestController(t, newFakeEngine(sampleSnapshot()), path)
	c.editServer("", false)
	c.adding.tabs.SelectIndex(1)
	p := c.adding.bundle
	p.async = func(f func()) { f() }
	p.open(file)
	if !strings.Contains(p.detail.Text, "mcptray-echo, version 1.0.0") || len(p.fields.entries) != 1 || p.add.Disabled() {
		t.Fatalf("the bundle shows %q with %d fields (Add disabled %v)", p.detail.Text, len(p.fields.entries), p.add.Disabled())
	}
	test.Type(p.fields.entries[0], "bonjour")
	p.fields.entries[0].TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn}) // Enter in the field adds it
	cfg, err := registry.Load(path)
	if err != nil || len(cfg.Servers) != 1 {
		t.Fatalf("after Add (%s): %v", p.status.Text, err)
	}
	s := cfg.Servers[0]
	folder := filepath.Join(data, "mcptray", "bundles", "mcptray-echo", "1.0.0")
	if s.Source != "mcpb:mcptray-echo@1.0.0" || s.Cwd != folder || !slices.Contains(s.Args, "bonjour") {
		t.Errorf("entry %+v", s)
	}
	if _, err := os.Stat(filepath.Join(folder, "server", "index.js")); err != nil {
		t.Errorf("not unpacked: %v", err)
	}

	// A file that is no bundle says so, and offers no Add.
	bad := filepath.Join(t.TempDir(), "bad.mcpb")
	os.WriteFile(bad, []byte("not a zip"), 0o600)
	p.open(bad)
	if !p.add.Disabled() || p.detail.Text == "" {
		t.Errorf("a bad file: Add disabled %v, %q", p.add.Disabled(), p.detail.Text)
	}
}

// echoBundle packs the echo bundle of registry/bundle's testdata, without
// its sensitive field (which would need a keyring here), and gives its path.
func echoBundle(t *testing.T) string {
	t.Helper()
	src := filepath.Join("..", "..", "registry", "bundle", "testdata", "echo")
	raw, err := os.ReadFile(filepath.Join(src, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	// Without the sensitive field, which would need a keyring here.
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	delete(m["user_config"].(map[string]any), "api_key")
	delete(m["server"].(map[string]any)["mcp_config"].(map[string]any), "env")
	manifest, _ := json.Marshal(m)
	index, err := os.ReadFile(filepath.Join(src, "server", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "echo.mcpb")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for name, body := range map[string][]byte{"manifest.json": manifest, "server/index.js": index} {
		w, _ := zw.Create(name)
		w.Write(body)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return file
}

// Files dropped on the window: a bundle opens in the bundle tab, a
// client's config file in the Paste tab, and anything else is refused
// with the reason; nothing is written before Add.
func TestDropOnTheWindow(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	dir := t.TempDir()
	path := filepath.Join(dir, "servers.toml")
	os.WriteFile(path, nil, 0o600)
	c := newTestController(t, newFakeEngine(sampleSnapshot()), path)

	c.dropped([]fyne.URI{storage.NewFileURI(echoBundle(t))})
	if c.adding == nil || c.adding.tabs.Selected().Text != "From a bundle" {
		t.Fatal("a dropped bundle did not open the bundle tab")
	}
	if p := c.adding.bundle; !strings.Contains(p.detail.Text, "mcptray-echo, version 1.0.0") || p.add.Disabled() {
		t.Errorf("the dropped bundle shows %q (Add disabled %v)", p.detail.Text, p.add.Disabled())
	}
	// The keyboard is in its one field: Enter adds it.
	if f := c.win.Canvas().Focused(); f != c.adding.bundle.fields.entries[0] {
		t.Errorf("focused after the drop: %T, not the bundle's field", f)
	}

	// The dialog is still open: a config file dropped now goes to its
	// Paste tab, in the same dialog.
	first := c.adding
	desktop := filepath.Join(dir, "claude_desktop_config.json")
	os.WriteFile(desktop, []byte(`{"mcpServers": {"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}}}`), 0o600)
	c.dropped([]fyne.URI{storage.NewFileURI(desktop)})
	if c.adding != first || c.adding.tabs.Selected().Text != "Paste" {
		t.Fatalf("a dropped config file: same dialog %v, tab %q", c.adding == first, c.adding.tabs.Selected().Text)
	}
	if p := c.adding.paste; !strings.Contains(p.preview.Text, "memory: npx -y @modelcontextprotocol/server-memory") || p.add.Disabled() {
		t.Errorf("the dropped file's preview %q (Add disabled %v)", p.preview.Text, p.add.Disabled())
	}

	// Once that dialog is closed, a drop opens a new one.
	first.closed = true
	c.dropped([]fyne.URI{storage.NewFileURI(desktop)})
	if c.adding == first || c.adding.tabs.Selected().Text != "Paste" {
		t.Error("a drop after the dialog closed did not open a new one")
	}

	binary := filepath.Join(dir, "photo.png")
	os.WriteFile(binary, []byte{0x89, 'P', 'N', 'G', 0, 0, 0xff}, 0o600)
	for _, tc := range []struct {
		uris []fyne.URI
		want string
	}{
		{[]fyne.URI{storage.NewFileURI(binary)}, "photo.png is not text: drop an MCP bundle (.mcpb) or a client's config file"},
		{[]fyne.URI{storage.NewFileURI(dir)}, "is a folder"},
		{[]fyne.URI{storage.NewFileURI(filepath.Join(dir, "gone.json"))}, "cannot read the dropped file " + filepath.Join(dir, "gone.json") + ": no such file or directory"},
		{[]fyne.URI{storage.NewFileURI(desktop), storage.NewFileURI(binary)}, "2 files were dropped on mcptray's window: drop one at a time"},
	} {
		c.lastError = ""
		c.dropped(tc.uris)
		if !strings.Contains(c.lastError, tc.want) {
			t.Errorf("dropped %v: error %q, want %q", tc.uris, c.lastError, tc.want)
		}
	}
	if b, _ := os.ReadFile(path); len(b) != 0 {
		t.Errorf("a drop wrote servers.toml:\n%s", b)
	}
}
