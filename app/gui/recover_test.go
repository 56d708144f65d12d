//go:build linux

package gui

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/control"
	"mcptray/internal/testenv"
	"mcptray/supervisor"
)

// daemonServing is the pid of the daemon answering on sock when it runs
// every one of the demo servers ready, else 0.
func daemonServing(sock string, demos int) int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	c, err := control.Dial(ctx, &control.ClientOptions{Socket: sock, Timeout: 2 * time.Second})
	if err != nil {
		return 0
	}
	snap, err := c.FetchSnapshot(ctx)
	if err != nil {
		return 0
	}
	ready := 0
	for _, s := range snap.Servers {
		if strings.HasPrefix(s.Name, "demo") && s.State == supervisor.StateReady {
			ready++
		}
	}
	if ready < demos {
		return 0
	}
	return c.Info().PID
}

// zombiesOf lists the children of pid that have exited and that nobody
// reaped.
func zombiesOf(pid int) []int {
	var out []int
	for _, k := range childPids(pid) {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", k)); err == nil {
			if i := strings.LastIndexByte(string(b), ')'); i > 0 && i+2 < len(b) && b[i+2] == 'Z' {
				out = append(out, k)
			}
		}
	}
	return out
}

// TestSessionDaemonKilled: the desktop app runs 30 servers in the daemon
// it started, and an AI client uses one of them through `mcptray connect`.
// The daemon is killed with SIGKILL. Within 10 s a new daemon serves every
// demo server again (the app inherited the dead daemon's servers as their
// subreaper and reaps them: no zombie is left for the new daemon's cleaner
// to wait on); the tray says the background service is restarting, then
// names the new pid; one notification says the service was restarted and
// why; the client's calls go through again.
func TestSessionDaemonKilled(t *testing.T) {
	needSession(t)
	bin := binaries(t)
	startOpenbox(t)
	startTrayHost(t)
	startDunst(t)
	dir := t.TempDir()
	cfg, demos := sessionServers(t, bin, dir, 30)
	notices := monitorBus(t, "interface='org.freedesktop.Notifications',member='Notify'")
	a := startApp(t, bin, dir, cfg)
	waitMenu(t, a.pid, fmt.Sprintf("%d ready", demos), func(items []menuItem) bool {
		_, ok := labelWith(items, fmt.Sprintf("%d ready", demos))
		return ok
	})
	sock := filepath.Join(dir, ".cache", "mcptray", control.SocketName)
	old := daemonServing(sock, demos)
	if old == 0 {
		t.Fatal("the tray says every demo server is ready, the daemon does not")
	}

	// The app started the daemon and inherited it (as a child subreaper):
	// the daemon, and what it leaves when killed, end as the app's
	// children, for the app to reap.
	if pp := parentOf(old); pp != a.pid {
		t.Errorf("the daemon's parent is %d, not the app (%d)", pp, a.pid)
	}

	// An AI client of demo01.
	conn := exec.Command(filepath.Join(bin, "mcptray"), "connect", "--config", cfg, "demo01")
	conn.Env = a.cmd.Env
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "recovery-test", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: conn}, nil)
	cancel()
	if err != nil {
		t.Fatalf("mcptray connect demo01: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	callEcho := func(timeout time.Duration) error {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hello"}})
		if err == nil && res.IsError {
			err = fmt.Errorf("the tool failed: %v", res.Content)
		}
		return err
	}
	if err := callEcho(30 * time.Second); err != nil {
		t.Fatalf("echo through mcptray connect: %v", err)
	}
	mark := notices.mark()

	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	shots := os.Getenv("MCPTRAY_SCREENSHOTS")

	// The client keeps calling; each call is given 2 s.
	clientBack := make(chan time.Duration, 1)
	go func() {
		for time.Since(killed) < 90*time.Second {
			if callEcho(2*time.Second) == nil {
				clientBack <- time.Since(killed)
				return
			}
		}
		close(clientBack)
	}()

	var next int
	testenv.Eventually(t, 120*time.Second, func() bool {
		next = daemonServing(sock, demos)
		return next != 0 && next != old
	}, "no new daemon serves the %d demo servers after daemon %d was killed\n%s", demos, old, a.stderr.String())
	recovered := time.Since(killed)
	t.Logf("a new daemon (pid %d) serves all %d demo servers %s after daemon %d was killed", next, demos, recovered.Round(10*time.Millisecond), old)
	if recovered > 10*time.Second {
		t.Errorf("the new daemon served %s after the kill; want within 10s", recovered.Round(10*time.Millisecond))
	}

	if shots != "" {
		screenshot(t, mainWindowID(t), filepath.Join(shots, "daemon-restarted.png"))
	}

	// The app reaps what it inherited.
	var z []int
	testenv.Eventually(t, 10*time.Second, func() bool { z = zombiesOf(a.pid); return len(z) == 0 },
		"the app leaves %d exited children unreaped: %v", len(z), z)

	// The tray named the new daemon, after saying the service restarts.
	testenv.Eventually(t, 20*time.Second, func() bool {
		return strings.Contains(trayProperty(t, a.pid, "ToolTip"), fmt.Sprintf("(daemon pid %d)", next))
	}, "the tooltip never named the new daemon %d: %s", next, trayProperty(t, a.pid, "ToolTip"))
	// One notification, saying why.
	var said []string
	testenv.Eventually(t, 20*time.Second, func() bool {
		said = notices.since(mark)
		return strings.Contains(strings.Join(said, "\n"), "Background service restarted")
	}, "no notification said the background service was restarted: %q", said)
	if text := strings.Join(said, "\n"); !strings.Contains(text, fmt.Sprintf("(daemon pid %d) was killed by SIGKILL", old)) ||
		!strings.Contains(text, fmt.Sprintf("(pid %d)", next)) {
		t.Errorf("the notification does not say which daemon ended, how, and which runs now:\n%s", text)
	}
	time.Sleep(3 * time.Second) // a second notification would come about now: a window to count in, not a state
	n := 0
	for _, l := range notices.since(mark) {
		if strings.Contains(l, "member=Notify") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d notifications after the daemon was killed, want 1:\n%s", n, strings.Join(notices.since(mark), "\n"))
	}

	back, ok := <-clientBack
	if !ok {
		t.Fatal("the client's calls through mcptray connect never went through again")
	}
	t.Logf("the client's calls went through again %s after the kill", back.Round(10*time.Millisecond))
	if back > 15*time.Second {
		t.Errorf("the client's calls went through again %s after the kill; want about 10s", back.Round(10*time.Millisecond))
	}

	// While no new daemon can start (its servers.toml does not load), the
	// tray and the window say the background service is restarting, in
	// place of what the dead daemon last showed; once one starts, the
	// tray names it.
	cs.Close()
	good, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, append(append([]byte(nil), good...), "\n[servers.broken\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(next, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	items := waitMenu(t, a.pid, "Background service restarting…", func(got []menuItem) bool {
		_, ok := labelWith(got, "Background service restarting…")
		return ok
	})
	if _, ok := labelWith(items, fmt.Sprintf("%d ready", demos)); ok {
		t.Errorf("the tray counts the dead daemon's servers as ready: %v", items)
	}
	if tip := trayProperty(t, a.pid, "ToolTip"); !strings.Contains(tip, fmt.Sprintf("Background service restarting: daemon pid %d ended", next)) ||
		strings.Contains(tip, fmt.Sprintf("(daemon pid %d)", next)) || strings.Contains(tip, "ready") {
		t.Errorf("while restarting, the tooltip says %s", tip)
	}
	if shots != "" {
		screenshot(t, mainWindowID(t), filepath.Join(shots, "daemon-restarting.png"))
	}
	if err := os.WriteFile(cfg, good, 0o600); err != nil {
		t.Fatal(err)
	}
	var third int
	testenv.Eventually(t, 60*time.Second, func() bool {
		third = daemonServing(sock, demos)
		return third != 0 && third != next
	}, "no new daemon serves once servers.toml loads again\n%s", a.stderr.String())
	testenv.Eventually(t, 20*time.Second, func() bool {
		return strings.Contains(trayProperty(t, a.pid, "ToolTip"), fmt.Sprintf("(daemon pid %d)", third))
	}, "the tooltip never named the new daemon %d: %s", third, trayProperty(t, a.pid, "ToolTip"))
}

// mark is where the lines seen so far end.
func (m *busMonitor) mark() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.lines)
}

// since is the lines seen after mark.
func (m *busMonitor) since(mark int) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.lines[mark:]...)
}

// parentOf is the parent pid of pid (0 when it cannot be read).
func parentOf(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+2:]))
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

// TestSessionNeverReady: a server that prints two lines and never answers
// the handshake is, after its first startup timeout, among the problems:
// in the tray's top level, named in the tooltip, counted as retrying (not
// "starting"), and its repeats make it crash-looping, red.
func TestSessionNeverReady(t *testing.T) {
	needSession(t)
	bin := binaries(t)
	startOpenbox(t)
	startTrayHost(t)
	startDunst(t)
	dir := t.TempDir()
	exe := filepath.Join(bin, "mcptray")
	cfg := filepath.Join(dir, "servers.toml")
	conf := fmt.Sprintf(`[settings]
startup_timeout = "3s"

[servers.demo01]
command = %q
args = ["serve-demo"]

[servers.demo02]
command = %q
args = ["serve-demo"]

[servers.mute]
command = "sh"
args = ["-c", "echo one; echo two; exec sleep 100000"]
`, exe, exe)
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	a := startApp(t, bin, dir, cfg)
	waitMenu(t, a.pid, "the tray menu", func(items []menuItem) bool { _, ok := labelWith(items, "Open mcptray"); return ok })
	var tip string
	testenv.Eventually(t, 60*time.Second, func() bool {
		tip = trayProperty(t, a.pid, "ToolTip")
		return strings.Contains(tip, "mute: retrying")
	}, "the tooltip never named mute once its first start timed out: %s", tip)
	shots := os.Getenv("MCPTRAY_SCREENSHOTS")
	if shots != "" {
		screenshot(t, mainWindowID(t), filepath.Join(shots, "never-ready-retrying.png"))
	}
	// Five starts of 3 s with backoffs of 1, 2, 4 and 8 s between.
	var items []menuItem
	testenv.Eventually(t, 120*time.Second, func() bool {
		items, _ = trayMenu(a.pid)
		_, looping := labelWith(items, "mute: crash-looping")
		_, counted := labelWith(items, "2 ready · 1 failing")
		return looping && counted
	}, "the tray never showed mute crash-looping, counted as failing: %v", items)
	for _, it := range items {
		if strings.Contains(it.label, "starting") {
			t.Errorf("the tray says %q", it.label)
		}
	}
	if tip := trayProperty(t, a.pid, "ToolTip"); !strings.Contains(tip, "mute: crash-looping") {
		t.Errorf("the tooltip does not name mute crash-looping: %s", tip)
	}
	if shots != "" {
		screenshot(t, mainWindowID(t), filepath.Join(shots, "never-ready-crash-looping.png"))
	}
}
