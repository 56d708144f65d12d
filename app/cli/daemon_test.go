//go:build unix

// Unix only: these run the built mcptray and its daemon as daemonEnv
// (daemon_test.go) does, ending processes with signals and finding the
// daemon by its Unix socket; the Windows daemon's named pipe and Job
// Objects are tested in control and supervisor.

package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"mcptray/control"
)

// daemonEnv is a scratch user: its own runtime, cache and home folders.
type daemonEnv struct {
	t   *testing.T
	bin string
	dir string
	cfg string
	env []string
}

func newDaemonEnv(t *testing.T) *daemonEnv {
	bin := mcptrayBinary(t)
	// Socket paths are limited to ~108 bytes: keep the folder short.
	dir, err := os.MkdirTemp("", "mtd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	cfg := filepath.Join(dir, "servers.toml")
	writeFile(t, cfg, fmt.Sprintf("[settings]\nprobe_interval = \"1s\"\n\n[servers.demo]\ncommand = %q\nargs = [\"serve-demo\"]\n", bin))
	env := append(os.Environ(), "XDG_RUNTIME_DIR="+filepath.Join(dir, "run"), "XDG_CACHE_HOME="+filepath.Join(dir, "cache"),
		"MCPTRAY_CONFIG="+cfg)
	env = append(env, homeEnv(dir)...)
	os.Mkdir(filepath.Join(dir, "run"), 0o700)
	return &daemonEnv{t: t, bin: bin, dir: dir, cfg: cfg, env: env}
}

// sock is the control socket of d's user: HOME is not the account's home,
// so its runtime folder is under HOME, whatever XDG_RUNTIME_DIR says.
func (d *daemonEnv) sock() string { return filepath.Join(d.dir, ".cache", "mcptray", "mcptray.sock") }

// mcptray runs one CLI command and returns its stdout, stderr and exit code.
func (d *daemonEnv) mcptray(args ...string) (string, string, int) {
	d.t.Helper()
	cmd := exec.Command(d.bin, args...)
	cmd.Env = d.env
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		d.t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// runningDaemon is `mcptray daemon` in the background.
type runningDaemon struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	stderr strings.Builder
	done   chan error    // the exit, once, for the test
	exited chan struct{} // closed at the exit, for the cleanup
}

func (r *runningDaemon) log() string { r.mu.Lock(); defer r.mu.Unlock(); return r.stderr.String() }

func (d *daemonEnv) startDaemon() *runningDaemon {
	d.t.Helper()
	r := &runningDaemon{cmd: exec.Command(d.bin, "daemon"), done: make(chan error, 1), exited: make(chan struct{})}
	r.cmd.Env = d.env
	pipe, err := r.cmd.StderrPipe()
	if err != nil {
		d.t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		d.t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			r.mu.Lock()
			r.stderr.WriteString(sc.Text() + "\n")
			r.mu.Unlock()
		}
		err := r.cmd.Wait()
		close(r.exited)
		r.done <- err
	}()
	d.t.Cleanup(func() {
		r.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-r.exited: // the test may have taken r.done
		case <-time.After(20 * time.Second):
			r.cmd.Process.Kill()
		}
	})
	return r
}

type statusEntry struct {
	Name, Status, State, Reason, Transport string
	PID                                    int
	Restarts                               *int
	Uptime                                 *float64 `json:"uptimeSeconds"`
	Tools                                  []struct{ Name string }
	ServerInfo                             *struct{ Name string }
	Diagnostics, StderrTail                []any
}

// status polls `mcptray status --json` until cond holds for server name.
func (d *daemonEnv) waitStatus(name, what string, cond func(statusEntry) bool) statusEntry {
	d.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		out, errOut, code := d.mcptray("status", "--json")
		last = out + errOut
		if code == 0 {
			var list []statusEntry
			if err := json.Unmarshal([]byte(out), &list); err != nil {
				d.t.Fatalf("status --json is not JSON: %v\n%s", err, out)
			}
			for _, e := range list {
				if e.Name == name && cond(e) {
					return e
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	d.t.Fatalf("timed out waiting for %s; last status:\n%s", what, last)
	return statusEntry{}
}

// pidAlive reports whether pid runs. A zombie has ended: whoever it was
// re-parented to reaps it when it gets to it.
func pidAlive(pid int) bool {
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // no /proc: kill(0) is all there is
	}
	if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) && b[i+2] == 'Z' {
		return false
	}
	return true
}

// TestDaemonRoundTrip runs `mcptray daemon` as a user would and drives it
// with the CLI over the real socket: status, restart (new pid), logs,
// reload, stop; a second daemon refused; permissions; no process left.
func TestDaemonRoundTrip(t *testing.T) {
	d := newDaemonEnv(t)
	if _, errOut, code := d.mcptray("status"); code != 1 || !strings.Contains(errOut, "no daemon running; start it with `mcptray daemon` or `mcptray service install`") {
		t.Fatalf("status without a daemon: exit %d, %q", code, errOut)
	}
	r := d.startDaemon()
	ready := d.waitStatus("demo", "demo ready", func(e statusEntry) bool { return e.State == "ready" && e.PID > 0 })
	if ready.Status != "ready" || ready.Transport != "stdio" || ready.Restarts == nil || *ready.Restarts != 0 || ready.Uptime == nil ||
		len(ready.Tools) != 3 || ready.ServerInfo == nil || ready.ServerInfo.Name != "mcptray-demo" || ready.Diagnostics == nil {
		t.Errorf("status --json entry: %+v", ready)
	}
	pid := ready.PID

	t.Run("permissions", func(t *testing.T) {
		for path, want := range map[string]os.FileMode{filepath.Dir(d.sock()): 0o700 | os.ModeDir, d.sock(): 0o600 | os.ModeSocket} {
			fi, err := os.Lstat(path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode() != want {
				t.Errorf("%s: %v, want %v", path, fi.Mode(), want)
			}
		}
	})

	t.Run("status table", func(t *testing.T) {
		out, _, code := d.mcptray("status")
		if code != 0 || !strings.Contains(out, "NAME") || !regexpLine(out, `^demo\s+ready\s+`+strconv.Itoa(pid)+`\s`) {
			t.Errorf("status: exit %d\n%s", code, out)
		}
		if _, errOut, code := d.mcptray("status", "nope"); code != 2 || !strings.Contains(errOut, `no server named "nope"`) {
			t.Errorf("status nope: %d %q", code, errOut)
		}
	})

	t.Run("second daemon refused", func(t *testing.T) {
		_, errOut, code := d.mcptray("daemon")
		if code != 1 || !strings.Contains(errOut, d.sock()) || !strings.Contains(errOut, fmt.Sprintf("pid %d", r.cmd.Process.Pid)) {
			t.Errorf("second daemon: exit %d, %q", code, errOut)
		}
	})

	t.Run("restart gives a new pid", func(t *testing.T) {
		out, errOut, code := d.mcptray("restart", "demo")
		if code != 0 || !strings.Contains(out, fmt.Sprintf("pid %d → ", pid)) {
			t.Fatalf("restart: exit %d\n%s%s", code, out, errOut)
		}
		e := d.waitStatus("demo", "demo ready again", func(e statusEntry) bool { return e.State == "ready" })
		if e.PID == pid || e.PID == 0 || *e.Restarts != 1 {
			t.Errorf("after restart: pid %d (was %d), restarts %d", e.PID, pid, *e.Restarts)
		}
		if pidAlive(pid) {
			t.Errorf("old pid %d still alive", pid)
		}
		pid = e.PID
	})

	t.Run("logs", func(t *testing.T) {
		out, _, code := d.mcptray("logs", "demo")
		if code != 0 || strings.Count(out, "mcptray demo server 1.0.0 ready on stdio") != 2 {
			t.Errorf("logs: exit %d\n%s", code, out)
		}
		out, _, _ = d.mcptray("logs", "demo", "-n", "1", "-t")
		if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 1 || !strings.HasSuffix(lines[0], "ready on stdio") {
			t.Errorf("logs -n 1 -t: %q", out)
		}
		if _, errOut, code := d.mcptray("logs", "nope"); code != 1 || !strings.Contains(errOut, "no such server") {
			t.Errorf("logs nope: %d %q", code, errOut)
		}
		// -f prints lines as they come: restart and see the new banner.
		cmd := exec.Command(d.bin, "logs", "-f", "-n", "0", "demo")
		cmd.Env = d.env
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { cmd.Process.Signal(syscall.SIGINT); cmd.Wait() }()
		lines := make(chan string, 100)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		// Every line so far (two starts), then a restart's: a third banner.
		banners := 0
		timeout := time.After(30 * time.Second)
		for banners < 3 {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatal("logs -f ended")
				}
				if strings.Contains(l, "ready on stdio") {
					banners++
					if banners == 2 {
						d.mcptray("restart", "--no-wait", "demo")
					}
				}
			case <-timeout:
				t.Fatalf("logs -f showed %d banners, want 3", banners)
			}
		}
		pid = d.waitStatus("demo", "demo ready", func(e statusEntry) bool { return e.State == "ready" && e.PID != pid }).PID
	})

	t.Run("reload", func(t *testing.T) {
		cfg, _ := os.ReadFile(d.cfg)
		writeFile(t, d.cfg, string(cfg)+fmt.Sprintf("\n[servers.second]\ncommand = %q\nargs = [\"serve-demo\"]\n", d.bin))
		out, errOut, code := d.mcptray("reload")
		if code != 0 || !strings.Contains(out, "2 servers") {
			t.Fatalf("reload: exit %d\n%s%s", code, out, errOut)
		}
		d.waitStatus("second", "second ready", func(e statusEntry) bool { return e.State == "ready" })
		if e := d.waitStatus("demo", "demo", func(statusEntry) bool { return true }); e.PID != pid {
			t.Errorf("unchanged server restarted by reload: pid %d → %d", pid, e.PID)
		}
		writeFile(t, d.cfg, "[servers.demo\n")
		if _, errOut, code := d.mcptray("reload"); code != 1 || !strings.Contains(errOut, "nothing was changed") {
			t.Errorf("broken reload: exit %d %q", code, errOut)
		}
		writeFile(t, d.cfg, string(cfg))
		if _, _, code := d.mcptray("reload"); code != 0 {
			t.Errorf("reload back: %d", code)
		}
	})

	t.Run("stop and start", func(t *testing.T) {
		out, errOut, code := d.mcptray("stop", "demo")
		if code != 0 || !strings.Contains(out, "demo: stopped") {
			t.Fatalf("stop: exit %d\n%s%s", code, out, errOut)
		}
		if pidAlive(pid) {
			t.Errorf("pid %d alive after stop", pid)
		}
		d.waitStatus("demo", "demo stopped", func(e statusEntry) bool { return e.State == "stopped" && e.PID == 0 })
		out, _, code = d.mcptray("start", "demo")
		if code != 0 || !strings.Contains(out, "demo: started, ready (pid ") {
			t.Errorf("start: exit %d %q", code, out)
		}
		if _, errOut, code := d.mcptray("stop", "nope"); code != 2 || !strings.Contains(errOut, `no server named "nope"`) {
			t.Errorf("stop nope: %d %q", code, errOut)
		}
	})

	// SIGTERM: the daemon stops every server and exits 0; nothing is left.
	e := d.waitStatus("demo", "demo ready", func(e statusEntry) bool { return e.State == "ready" })
	r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("daemon exit: %v\n%s", err, r.log())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("daemon did not stop")
	}
	if pidAlive(e.PID) {
		t.Errorf("server pid %d survives the daemon", e.PID)
	}
	if left := pidsWith(d.dir); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
	if _, err := os.Stat(d.sock()); !os.IsNotExist(err) {
		t.Errorf("socket left: %v", err)
	}
	if log := r.log(); !strings.Contains(log, "listening on "+d.sock()) || !strings.Contains(log, "demo") {
		t.Errorf("daemon log:\n%s", log)
	}
}

// TestDaemonReplacesStaleSocket kills a daemon (SIGKILL: no cleanup) and
// starts another: it replaces the socket left behind. The first daemon's
// servers die with it (Pdeathsig), so nothing is orphaned.
func TestDaemonReplacesStaleSocket(t *testing.T) {
	d := newDaemonEnv(t)
	r := d.startDaemon()
	pid := d.waitStatus("demo", "demo ready", func(e statusEntry) bool { return e.State == "ready" }).PID
	r.cmd.Process.Kill()
	<-r.done
	if _, err := os.Lstat(d.sock()); err != nil {
		t.Fatalf("a killed daemon should leave its socket: %v", err)
	}
	if _, errOut, code := d.mcptray("status"); code != 1 || !strings.Contains(errOut, "no daemon running") {
		t.Errorf("status with a stale socket: %d %q", code, errOut)
	}
	deadline := time.Now().Add(10 * time.Second)
	for pidAlive(pid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if pidAlive(pid) {
		t.Errorf("server pid %d orphaned by a killed daemon", pid)
	}
	r2 := d.startDaemon()
	d.waitStatus("demo", "demo ready under the new daemon", func(e statusEntry) bool { return e.State == "ready" })
	if !strings.Contains(r2.log(), "replaced a stale control socket") {
		t.Errorf("new daemon log:\n%s", r2.log())
	}
}

// TestDaemonFollowsSymlinkedConfig: servers.toml is a link into a dotfiles
// folder. The daemon applies the target's edits (appended, replaced by
// rename), says in `status` when the file does not load, and keeps
// following after the config folder is deleted and made again.
func TestDaemonFollowsSymlinkedConfig(t *testing.T) {
	d := newDaemonEnv(t)
	entry := func(name string) string {
		return fmt.Sprintf("\n[servers.%s]\ncommand = \"true\"\nautostart = false\n", name)
	}
	dots := filepath.Join(d.dir, "dotfiles")
	os.Mkdir(dots, 0o700)
	target := filepath.Join(dots, "servers.toml")
	writeFile(t, target, entry("a"))
	cfgDir := filepath.Join(d.dir, "config")
	os.Mkdir(cfgDir, 0o700)
	link := filepath.Join(cfgDir, "servers.toml")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	d.env = append(d.env, "MCPTRAY_CONFIG="+link)
	d.startDaemon()
	present := func(name string) { d.waitStatus(name, name+" in the daemon", func(statusEntry) bool { return true }) }
	present("a")

	f, err := os.OpenFile(target, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(entry("b"))
	f.Close()
	present("b")

	replace := func(path, text string) {
		tmp := path + ".tmp"
		writeFile(t, tmp, text)
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	replace(target, entry("a")+entry("c"))
	present("c")

	// A file that does not load: status says where, and the servers stay.
	replace(target, entry("a")+entry("c")+"\n[servers.broken\n")
	deadline := time.Now().Add(30 * time.Second)
	var out, errOut string
	for time.Now().Before(deadline) {
		out, errOut, _ = d.mcptray("status")
		if strings.Contains(out, "config does not load: "+link+":") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !regexpLine(out, `^config does not load: `+regexp.QuoteMeta(link)+`:\d+:\d+: .*table name`) || !regexpLine(out, `^c\s+stopped`) {
		t.Errorf("status with a broken config:\n%s%s", out, errOut)
	}
	if _, errOut, _ := d.mcptray("status", "--json"); !strings.Contains(errOut, "config does not load: "+link+":") {
		t.Errorf("status --json stderr: %q", errOut)
	}

	// The folder with the link deleted, then made again with a new file.
	if err := os.RemoveAll(cfgDir); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(cfgDir, 0o700)
	writeFile(t, link, entry("d"))
	present("d")
	if out, _, _ := d.mcptray("status"); strings.Contains(out, "does not load") {
		t.Errorf("status after the fix still reports a problem:\n%s", out)
	}
}

// TestDaemonShutdownOverTheSocket: POST /v1/shutdown (the tray's "Stop all
// servers and quit") makes the daemon stop every server and exit 0, and
// the bridges of connected clients end rather than start another daemon.
func TestDaemonShutdownOverTheSocket(t *testing.T) {
	d := newDaemonEnv(t)
	r := d.startDaemon()
	e := d.waitStatus("demo", "demo ready", func(e statusEntry) bool { return e.State == "ready" && e.PID > 0 })
	cs := d.connectClient("demo", "client")
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	c, err := control.Dial(context.Background(), &control.ClientOptions{Socket: d.sock()})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Shutdown(context.Background()); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("daemon exit after shutdown: %v\n%s", err, r.log())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("daemon did not stop after shutdown")
	}
	if pidAlive(e.PID) {
		t.Errorf("server pid %d survives the shutdown", e.PID)
	}
	// The bridge ends the client's session instead of starting a daemon.
	ended := make(chan error, 1)
	go func() { ended <- cs.Wait() }()
	select {
	case <-ended:
	case <-time.After(30 * time.Second):
		t.Fatal("the bridge did not end after the daemon was stopped on request")
	}
	if _, err := control.Dial(context.Background(), &control.ClientOptions{Socket: d.sock()}); !errors.Is(err, control.ErrNoDaemon) {
		t.Errorf("after the stop a daemon answers again (%v): a bridge started one", err)
	}
	if left := pidsWith(d.dir); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
	if log := r.log(); !strings.Contains(log, "stopped as asked over the control API") {
		t.Errorf("daemon log does not say why it stopped:\n%s", log)
	}
}
