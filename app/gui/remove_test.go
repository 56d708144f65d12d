package gui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// Remove of a server added from an MCP bundle offers to delete the folder
// the bundle was unpacked into, unticked: left so, the folder stays;
// ticked, it goes with the server.
func TestRemoveOffersTheBundleFolder(t *testing.T) {
	data := t.TempDir()
	t.Setenv("XDG_DATA_HOME", data)
	folder := func(name string) string {
		f := filepath.Join(data, "mcptray", "bundles", name, "1.0.0")
		if err := os.MkdirAll(filepath.Join(f, "server"), 0o755); err != nil {
			t.Fatal(err)
		}
		return f
	}
	keep, del := folder("keep-me"), folder("drop-me")
	cfgPath := filepath.Join(t.TempDir(), "servers.toml")
	var b strings.Builder
	for _, n := range []string{"keep-me", "drop-me"} {
		fmt.Fprintf(&b, "[servers.%s]\ncommand = \"node\"\nargs = [\"server/index.js\"]\ncwd = %q\nsource = \"mcpb:%s@1.0.0\"\n\n", n, filepath.Join(data, "mcptray", "bundles", n, "1.0.0"), n)
	}
	b.WriteString("[servers.plain]\ncommand = \"/bin/sh\"\n")
	if err := os.WriteFile(cfgPath, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	c := newTestController(t, newFakeEngine(sampleSnapshot()), cfgPath)
	check := func() *widget.Check {
		var found *widget.Check
		if top := c.win.Canvas().Overlays().Top(); top != nil {
			walk(top, func(o fyne.CanvasObject) {
				if ch, ok := o.(*widget.Check); ok && found == nil {
					found = ch
				}
			})
		}
		return found
	}

	c.removeServer("plain")
	if check() != nil {
		t.Errorf("a server not from a bundle is offered a folder: %q", overlayText(c.win))
	}
	tapOverlayButton(t, c.win, "Cancel")

	c.removeServer("keep-me")
	ch := check()
	if ch == nil || ch.Checked || !strings.Contains(ch.Text, "Also delete the folder its MCP bundle was unpacked into: "+tildePath(keep)) {
		t.Fatalf("the folder is not offered, unticked: %+v\n%s", ch, overlayText(c.win))
	}
	tapOverlayButton(t, c.win, "Remove")
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("the folder went unasked: %v", err)
	}

	c.removeServer("drop-me")
	ch = check()
	if ch == nil {
		t.Fatalf("no offer for drop-me: %s", overlayText(c.win))
	}
	test.Tap(ch)
	tapOverlayButton(t, c.win, "Remove")
	if _, err := os.Stat(del); !os.IsNotExist(err) {
		t.Errorf("the ticked folder is still there: %v", err)
	}
	text, _ := os.ReadFile(cfgPath)
	if strings.Contains(string(text), "keep-me") || strings.Contains(string(text), "drop-me") || !strings.Contains(string(text), "plain") {
		t.Errorf("servers.toml:\n%s", text)
	}
}
