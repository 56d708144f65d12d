package realclients

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// testDesktopSession: the client runs with the variables of a desktop
// session (XDG_RUNTIME_DIR among them) while the daemon the desktop app
// started runs; whatever environment the client gives the bridges it
// starts (Codex keeps only HOME, PATH, SHELL, LANG and TERM), they reach
// that daemon: after the client exits, exactly one daemon runs for this
// person, the desktop one, with one process of the demo server.
func testDesktopSession(t *testing.T, f *fixture, c *client) {
	h := f.newHome(t, c)
	t.Cleanup(h.stopDaemon)
	writeFile(t, h.cfg, strings.ReplaceAll(serversTOML(h.servers), "autostart = false", "autostart = true"))
	writeFile(t, filepath.Join(h.dir, ".profile"), fmt.Sprintf("export %s=%s %s=%s\n", keyVar, f.key, tokenVar, f.token))
	runtimeDir := filepath.Join(h.dir, "run")
	if err := os.Mkdir(runtimeDir, 0o700); err != nil {
		t.Fatal(err)
	}
	shell := "/bin/sh"
	if _, err := os.Stat("/bin/bash"); err == nil {
		shell = "/bin/bash"
	}
	h.extraEnv = []string{"SHELL=" + shell, "XDG_RUNTIME_DIR=" + runtimeDir, "XDG_SESSION_TYPE=wayland", "XDG_CURRENT_DESKTOP=GNOME",
		"XDG_DATA_HOME=" + filepath.Join(h.dir, ".local", "share")}
	h.mcptray("install", "--per-server", "--client", c.id, "--config", h.cfg)

	out, _ := h.mcptray("daemon", "--detach", "--config", h.cfg)
	desktop, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		t.Fatalf("mcptray daemon --detach printed %q", out)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		status, _, _ := run2(h, "status")
		if m := daemonPID.FindStringSubmatch(status); m != nil && m[1] == strconv.Itoa(desktop) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the desktop daemon (pid %d) does not answer `mcptray status`:\n%s", desktop, status)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Another client's session, held while this client starts its
	// bridges and exits (opencode then ends every descendant of them).
	held := h.heldSession("demo")
	if got := echoText(t, held, "before"); got != "before" {
		t.Fatalf("the held session's echo: %q", got)
	}
	demo := processesOf(h.dir, f.mcptray, "serve-demo")

	got := h.entries(names(h.servers)) // the client starts every bridge, then exits
	for _, s := range h.servers {
		if got[s.name].status != c.connected {
			t.Errorf("%s: %s is %q, want %q", c.id, s.name, got[s.name].status, c.connected)
		}
	}
	if pids := daemonsOf(h.dir, f.mcptray); !slices.Equal(pids, []int{desktop}) {
		t.Errorf("after %s exited, the daemons of this person are %v; want only the desktop one (pid %d)", c.id, pids, desktop)
	}
	if now := processesOf(h.dir, f.mcptray, "serve-demo"); len(now) != 1 || !slices.Equal(now, demo) {
		t.Errorf("after %s exited, the demo server processes are %v; want the one that served before (%v)", c.id, now, demo)
	}
	if got := echoText(t, held, "still here"); got != "still here" {
		t.Errorf("after %s exited, the other client's session answers %q; want it to carry on", c.id, got)
	}
}

// heldSession is a go-sdk client's session with server name through
// `mcptray connect`, as another AI client would hold it; closed when the
// test ends.
func (h *home) heldSession(name string) *mcp.ClientSession {
	h.t.Helper()
	cmd := exec.Command(h.f.mcptray, "connect", "--config", h.cfg, name)
	cmd.Env, cmd.Dir = h.env(true), h.proj
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "held", Version: "1.0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		h.t.Fatalf("mcptray connect %s: %v", name, err)
	}
	h.t.Cleanup(func() { cs.Close() })
	return cs
}

// echoText calls the demo server's echo tool and returns its text.
func echoText(t *testing.T, cs *mcp.ClientSession, msg string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": msg}})
	if err != nil {
		return "error: " + err.Error()
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// run2 runs mcptray with h's environment and returns stdout, stderr and
// the error, without failing the test.
func run2(h *home, args ...string) (string, string, error) {
	return run(context.Background(), h.proj, h.env(true), h.f.mcptray, args...)
}

// daemonsOf are the pids of the `mcptray daemon` processes running with
// HOME=home.
func daemonsOf(home, mcptray string) []int { return processesOf(home, mcptray, "daemon") }
