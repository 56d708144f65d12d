//go:build linux

package gui

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcptray/internal/testenv"
)

// TestDropABundleEndToEnd drops an MCP bundle on the app's window the way
// a file manager does (XDND, from testdata/xdnd.py): the Add dialog opens
// on it with the keyboard in its one field, Enter adds it, and the daemon
// runs the unpacked server.
func TestDropABundleEndToEnd(t *testing.T) {
	needDesktop(t)
	// Debian's python3, which has python3-xlib, whatever python3 PATH holds.
	const python = "/usr/bin/python3"
	if out, err := exec.Command(python, "-c", "import Xlib").CombinedOutput(); err != nil {
		testenv.Need(t, "python3-xlib for "+python+" (`make test` installs it): "+strings.TrimSpace(string(out)))
	}
	bin := binaries(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "servers.toml")
	if err := os.WriteFile(cfg, []byte("[settings]\nprobe_interval = \"1s\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bundle := echoBundle(t)
	a := startApp(t, bin, dir, cfg)
	pid, stderr := a.pid, a.stderr
	waitMenu(t, pid, "the tray", func(items []menuItem) bool { _, ok := labelWith(items, "Open mcptray"); return ok })
	id := mainWindowID(t)
	xdotool(t, "windowsize", "--sync", id, "1100", "700")
	time.Sleep(500 * time.Millisecond) // let it lay out at that size
	if out, err := exec.Command(python, filepath.Join("testdata", "xdnd.py"), id, bundle).CombinedOutput(); err != nil {
		t.Fatalf("drop %s on the window: %v: %s\n%s", bundle, err, out, stderr.String())
	}
	shot := filepath.Join(dir, "drop.png")
	if d := os.Getenv("MCPTRAY_SCREENSHOTS"); d != "" {
		shot = filepath.Join(d, "drop-bundle.png")
	}
	screenshot(t, id, shot)
	xdotool(t, "key", "--window", id, "Return")
	testenv.Eventually(t, 30*time.Second, func() bool {
		b, _ := os.ReadFile(cfg)
		return strings.Contains(string(b), `source = "mcpb:mcptray-echo@1.0.0"`)
	}, "Enter after the drop did not add the bundle's entry to servers.toml (picture: %s)\n%s", shot, stderr.String())
	if _, err := os.Stat(filepath.Join(dir, ".local", "share", "mcptray", "bundles", "mcptray-echo", "1.0.0", "server", "index.js")); err != nil {
		t.Errorf("the bundle is not unpacked: %v", err)
	}
	waitMenu(t, pid, "the dropped bundle's server ready", func(items []menuItem) bool {
		_, ok := labelWith(items, "mcptray-echo: ready")
		return ok
	})
}
