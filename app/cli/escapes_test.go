//go:build unix

// Unix only: these run the built mcptray and its daemon as daemonEnv
// (daemon_test.go) does, ending processes with signals and finding the
// daemon by its Unix socket; the Windows daemon's named pipe and Job
// Objects are tested in control and supervisor.

package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// escapesConfig is a config with a server whose name, version, tool, stdout
// banner and stderr carry terminal escapes, and one that writes them to
// stderr and dies.
func escapesConfig(t *testing.T) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf(`
[servers.evil]
command = %[1]q
env = { MCPTRAY_TEST_SERVER = "escapes", GORACE = "atexit_sleep_ms=0" }

[servers.crash]
command = %[1]q
env = { MCPTRAY_TEST_SERVER = "escapes-crash", GORACE = "atexit_sleep_ms=0" }
restart = "never"
`, exe)
}

// TestEscapesAreShownNotObeyed: what servers send reaches the terminal with
// its escapes made visible in check, status, up and logs, and as it was in
// --json.
func TestEscapesAreShownNotObeyed(t *testing.T) {
	d := newDaemonEnv(t)
	writeFile(t, d.cfg, escapesConfig(t))
	shown := `\x1b]52;c;ZXZpbA==\x07`

	t.Run("check", func(t *testing.T) {
		out, errOut, code := d.mcptray("check", "--timeout", "20s")
		if code != 1 || raw(out+errOut) || !strings.Contains(out, "evil"+shown) || !strings.Contains(out, `dying `+shown+`\x1b[2J\x1b[31m`) {
			t.Errorf("check: exit %d\n%q\n%q", code, out, errOut)
		}
		out, _, _ = d.mcptray("check", "--json", "--timeout", "20s")
		var reps []serverReport
		if err := json.Unmarshal([]byte(out), &reps); err != nil {
			t.Fatalf("check --json: %v\n%s", err, out)
		}
		if raw(out) || !strings.Contains(out, `\u001b]52;c;ZXZpbA==\u0007`) {
			t.Errorf("check --json does not escape the escapes:\n%s", out)
		}
		evil := reps[0]
		if evil.ServerInfo == nil || evil.ServerInfo.Name != "evil"+osc52 || len(evil.Tools) != 1 || evil.Tools[0].Description != "tool "+osc52+clear2 {
			t.Errorf("check --json changed what the server sent: %+v", evil)
		}
	})

	t.Run("daemon", func(t *testing.T) {
		d.startDaemon()
		d.waitStatus("evil", "evil ready", func(e statusEntry) bool { return e.State == "ready" })
		d.waitStatus("crash", "crash stopped", func(e statusEntry) bool { return e.State == "stopped" && len(e.StderrTail) > 0 })
		out, errOut, code := d.mcptray("status")
		if code != 0 || raw(out+errOut) || !strings.Contains(out, "crash") {
			t.Errorf("status: exit %d\n%q", code, out)
		}
		for _, name := range []string{"evil", "crash"} {
			out, errOut, code := d.mcptray("logs", "-t", name)
			if code != 0 || raw(out+errOut) || !strings.Contains(out, shown) {
				t.Errorf("logs %s: exit %d\n%q", name, code, out)
			}
		}
	})

	t.Run("up", func(t *testing.T) {
		cmd := exec.Command(d.bin, "up", "--config", d.cfg)
		cmd.Env = d.env
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var all strings.Builder
		sc := bufio.NewScanner(stdout)
		deadline := time.AfterFunc(30*time.Second, func() { cmd.Process.Kill() })
		defer deadline.Stop()
		for sc.Scan() {
			all.WriteString(sc.Text() + "\n")
			if strings.Contains(all.String(), "evil   ready") && strings.Contains(all.String(), "crash  stopped") {
				break
			}
		}
		cmd.Process.Signal(syscall.SIGINT)
		for sc.Scan() {
			all.WriteString(sc.Text() + "\n")
		}
		cmd.Wait()
		if out := all.String(); raw(out) || !strings.Contains(out, "ready          evil"+shown+` 1\x1b[31m\x1b[2J ready`) {
			t.Errorf("up:\n%q", out)
		}
	})
}

// raw reports terminal control bytes left in out.
func raw(out string) bool { return strings.ContainsAny(out, "\x1b\x07\u009b") }

// TestJSONOutputEscapesControls: --json keeps a server's text, escaped,
// including what encoding/json alone leaves raw (DEL, C1 such as CSI).
func TestJSONOutputEscapesControls(t *testing.T) {
	in := "esc\x1b[2J del\x7f csi\u009b31m é 日本"
	var b bytes.Buffer
	writeJSON(&b, map[string]string{"s": in})
	out := b.String()
	if raw(out) || bytes.ContainsAny(b.Bytes(), "\x7f") {
		t.Errorf("raw controls in %q", out)
	}
	var back map[string]string
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || back["s"] != in {
		t.Errorf("round trip: %q, %v", back["s"], err)
	}
}
