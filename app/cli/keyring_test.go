//go:build linux

package cli

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/demo"
)

// markedProcesses lists the processes whose environment holds mark, with
// their command lines: whatever a command started, however detached.
func markedProcesses(t *testing.T, mark string) []string {
	t.Helper()
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var found []string
	for _, d := range dirs {
		env, err := os.ReadFile(d + "/environ")
		if err != nil || !bytes.Contains(env, []byte(mark)) {
			continue
		}
		cmd, _ := os.ReadFile(d + "/cmdline")
		found = append(found, filepath.Base(d)+" "+strings.ReplaceAll(strings.TrimRight(string(cmd), "\x00"), "\x00", " "))
	}
	return found
}

// With gnome-keyring installed and no session bus (a service, CI, a
// headless box), the secret store never starts one: a remote server that
// needs no secret is ready within its start timeout, the file store is
// used and said so once, and no dbus-daemon (nor anything else) is left.
func TestKeyringWithoutASessionBus(t *testing.T) {
	for _, tool := range []string{"gnome-keyring-daemon", "dbus-launch"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not installed", tool)
			}
			t.Skipf("%s is not installed", tool)
		}
	}
	if _, err := os.Stat(fmt.Sprintf("/run/user/%d/bus", os.Getuid())); err == nil {
		t.Skip("this user has a systemd session bus: there is always a bus")
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return demo.NewServer("", nil) }, &mcp.StreamableHTTPOptions{Stateless: true})
	srv := httptest.NewServer(h)
	defer srv.Close()

	dir := t.TempDir()
	mark := "MCPTRAY_TEST_MARK=" + dir
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DBUS_SESSION_BUS_ADDRESS=") && !strings.HasPrefix(kv, "MCPTRAY_KEYRING=") {
			env = append(env, kv)
		}
	}
	env = append(append(env, homeEnv(dir)...), "XDG_DATA_HOME="+filepath.Join(dir, "data"), "XDG_RUNTIME_DIR="+filepath.Join(dir, "run"),
		"XDG_CACHE_HOME="+filepath.Join(dir, "cache"), mark)
	cfg := filepath.Join(dir, "servers.toml")
	writeFile(t, cfg, fmt.Sprintf("[settings]\nstartup_timeout = \"15s\"\n\n[servers.remote]\nurl = %q\n", srv.URL))
	t.Cleanup(func() {
		// Whatever the outcome, nothing of this test stays behind.
		for _, p := range markedProcesses(t, mark) {
			var pid int
			fmt.Sscan(p, &pid)
			if pid > 0 {
				if proc, err := os.FindProcess(pid); err == nil {
					proc.Kill()
				}
			}
		}
	})

	mcptrayBinary(t) // built before the clock starts
	start := time.Now()
	out, err := runWith(t, env, "", "check", "--config", cfg, "--json")
	took := time.Since(start)
	if err != nil || !strings.Contains(out, `"status": "ready"`) {
		t.Fatalf("check of a remote server without a session bus (%s): %v\n%s", took.Round(time.Millisecond), err, out)
	}
	if took > 15*time.Second {
		t.Fatalf("check took %s, past the server's start timeout", took)
	}
	out, err = runWith(t, env, "", "secret", "list")
	if err != nil || strings.Count(out, "no session bus") != 1 || !strings.Contains(out, filepath.Join(dir, "data")) {
		t.Fatalf("secret list without a session bus: %v\n%s", err, out)
	}
	if left := markedProcesses(t, mark); len(left) > 0 {
		t.Fatalf("processes left behind:\n%s", strings.Join(left, "\n"))
	}

	// A session bus that takes the connection and never answers: opening
	// the keyring gives up in time, and the file store is used.
	sock := filepath.Join(dir, "mute-bus")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never answered
		}
	}()
	muted := append(env, "DBUS_SESSION_BUS_ADDRESS=unix:path="+sock)
	start = time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, mcptrayBinary(t), "secret", "list")
	cmd.Env = muted
	b, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(b), "did not answer within") || time.Since(start) > 15*time.Second {
		t.Fatalf("secret list with a bus that never answers (%s): %v\n%s", time.Since(start).Round(time.Millisecond), err, b)
	}
}
