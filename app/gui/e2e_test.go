//go:build linux

package gui

import (
	"bytes"
	"context"
	"fmt"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"github.com/godbus/dbus/v5"

	"mcptray/assets"
	"mcptray/control"
	"mcptray/internal/testenv"
)

// The end-to-end test runs the real binaries: `mcptray gui` on a config with
// the demo server and a server that exits at once, reads the tray menu back
// over D-Bus (the tray is a StatusNotifierItem with a dbusmenu), fires
// "Restart" through the dbusmenu Event method, takes a screenshot of the main
// window, and quits through the tray's own Quit item. `make test` runs the
// tests under xvfb-run and dbus-run-session.

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// binaries builds the desktop build of mcptray, once.
func binaries(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binaries")
	}
	if d := os.Getenv("MCPTRAY_E2E_BIN"); d != "" {
		// A folder holding another build's mcptray, to measure it (an
		// older one, for a figure before a change).
		return d
	}
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "mcptray-e2e-bin-")
		if buildErr != nil {
			return
		}
		out, err := exec.Command("go", "build", "-o", filepath.Join(buildDir, "mcptray"), "mcptray").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build mcptray: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildDir
}

// needDesktop skips, saying why, when the display or the session bus cannot
// be had; under CI=true it fails (testenv.Need).
func needDesktop(t *testing.T) {
	t.Helper()
	var missing []string
	if os.Getenv("DISPLAY") == "" {
		missing = append(missing, "DISPLAY (run under xvfb-run)")
	}
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		missing = append(missing, "a D-Bus session bus (run under dbus-run-session)")
	}
	for _, tool := range []string{"gdbus", "xwininfo", "import", "xdotool"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if len(missing) > 0 {
		testenv.Need(t, strings.Join(missing, ", ")+" (`make test` installs and provides them)")
	}
}

type menuItem struct {
	id     string
	label  string
	hidden bool
}

// trayMenu reads the tray's menu over D-Bus, the items a host shows in menu
// order (a submenu's items follow their parent).
func trayMenu(pid int) ([]menuItem, error) {
	items, err := trayLayout(pid)
	return slices.DeleteFunc(items, func(it menuItem) bool { return it.hidden }), err
}

// trayLayout reads the tray's whole menu over D-Bus, in menu order, hidden
// items too (an item under a hidden one counts as hidden).
func trayLayout(pid int) ([]menuItem, error) {
	conn, err := dbus.SessionBusPrivate()
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if err := conn.Auth(nil); err != nil {
		return nil, err
	}
	if err := conn.Hello(); err != nil {
		return nil, err
	}
	var revision uint32
	var root dbusLayout
	err = conn.Object(fmt.Sprintf("org.kde.StatusNotifierItem-%d-1", pid), "/StatusNotifierMenu").
		Call("com.canonical.dbusmenu.GetLayout", 0, int32(0), int32(-1), []string{}).Store(&revision, &root)
	if err != nil {
		return nil, err
	}
	var items []menuItem
	var walk func(l dbusLayout, hidden bool) error
	walk = func(l dbusLayout, hidden bool) error {
		for _, v := range l.Children {
			var c dbusLayout
			if err := dbus.Store([]any{v.Value()}, &c); err != nil {
				return err
			}
			h := hidden
			if vis, ok := c.Props["visible"].Value().(bool); ok && !vis {
				h = true
			}
			if label, ok := c.Props["label"].Value().(string); ok {
				items = append(items, menuItem{strconv.Itoa(int(c.ID)), label, h})
			}
			if err := walk(c, h); err != nil {
				return err
			}
		}
		return nil
	}
	return items, walk(root, false)
}

// dbusLayout is an item of a com.canonical.dbusmenu layout: its id, its
// properties and its children, each a variant holding a dbusLayout.
type dbusLayout struct {
	ID       int32
	Props    map[string]dbus.Variant
	Children []dbus.Variant
}

func clickItem(pid int, id string) error {
	out, err := exec.Command("gdbus", "call", "--session", "-d", fmt.Sprintf("org.kde.StatusNotifierItem-%d-1", pid),
		"-o", "/StatusNotifierMenu", "-m", "com.canonical.dbusmenu.Event", "--", id, "clicked", `<"">`, "0").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	return nil
}

// waitMenu polls the tray menu until cond holds for it.
func waitMenu(t *testing.T, pid int, what string, cond func([]menuItem) bool) []menuItem {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var items []menuItem
	var err error
	for time.Now().Before(deadline) {
		if items, err = trayMenu(pid); err == nil && cond(items) {
			return items
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("tray menu never showed %s; last: %v %v", what, items, err)
	return nil
}

func labelWith(items []menuItem, prefix string) (int, bool) {
	for i, it := range items {
		if strings.HasPrefix(it.label, prefix) {
			return i, true
		}
	}
	return -1, false
}

// TestTrayKeepsItsIdsAsServersChangePlace: a server that goes from the
// healthy ones to the problems changes no item's id in the real tray menu,
// and a click on an item of the menu as it was before (a host's menu read
// before the change) still does what it said.
func TestTrayKeepsItsIdsAsServersChangePlace(t *testing.T) {
	needDesktop(t)
	bin := binaries(t)
	dir := t.TempDir()
	broken := filepath.Join(dir, "flaky-fails")
	var b strings.Builder
	exe := filepath.Join(bin, "mcptray")
	for i := range 6 {
		fmt.Fprintf(&b, "[servers.demo%d]\ncommand = %q\nargs = [\"serve-demo\"]\n\n", i+1, exe)
	}
	fmt.Fprintf(&b, "[servers.flaky]\ncommand = \"sh\"\nargs = [\"-c\", %q]\n",
		fmt.Sprintf("test -e %s && { echo 'flaky: told to fail' >&2; exit 1; }; exec %s serve-demo", broken, exe))
	cfg := filepath.Join(dir, "servers.toml")
	if err := os.WriteFile(cfg, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	a := startApp(t, bin, dir, cfg, "--hide")
	waitMenu(t, a.pid, "7 servers ready", func(items []menuItem) bool {
		_, ok := labelWith(items, "Healthy: 7 servers")
		_, flaky := labelWith(items, "flaky: ready")
		return ok && flaky
	})
	before, err := trayLayout(a.pid)
	if err != nil {
		t.Fatal(err)
	}
	shown := slices.DeleteFunc(slices.Clone(before), func(it menuItem) bool { return it.hidden })
	f, _ := labelWith(shown, "flaky: ready")
	if shown[f+1].label != "Restart" || shown[f+2].label != "Stop" {
		t.Fatalf("flaky's submenu: %v", shown[f:])
	}
	staleStop := shown[f+2].id
	// flaky's process ends, and every start after fails.
	if err := os.WriteFile(broken, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dc, err := control.Dial(ctx, &control.ClientOptions{Socket: filepath.Join(dir, ".cache", "mcptray", control.SocketName)})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := dc.FetchSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range snap.Servers {
		if s.Name == "flaky" {
			if err := syscall.Kill(s.PID, syscall.SIGKILL); err != nil {
				t.Fatalf("flaky's process %d: %v", s.PID, err)
			}
		}
	}
	after := waitMenu(t, a.pid, "flaky among the problems", func(items []menuItem) bool {
		i, ok := labelWith(items, "flaky: ")
		j, _ := labelWith(items, "Healthy: 6 servers")
		return ok && j > i
	})
	all, err := trayLayout(a.pid)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, it := range all {
		ids[it.id] = true
	}
	for _, it := range before {
		if !ids[it.id] {
			t.Errorf("item %s (%q) is gone from the menu after flaky changed place", it.id, it.label)
		}
	}
	// Its place among the problems was never shown before: its submenu
	// is made as it is (Start once it has failed too often to be tried).
	if i, _ := labelWith(after, "flaky: "); after[i+1].label != "Restart" || after[i+2].label != "Stop" && after[i+2].label != "Start" {
		t.Errorf("flaky's submenu among the problems: %v", after[i:])
	}
	if after[0].id != shown[0].id {
		t.Errorf("Open mcptray was item %s and is now %s", shown[0].id, after[0].id)
	}
	// Stop, clicked where flaky was: flaky stops.
	if err := clickItem(a.pid, staleStop); err != nil {
		t.Fatal(err)
	}
	waitMenu(t, a.pid, "flaky stopped", func(items []menuItem) bool {
		_, ok := labelWith(items, "flaky: stopped")
		return ok
	})
}

func TestTrayEndToEnd(t *testing.T) {
	needDesktop(t)
	bin := binaries(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "servers.toml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`[settings]
probe_interval = "1s"

[servers.demo]
command = %q
args = ["serve-demo"]

[servers.demo2]
command = %[1]q
args = ["serve-demo"]

[servers.quitter]
command = "sh"
args = ["-c", "echo 'quitter: nothing to do' >&2; exit 1"]
`, filepath.Join(bin, "mcptray"))), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(bin, "mcptray"), "gui", "--config", cfg)
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "XDG_CACHE_HOME="+filepath.Join(dir, "cache"),
		"XDG_RUNTIME_DIR="+filepath.Join(dir, "run"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill() // no-op once it exited
		<-exited
	})
	// HOME is not the account's: its runtime folder is under it.
	sock := filepath.Join(dir, ".cache", "mcptray", control.SocketName)
	t.Cleanup(func() { stopDaemon(sock) })

	items := waitMenu(t, pid, "demo ready and quitter failing", func(items []menuItem) bool {
		_, ready := labelWith(items, "demo: ready, 3 tools")
		_, ready2 := labelWith(items, "demo2: ready, 3 tools")
		ready = ready && ready2
		_, bad := labelWith(items, "quitter: retrying")
		if !bad {
			_, bad = labelWith(items, "quitter: crash-looping")
		}
		return ready && bad
	})
	for _, want := range []string{"Open mcptray", "Check all now", "Reload config", "Quit"} {
		if _, ok := labelWith(items, want); !ok {
			t.Errorf("tray menu lacks %q: %v", want, items)
		}
	}
	// The tray offers the window first, says where everything is, then
	// the failing server before the ready ones; its title is the app's name.
	if items[0].label != "Open mcptray" || !strings.HasPrefix(items[1].label, "2 ready · 1 ") {
		t.Errorf("the tray's first lines are %q, %q, not Open and the count summary", items[0].label, items[1].label)
	}
	if q, _ := labelWith(items, "quitter: "); q > func() int { j, _ := labelWith(items, "demo: "); return j }() {
		t.Errorf("the failing server comes after a ready one: %v", items)
	}
	if got := trayProperty(t, pid, "Title"); got != "<'mcptray'>" {
		t.Errorf("tray title %s, want 'mcptray'", got)
	}
	if got := trayProperty(t, pid, "ToolTip"); !strings.Contains(got, "mcptray: 2 ready") || !strings.Contains(got, "quitter") {
		t.Errorf("tray tooltip %s", got)
	}
	i, _ := labelWith(items, "demo: ")
	if items[i+1].label != "Restart" || items[i+2].label != "Stop" {
		t.Fatalf("demo's submenu: %v", items[i:])
	}
	if strings.Contains(items[i].label, "restart") {
		t.Fatalf("demo restarted before we asked: %q", items[i].label)
	}
	// One click on the Restart read above restarts demo.
	if err := clickItem(pid, items[i+1].id); err != nil {
		t.Fatal(err)
	}
	waitMenu(t, pid, "demo ready after 1 restart", func(items []menuItem) bool {
		j, ok := labelWith(items, "demo: ready")
		return ok && strings.Contains(items[j].label, "1 restart")
	})
	checkTrayPixmap(t, pid)

	// The main window is open (no --hide): take its picture.
	shot := filepath.Join(dir, "main.png")
	if d := os.Getenv("MCPTRAY_SCREENSHOTS"); d != "" {
		shot = filepath.Join(d, "main-window.png")
	}
	id := mainWindowID(t)
	screenshot(t, id, shot)

	driveKeyboard(t, pid, id, sock)

	// The servers are the daemon's the app started: Quit leaves them.
	dc, err := control.Dial(context.Background(), &control.ClientOptions{Socket: sock})
	if err != nil {
		t.Fatalf("no daemon answers after the app started: %v\n%s", err, stderr.String())
	}
	// Its one child is the daemon it started (in a session of its own).
	if kids := childPids(pid); len(kids) > 1 || len(kids) == 1 && kids[0] != dc.Info().PID {
		t.Errorf("the app has child processes %v besides the daemon %d: servers run in it", kids, dc.Info().PID)
	}
	snap, _ := dc.FetchSnapshot(context.Background())
	var demoPids []int
	for _, s := range snap.Servers {
		if s.PID > 0 {
			demoPids = append(demoPids, s.PID)
		}
	}
	items, _ = trayMenu(pid)
	q, ok := labelWith(items, "Quit")
	if !ok {
		t.Fatal("no Quit item")
	}
	if err := clickItem(pid, items[q].id); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
		if waitErr != nil {
			t.Errorf("mcptray gui exited with %v\n%s", waitErr, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("Quit did not end the app\n%s", stderr.String())
	}
	for _, p := range demoPids {
		if !alive(p) {
			t.Errorf("server process %d ended with the app's Quit", p)
		}
	}
	if _, err := control.Dial(context.Background(), &control.ClientOptions{Socket: sock}); err != nil {
		t.Errorf("the daemon did not outlive Quit: %v", err)
	}
}

// stopDaemon stops the daemon on socket sock, if one answers.
func stopDaemon(sock string) {
	var pid int
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if c, err := control.Dial(ctx, &control.ClientOptions{Socket: sock}); err == nil {
		pid = c.Info().PID
		c.Shutdown(ctx)
	} else if p, ok := control.RunningDaemon(sock); ok && p > 0 {
		// One that does not answer (still starting, or stuck) holds the
		// lock all the same: it is stopped by its pid.
		pid = p
		syscall.Kill(pid, syscall.SIGTERM)
	} else {
		return
	}
	for deadline := time.Now().Add(20 * time.Second); alive(pid); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			return
		}
	}
}

// mainWindowID finds the app's main window on the display.
func mainWindowID(t *testing.T) string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		out, _ := exec.Command("xwininfo", "-root", "-tree").Output()
		for _, line := range strings.Split(string(out), "\n") {
			if strings.Contains(line, `"mcptray"`) {
				return strings.Fields(line)[0]
			}
		}
	}
	t.Fatal("no mcptray window on the display")
	return ""
}

// screenshot takes a picture of window id as the display shows it.
func screenshot(t *testing.T, id, path string) {
	t.Helper()
	time.Sleep(500 * time.Millisecond) // let it paint
	if out, err := exec.Command("import", "-window", id, path).CombinedOutput(); err != nil {
		t.Fatalf("screenshot: %v: %s", err, out)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() < 10_000 {
		t.Errorf("screenshot %s looks empty: %v", path, err)
	}
}

// trayProperty reads a StatusNotifierItem property, as gdbus prints it.
func trayProperty(t *testing.T, pid int, name string) string {
	t.Helper()
	out, err := exec.Command("gdbus", "call", "--session", "-d", fmt.Sprintf("org.kde.StatusNotifierItem-%d-1", pid),
		"-o", "/StatusNotifierItem", "-m", "org.freedesktop.DBus.Properties.Get", "org.kde.StatusNotifierItem", name).CombinedOutput()
	if err != nil {
		t.Fatalf("read the tray's %s: %v: %s", name, err, out)
	}
	return strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(string(out)), "("), ",)")
}

// driveKeyboard types into the main window as a person would: Ctrl+F,
// a search, Enter, Ctrl+R restarts the one server found; then a search for
// both demos, Home, Shift+Down selects both, and Ctrl+R restarts them
// together. The tray shows each restart.
func driveKeyboard(t *testing.T, pid int, win, sock string) {
	t.Helper()
	xdo := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("xdotool", args...).CombinedOutput(); err != nil {
			t.Fatalf("xdotool %v: %v: %s", args, err, out)
		}
	}
	// restarts: name is ready after at least n restarts (a loaded machine
	// can add one of its own).
	restarts := func(name string, n int) func([]menuItem) bool {
		return func(items []menuItem) bool {
			j, ok := labelWith(items, name+": ready")
			if !ok {
				return false
			}
			m := restartCount.FindStringSubmatch(items[j].label)
			if m == nil {
				return false
			}
			got, _ := strconv.Atoi(m[1])
			return got >= n
		}
	}
	xdo("windowfocus", "--sync", win)
	xdo("key", "--window", win, "ctrl+f")
	xdo("type", "--window", win, "demo2")
	asked := requestedRestarts(t, sock, "demo")
	xdo("key", "--window", win, "Return", "ctrl+r")
	waitMenu(t, pid, "demo2 restarted by Ctrl+R", restarts("demo2", 1))
	// Asked of the daemon, not read off the menu's restart count: on a
	// loaded machine a late probe can restart demo on its own.
	if n := requestedRestarts(t, sock, "demo"); n != asked {
		t.Errorf("Ctrl+R on demo2 restarted demo too: %d restarts of demo were asked for, %d before", n, asked)
	}
	asked2 := requestedRestarts(t, sock, "demo2")
	xdo("key", "--window", win, "ctrl+f", "BackSpace")
	xdo("key", "--window", win, "Return", "Home", "shift+Down", "ctrl+r")
	for deadline := time.Now().Add(60 * time.Second); requestedRestarts(t, sock, "demo") == asked || requestedRestarts(t, sock, "demo2") == asked2; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("Ctrl+R on both demos did not ask the daemon to restart both")
		}
	}
	// Each server's restart is its own event: the menu is polled, and
	// the two need not show "ready" in the same poll (one may be probed,
	// or the menu mid-update, while the other is seen), so each is
	// latched once seen.
	seen := map[string]bool{}
	waitMenu(t, pid, "both demos restarted together", func(items []menuItem) bool {
		for _, name := range []string{"demo", "demo2"} {
			seen[name] = seen[name] || restarts(name, 2)(items)
		}
		return seen["demo"] && seen["demo2"]
	})
}

var restartCount = regexp.MustCompile(` (\d+) restarts?\b`)

// requestedRestarts counts the restarts of server that were asked for
// (not crashes), from the daemon's transitions.
func requestedRestarts(t *testing.T, sock, server string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := control.Dial(ctx, &control.ClientOptions{Socket: sock})
	if err != nil {
		t.Fatalf("the daemon: %v", err)
	}
	page, err := c.FetchTransitions(ctx, 0)
	if err != nil {
		t.Fatalf("the daemon's transitions: %v", err)
	}
	n := 0
	for _, tr := range page.Transitions {
		if tr.Server == server && tr.Reason == "restart requested" {
			n++
		}
	}
	return n
}

var pixmapRE = regexp.MustCompile(`\((\d+), (\d+), \[byte ([^\]]*)\]\)`)

// trayPixmap reads the tray icon the app hands the StatusNotifierItem host:
// the largest IconPixmap entry, as width, height and ARGB bytes.
func trayPixmap(pid int) (int, int, []byte, error) {
	out, err := exec.Command("gdbus", "call", "--session", "-d", fmt.Sprintf("org.kde.StatusNotifierItem-%d-1", pid),
		"-o", "/StatusNotifierItem", "-m", "org.freedesktop.DBus.Properties.Get",
		"org.kde.StatusNotifierItem", "IconPixmap").CombinedOutput()
	if err != nil {
		return 0, 0, nil, fmt.Errorf("%v: %s", err, out)
	}
	best := -1
	var w, h int
	var data []byte
	for _, m := range pixmapRE.FindAllStringSubmatch(string(out), -1) {
		var mw, mh int
		fmt.Sscan(m[1], &mw)
		fmt.Sscan(m[2], &mh)
		if mw*mh <= best {
			continue
		}
		var px []byte
		for _, f := range strings.Split(m[3], ",") {
			var b int
			if _, err := fmt.Sscanf(strings.TrimSpace(f), "0x%x", &b); err != nil {
				return 0, 0, nil, fmt.Errorf("pixmap byte %q: %v", f, err)
			}
			px = append(px, byte(b))
		}
		best, w, h, data = mw*mh, mw, mh, px
	}
	if best < 0 {
		return 0, 0, nil, fmt.Errorf("no pixmap in %.200s", out)
	}
	if len(data) != w*h*4 {
		return 0, 0, nil, fmt.Errorf("pixmap %dx%d has %d bytes", w, h, len(data))
	}
	return w, h, data, nil
}

// checkTrayPixmap compares the icon on the bus with the tray assets: it
// must be one of them, pixel for pixel, as a PNG reader sees the asset
// (straight alpha; colour within what 16-bit rounding allows at the
// pixel's alpha).
func checkTrayPixmap(t *testing.T, pid int) {
	t.Helper()
	w, h, px, err := trayPixmap(pid)
	if err != nil {
		t.Fatalf("read the tray icon over D-Bus: %v", err)
	}
	var report []string
	for _, res := range []fyne.Resource{assets.TrayReady, assets.TrayWarn, assets.TrayError, assets.TrayIdle} {
		img, err := png.Decode(bytes.NewReader(res.Content()))
		if err != nil {
			t.Fatal(err)
		}
		if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
			report = append(report, fmt.Sprintf("%s: %dx%d, the bus has %dx%d", res.Name(), b.Dx(), b.Dy(), w, h))
			continue
		}
		bad := ""
		for y := 0; y < h && bad == ""; y++ {
			for x := 0; x < w; x++ {
				c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
				i := (y*w + x) * 4
				got := color.NRGBA{R: px[i+1], G: px[i+2], B: px[i+3], A: px[i]}
				if !sameStraight(got, c) {
					bad = fmt.Sprintf("%s: pixel (%d,%d) is %v on the bus, %v in the asset", res.Name(), x, y, got, c)
					break
				}
			}
		}
		if bad == "" {
			return
		}
		report = append(report, bad)
	}
	t.Errorf("the tray icon on D-Bus matches no tray asset:\n  %s", strings.Join(report, "\n  "))
}

// sameStraight says whether two straight-alpha colours are the same pixel:
// equal alpha, and colour within 128/alpha levels (the rounding of the
// 16-bit assets), ignored where the pixel is fully transparent.
func sameStraight(a, b color.NRGBA) bool {
	if a.A != b.A {
		return false
	}
	if a.A == 0 {
		return true
	}
	tol := 1 + 128/int(a.A)
	near := func(x, y uint8) bool { d := int(x) - int(y); return d <= tol && d >= -tol }
	return near(a.R, b.R) && near(a.G, b.G) && near(a.B, b.B)
}

// childPids lists the direct children of pid.
func childPids(pid int) []int {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	var out []int
	for _, f := range strings.Fields(string(b)) {
		var n int
		fmt.Sscan(f, &n)
		out = append(out, n)
	}
	return out
}

// alive says whether process pid runs (a zombie, left to a reaper that
// has not come by yet, does not).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}
