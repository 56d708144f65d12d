//go:build linux

package cli

import (
	"bytes"
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

	"mcptray/app"
)

// codexEnv is the environment Codex gives a stdio server: HOME, PATH,
// SHELL, LANG and TERM, nothing of the desktop session's XDG_* variables.
func (d *daemonEnv) codexEnv() []string {
	env := homeEnv(d.dir)
	for _, k := range []string{"PATH", "SHELL", "LANG", "TERM"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// bridge runs `mcptray connect args...` with env as a client would, and
// talks to it with the go-sdk.
func (d *daemonEnv) bridge(env []string, client string, args ...string) (*mcp.ClientSession, *exec.Cmd, *syncBuffer) {
	d.t.Helper()
	cmd := exec.Command(d.bin, append([]string{"connect"}, args...)...)
	cmd.Env = env
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: client, Version: "1.0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		d.t.Fatalf("mcptray connect %v: %v\nstderr: %s", args, err, stderr.String())
	}
	d.t.Cleanup(func() { cs.Close() })
	return cs, cmd, stderr
}

// daemonPIDs are the pids of every `mcptray daemon` of this test's binary
// and scratch user (its --config or MCPTRAY_CONFIG is d.cfg).
func (d *daemonEnv) daemonPIDs() []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !pidAlive(pid) {
			continue
		}
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		parts := strings.Split(string(cmdline), "\x00")
		if len(parts) < 2 || parts[0] != d.bin || parts[1] != "daemon" {
			continue
		}
		environ, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if bytes.Contains(cmdline, []byte(d.cfg)) || bytes.Contains(environ, []byte("MCPTRAY_CONFIG="+d.cfg)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// A bridge that Codex starts, with Codex's stripped environment, while the
// daemon runs with the desktop session's variables (XDG_RUNTIME_DIR and
// XDG_CACHE_HOME set), finds that daemon: one daemon, one server process,
// and the bridge's session is on it.
func TestCodexEnvironmentFindsTheDesktopDaemon(t *testing.T) {
	d := newDaemonEnv(t)
	d.stopDetachedDaemon() // a second daemon, if the bridge started one
	r := d.startDaemon()
	d.waitStatus("demo", "demo ready", func(e statusEntry) bool { return e.State == "ready" })
	desktop := r.cmd.Process.Pid

	cs, bridge, stderr := d.bridge(d.codexEnv(), "codex", "--config", d.cfg, "demo")
	if got, err := echo(t, cs, "from codex"); err != nil || got != "from codex" {
		t.Fatalf("echo through the Codex bridge = %q, %v\nstderr: %s", got, err, stderr.String())
	}
	if pids := d.daemonPIDs(); len(pids) != 1 || pids[0] != desktop {
		t.Fatalf("daemons running: %v; want only the desktop one (pid %d)\nbridge stderr: %s", pids, desktop, stderr.String())
	}
	if n := countProcesses(t, "serve-demo"); n != 1 {
		t.Fatalf("%d demo server processes run; want 1", n)
	}
	var onDaemon bool
	for _, s := range d.gatewayInfo().Servers {
		for _, sess := range s.Sessions {
			onDaemon = onDaemon || sess.PID == bridge.Process.Pid
		}
	}
	if !onDaemon {
		t.Fatalf("the desktop daemon lists no session of the Codex bridge (pid %d)", bridge.Process.Pid)
	}
}

// descendants are every process below pid, read from /proc as a client
// that cleans up after its MCP servers does.
func descendants(pid int) []int {
	var out []int
	seen := map[int]bool{pid: true}
	for grew := true; grew; {
		grew = false
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			p, err := strconv.Atoi(e.Name())
			if err != nil || seen[p] {
				continue
			}
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
			if err != nil {
				continue
			}
			s := string(b)
			j := strings.LastIndexByte(s, ')')
			if j < 0 {
				continue
			}
			var state string
			var ppid int
			fmt.Sscan(s[j+2:], &state, &ppid)
			if seen[ppid] {
				seen[p], grew = true, true
				out = append(out, p)
			}
		}
	}
	return out
}

// opencode, when it exits, sends SIGTERM to every descendant of each MCP
// process it started. The daemon the first bridge started is not among
// them: another client's session through the same daemon carries on, on
// the same server process.
func TestClientKillingDescendantsSparesTheDaemon(t *testing.T) {
	d := newDaemonEnv(t)
	d.stopDetachedDaemon()
	first, bridge, _ := d.bridge(d.env, "opencode", "demo")
	if _, err := echo(t, first, "first"); err != nil {
		t.Fatal(err)
	}
	other := d.connectClient("demo", "other")
	if _, err := echo(t, other, "other"); err != nil {
		t.Fatal(err)
	}
	daemon := d.daemonPID()
	server := d.waitStatus("demo", "demo ready", func(e statusEntry) bool { return e.State == "ready" }).PID
	if descendsFrom(daemon, bridge.Process.Pid) {
		t.Fatalf("the daemon (pid %d) is a descendant of the bridge that started it (pid %d)", daemon, bridge.Process.Pid)
	}

	victims := append(descendants(bridge.Process.Pid), bridge.Process.Pid)
	for _, p := range victims {
		syscall.Kill(p, syscall.SIGTERM)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, p := range victims {
		for pidAlive(p) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if pidAlive(p) {
			t.Fatalf("pid %d outlived SIGTERM", p)
		}
	}
	if got, err := echo(t, other, "still here"); err != nil || got != "still here" {
		t.Fatalf("the other client's session after the kill: %q, %v", got, err)
	}
	if now := d.daemonPID(); now != daemon {
		t.Fatalf("daemon pid %d after the kill; want the same daemon (pid %d)", now, daemon)
	}
	if now := d.waitStatus("demo", "demo ready", func(e statusEntry) bool { return e.State == "ready" }).PID; now != server {
		t.Fatalf("demo server pid %d after the kill; want the same process (pid %d)", now, server)
	}
}

// Each daemon appends to daemon.log: one that loses the lock writes its
// reason after the running one's lines, nothing is overwritten (no NUL
// bytes), a big log is rotated by the daemon that holds the lock, and the
// last line says why the daemon stopped.
func TestDaemonLogSurvivesItsWriters(t *testing.T) {
	d := newDaemonEnv(t)
	d.stopDetachedDaemon()
	logPath := filepath.Join(filepath.Dir(d.sock()), app.DaemonLogName)
	if err := os.MkdirAll(filepath.Dir(logPath), 0o700); err != nil {
		t.Fatal(err)
	}
	old := strings.Repeat("an old daemon's line\n", app.DaemonLogMax/20)
	writeFile(t, logPath, old)

	out, errOut, code := d.mcptray("daemon", "--detach")
	if code != 0 {
		t.Fatalf("daemon --detach: exit %d: %s", code, errOut)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(out))
	d.waitStatus("demo", "demo ready", func(e statusEntry) bool { return e.State == "ready" })
	if got := d.daemonPID(); got != pid {
		t.Fatalf("daemon --detach printed pid %d; the daemon answering is %d", pid, got)
	}
	if b, err := os.ReadFile(logPath + ".1"); err != nil || string(b) != old {
		t.Fatalf("the big log was not rotated intact to daemon.log.1 (%d bytes, %v)", len(b), err)
	}

	// A second --detach refuses up front, on its own stderr, and starts
	// nothing.
	if out, errOut, code := d.mcptray("daemon", "--detach"); code != 1 || !strings.Contains(errOut, fmt.Sprintf("a daemon is already running (pid %d)", pid)) ||
		!strings.Contains(errOut, "nothing was started") || out != "" {
		t.Fatalf("second daemon --detach: exit %d, stdout %q, stderr %q; want exit 1 naming pid %d and saying nothing was started", code, out, errOut, pid)
	}
	if pids := d.daemonPIDs(); len(pids) != 1 || pids[0] != pid {
		t.Fatalf("daemons after a refused --detach: %v, want only %d", pids, pid)
	}
	// A daemon that races it (started between that check and the lock)
	// loses the lock and says so in the log, after the first's lines.
	logw, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	racer := exec.Command(d.bin, "daemon")
	racer.Env, racer.Stdout, racer.Stderr = d.env, logw, logw
	if err := racer.Run(); err == nil {
		t.Fatal("a second daemon ran beside the first")
	}
	logw.Close()
	deadline := time.Now().Add(30 * time.Second)
	var log []byte
	for time.Now().Before(deadline) {
		log, _ = os.ReadFile(logPath)
		if bytes.Contains(log, []byte("already running")) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !bytes.Contains(log, []byte("already running")) {
		t.Fatalf("the second daemon's refusal is not in the log:\n%s", log)
	}
	// The running daemon writes on: a restart of demo logs a line.
	if _, errOut, code := d.mcptray("restart", "demo"); code != 0 {
		t.Fatalf("restart demo: %s", errOut)
	}
	d.waitStatus("demo", "demo ready", func(e statusEntry) bool { return e.State == "ready" })
	syscall.Kill(pid, syscall.SIGTERM)
	for pidAlive(pid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	log, _ = os.ReadFile(logPath)
	if bytes.IndexByte(log, 0) >= 0 {
		t.Fatalf("daemon.log has NUL bytes (a writer overwrote another's lines):\n%q", log)
	}
	text := string(log)
	start := strings.Index(text, fmt.Sprintf("pid %d,", pid))
	refused := strings.Index(text, "already running")
	if start < 0 || refused < start {
		t.Fatalf("want the running daemon's start line, then the refusal:\n%s", text)
	}
	lines := strings.Split(strings.TrimSpace(text), "\n")
	last := lines[len(lines)-1]
	if !strings.Contains(last, "stopped by signal SIGTERM") {
		t.Fatalf("the log's last line is %q; want the reason the daemon stopped", last)
	}
}
