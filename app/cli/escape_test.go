//go:build linux

package cli

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The servers of these tests leave their process group the two usual ways:
// "escaper" starts `setsid sleep 1000 &` and then serves; "daemonizer"
// double-forks (setsid -f) and serves from the grandchild while its first
// process exits 0. Every process of theirs carries ESCAPE_MARK in its
// environment; the tests count the live ones in /proc.

// escapeConfig writes a config with both servers and returns its path and
// the mark.
func escapeConfig(t *testing.T, dir, bin string) (string, string) {
	t.Helper()
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid command")
	}
	var b [8]byte
	rand.Read(b[:])
	mark := hex.EncodeToString(b[:])
	cfg := filepath.Join(dir, "escape.toml")
	writeFile(t, cfg, fmt.Sprintf(`[settings]
probe_interval = "1s"

[servers.escaper]
command = "sh"
args = ["-c", "setsid sleep 1000 & exec %[1]s serve-demo"]
env = { ESCAPE_MARK = %[2]q }

[servers.daemonizer]
command = "sh"
args = ["-c", "setsid -f %[1]s serve-demo; exit 0"]
env = { ESCAPE_MARK = %[2]q }
`, bin, mark))
	return cfg, mark
}

// markedPIDs lists the live processes that carry the mark.
func markedPIDs(mark string) []int {
	want := []byte("ESCAPE_MARK=" + mark)
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !slices.ContainsFunc(bytes.Split(env, []byte{0}), func(kv []byte) bool { return bytes.Equal(kv, want) }) {
			continue
		}
		if processAlive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// waitMarkedPIDs waits until exactly n marked processes run; on timeout it
// kills them and fails.
func waitMarkedPIDs(t *testing.T, mark string, n int, what string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		pids := markedPIDs(mark)
		if len(pids) == n {
			return
		}
		if time.Now().After(deadline) {
			var desc []string
			for _, pid := range pids {
				cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
				desc = append(desc, fmt.Sprintf("%d %s", pid, bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})))
				syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("%s: %d processes carry the mark, want %d:\n%s", what, len(pids), n, strings.Join(desc, "\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The ready count: escaper's server and its sleep, daemonizer's daemon.
const escapeReady = 3

// TestCheckLeavesNoEscapedProcess: `mcptray check` reports both ready and
// leaves no process behind.
func TestCheckLeavesNoEscapedProcess(t *testing.T) {
	d := newDaemonEnv(t)
	cfg, mark := escapeConfig(t, d.dir, d.bin)
	out, errOut, code := d.mcptray("check", "--json", "--config", cfg)
	var list []struct {
		Name, Status, State, Reason string
		Diagnostics, StderrTail     []any
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("check --json (exit %d): %v\n%s%s", code, err, out, errOut)
	}
	for _, e := range list {
		if e.Status != "ready" {
			t.Errorf("%s: %s (%s %s) %v stderr %v", e.Name, e.Status, e.State, e.Reason, e.Diagnostics, e.StderrTail)
		}
	}
	if code != 0 || len(list) != 2 {
		t.Errorf("check: exit %d, %d servers\n%s", code, len(list), errOut)
	}
	waitMarkedPIDs(t, mark, 0, "after check")
}

// TestUpLeavesNoEscapedProcess: `mcptray up` and Ctrl-C.
func TestUpLeavesNoEscapedProcess(t *testing.T) {
	d := newDaemonEnv(t)
	cfg, mark := escapeConfig(t, d.dir, d.bin)
	up := startUp(t, d, cfg)
	up.waitReady(t, "escaper", "daemonizer")
	waitMarkedPIDs(t, mark, escapeReady, "ready under up")
	up.cmd.Process.Signal(syscall.SIGINT)
	if err := up.wait(); err != nil {
		t.Errorf("up: %v\n%s", err, up.stderr.String())
	}
	waitMarkedPIDs(t, mark, 0, "after up and SIGINT")
}

// TestDaemonLeavesNoEscapedProcess: `mcptray stop NAME` against the daemon,
// a reload that removes a server, and SIGTERM.
func TestDaemonLeavesNoEscapedProcess(t *testing.T) {
	d := newDaemonEnv(t)
	cfg, mark := escapeConfig(t, d.dir, d.bin)
	d.setConfig(cfg)
	r := d.startDaemon()
	for _, name := range []string{"escaper", "daemonizer"} {
		d.waitStatus(name, name+" ready", func(e statusEntry) bool { return e.State == "ready" })
	}
	waitMarkedPIDs(t, mark, escapeReady, "ready under the daemon")

	if out, errOut, code := d.mcptray("stop", "escaper"); code != 0 {
		t.Fatalf("stop escaper: exit %d\n%s%s", code, out, errOut)
	}
	waitMarkedPIDs(t, mark, 1, "after stop escaper") // the daemonizer's daemon
	if out, errOut, code := d.mcptray("stop", "daemonizer"); code != 0 {
		t.Fatalf("stop daemonizer: exit %d\n%s%s", code, out, errOut)
	}
	waitMarkedPIDs(t, mark, 0, "after stop daemonizer")

	for _, name := range []string{"escaper", "daemonizer"} {
		if out, errOut, code := d.mcptray("start", name); code != 0 {
			t.Fatalf("start %s: exit %d\n%s%s", name, code, out, errOut)
		}
	}
	waitMarkedPIDs(t, mark, escapeReady, "started again")
	// A reload that removes the escaper.
	b, _ := os.ReadFile(cfg)
	writeFile(t, cfg, string(b[:bytes.Index(b, []byte("[servers.escaper]"))])+string(b[bytes.Index(b, []byte("[servers.daemonizer]")):]))
	if out, errOut, code := d.mcptray("reload"); code != 0 {
		t.Fatalf("reload: exit %d\n%s%s", code, out, errOut)
	}
	waitMarkedPIDs(t, mark, 1, "after a reload removed the escaper")

	r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("daemon exit: %v\n%s", err, r.log())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("daemon did not stop")
	}
	waitMarkedPIDs(t, mark, 0, "after SIGTERM to the daemon")
	if recs, _ := filepath.Glob(filepath.Join(filepath.Dir(d.sock()), "procs", "*")); len(recs) != 0 {
		t.Errorf("record files left after a clean exit: %v", recs)
	}
}

// TestKilledEngineLeftoversCleaned: `mcptray up` or the daemon killed with
// SIGKILL leaves the escaped processes (the servers themselves die of
// Pdeathsig); the next daemon ends them before it starts its own servers.
func TestKilledEngineLeftoversCleaned(t *testing.T) {
	for _, victim := range []string{"up", "daemon"} {
		t.Run(victim, func(t *testing.T) {
			d := newDaemonEnv(t)
			cfg, mark := escapeConfig(t, d.dir, d.bin)
			var kill func()
			switch victim {
			case "up":
				up := startUp(t, d, cfg)
				up.waitReady(t, "escaper", "daemonizer")
				kill = func() { up.cmd.Process.Kill(); up.wait() }
			case "daemon":
				plain := d.cfg
				d.setConfig(cfg)
				r := d.startDaemon()
				for _, name := range []string{"escaper", "daemonizer"} {
					d.waitStatus(name, name+" ready", func(e statusEntry) bool { return e.State == "ready" })
				}
				d.setConfig(plain)
				kill = func() { r.cmd.Process.Kill(); <-r.done }
			}
			waitMarkedPIDs(t, mark, escapeReady, "ready")
			kill()
			// The sleep outlives it (the daemon may exit on its own once
			// its stdin is gone).
			deadline := time.Now().Add(5 * time.Second)
			for len(markedPIDs(mark)) > 1 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if n := len(markedPIDs(mark)); n == 0 {
				t.Fatal("nothing outlived the killed engine: the test proves nothing")
			}
			r := d.startDaemon() // its config has only the demo server
			d.waitStatus("demo", "demo ready", func(e statusEntry) bool { return e.State == "ready" })
			waitMarkedPIDs(t, mark, 0, "after a new daemon started")
			if !regexpLine(r.log(), `^mcptray daemon: ended [1-9]\d* process(es)? left running by mcptray pid \d+, which did not stop cleanly \(servers: escaper`) {
				t.Errorf("the new daemon did not say what it ended:\n%s", r.log())
			}
		})
	}
}

// setConfig points the daemon and the CLI at another config.
func (d *daemonEnv) setConfig(cfg string) {
	d.env = append(slices.DeleteFunc(slices.Clone(d.env), func(kv string) bool { return strings.HasPrefix(kv, "MCPTRAY_CONFIG=") }),
		"MCPTRAY_CONFIG="+cfg)
}

// runningUp is `mcptray up --json` in the background.
type runningUp struct {
	cmd    *exec.Cmd
	stderr lockedBuffer
	lines  chan map[string]any
	done   chan error
}

func startUp(t *testing.T, d *daemonEnv, cfg string) *runningUp {
	t.Helper()
	u := &runningUp{cmd: exec.Command(d.bin, "up", "--json", "--config", cfg), lines: make(chan map[string]any, 1000), done: make(chan error, 1)}
	u.cmd.Env = d.env
	u.cmd.Stderr = &u.stderr
	out, err := u.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := u.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var l map[string]any
			if json.Unmarshal(sc.Bytes(), &l) == nil {
				u.lines <- l
			}
		}
		close(u.lines)
		u.done <- u.cmd.Wait()
	}()
	t.Cleanup(func() { u.cmd.Process.Kill() })
	return u
}

func (u *runningUp) waitReady(t *testing.T, names ...string) {
	t.Helper()
	ready := map[string]bool{}
	timeout := time.After(30 * time.Second)
	for len(ready) < len(names) {
		select {
		case l, ok := <-u.lines:
			if !ok {
				t.Fatalf("up ended: %s", u.stderr.String())
			}
			if l["state"] == "ready" {
				ready[fmt.Sprint(l["server"])] = true
			}
		case <-timeout:
			t.Fatalf("ready: %v of %v; stderr: %s", ready, names, u.stderr.String())
		}
	}
}

func (u *runningUp) wait() error {
	for range u.lines {
	}
	select {
	case err := <-u.done:
		return err
	case <-time.After(30 * time.Second):
		return fmt.Errorf("mcptray up did not exit")
	}
}
