package gui

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"mcptray/registry"
)

// The window names the config file, opens it, and says where a file that
// does not parse breaks, until it loads again.
func TestConfigFileIsVisible(t *testing.T) {
	// A relative path, so the golden is the same on every run.
	orig, _ := os.Getwd()
	dir := t.TempDir()
	t.Chdir(dir)
	path := "servers.toml"
	os.WriteFile(path, []byte("[servers.demo]\ncommand = \"x\"\nargs = [\"a\"\n"), 0o600)
	eng := newFakeEngine(sampleSnapshot())
	c := newTestController(t, eng, path)
	c.apply(eng.Snapshot())
	m := c.main
	if !strings.Contains(m.config.path.Text, path) || m.config.banner.Visible() {
		t.Errorf("path %q, banner shown %v", m.config.path.Text, m.config.banner.Visible())
	}
	var opened *url.URL
	c.openURL = func(u *url.URL) error { opened = u; return nil }
	test.Tap(m.config.open)
	if opened == nil || opened.Scheme != "file" || opened.Path != filepath.ToSlash(filepath.Join(dir, path)) {
		t.Errorf("opened %v", opened)
	}

	// The engine reports the file it runs does not load (control.Status).
	_, err := registry.Load(path)
	var se *registry.SyntaxError
	if !errors.As(err, &se) {
		t.Fatalf("the broken file: %v", err)
	}
	eng.mu.Lock()
	eng.status.ConfigProblem = &se.Diagnostic
	eng.mu.Unlock()
	c.apply(eng.Snapshot())
	// One banner: the window's own, with the line and the Open button.
	if strings.Contains(m.warning.Text, "does not load") {
		t.Errorf("the problem is said twice: %q", m.warning.Text)
	}
	if !m.config.banner.Visible() || !strings.Contains(m.config.problem.Text, path+":3:12:") || !strings.Contains(m.config.source.Text, "^") {
		t.Errorf("banner %v %q\n%s", m.config.banner.Visible(), m.config.problem.Text, m.config.source.Text)
	}
	os.Chdir(orig) // the goldens are found from the package folder
	test.AssertRendersToMarkup(t, "main_config_broken.xml", c.win.Canvas())
	if d := os.Getenv("MCPTRAY_SCREENSHOTS"); d != "" {
		writePNG(t, filepath.Join(d, "config-broken.png"), c.win.Canvas().Capture())
	}
	eng.mu.Lock()
	eng.status.ConfigProblem = nil
	eng.mu.Unlock()
	c.apply(eng.Snapshot())
	if m.config.banner.Visible() || strings.Contains(m.warning.Text, "does not load") {
		t.Error("banner stays after the file loads")
	}
}
