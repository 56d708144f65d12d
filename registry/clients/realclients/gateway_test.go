package realclients

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"mcptray/registry"
)

// testThroughMcptray: `mcptray install --client X` (entries through
// mcptray, the default) over the direct entries of an earlier install says
// each switch, and the client reads back `/path/to/mcptray connect
// --config CFG NAME` for every server, stdio and remote alike, with none of
// the server's env, headers or URL, and connects to each through the daemon
// the first bridge starts; then `install --url`: the client reads back each
// server's URL on the local endpoint (not its connection: the daemons of
// the clients tested at once share the default port, so all but one listen
// on another), and mcptray never prints the key.
func testThroughMcptray(t *testing.T, f *fixture, c *client) {
	h := f.newHome(t, c)
	t.Cleanup(h.stopDaemon)
	// mcptray runs the servers now, so mcptray resolves their references:
	// the daemon a bridge starts reads the login shell's environment, where
	// a person keeps such variables (Codex and Gemini CLI do not pass these
	// on to the bridge they start).
	writeFile(t, h.cfg, strings.ReplaceAll(serversTOML(h.servers), "autostart = false", "autostart = true"))
	writeFile(t, filepath.Join(h.dir, ".profile"), fmt.Sprintf("export %s=%s %s=%s\n", keyVar, f.key, tokenVar, f.token))
	shell := "/bin/sh"
	if _, err := os.Stat("/bin/bash"); err == nil {
		shell = "/bin/bash"
	}
	h.extraEnv = []string{"SHELL=" + shell}
	h.mcptray("install", "--direct", "--client", c.id, "--config", h.cfg)
	out, warnings := h.mcptray("install", "--per-server", "--client", c.id, "--config", h.cfg)
	t.Logf("mcptray install --per-server --client %s:\n%sstderr:\n%s", c.id, out, warnings)
	exe, err := filepath.EvalSymlinks(f.mcptray)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range h.servers {
		want := fmt.Sprintf("→ through mcptray (mcptray connect --config %s %s)", h.cfg, s.name)
		if !strings.Contains(out, s.name+": direct entry (") || !strings.Contains(out, want) {
			t.Errorf("install does not say that %s switches (want %q)", s.name, want)
		}
	}
	got := h.entries(names(h.servers))
	for _, s := range h.servers {
		want := entry{transport: "stdio", command: exe, args: []string{"connect", "--config", h.cfg, s.name}, status: c.connected}
		checkGatewayEntry(t, c, s.name, want, got[s.name], true)
	}

	out, warnings = h.mcptray("install", "--url", "--client", c.id, "--config", h.cfg)
	t.Logf("mcptray install --url --client %s:\n%sstderr:\n%s", c.id, out, warnings)
	data, err := os.ReadFile(filepath.Join(filepath.Dir(h.cfg), "gateway.key"))
	if err != nil {
		t.Fatalf("install --url made no key beside servers.toml: %v", err)
	}
	key := strings.TrimSpace(string(data))
	if strings.Contains(out+warnings, key) {
		t.Errorf("mcptray install --url printed the local endpoint's key:\n%s%s", out, warnings)
	}
	if !strings.Contains(out, "→ through mcptray's local endpoint (http://127.0.0.1:") {
		t.Errorf("install --url does not say the switch:\n%s", out)
	}
	got = h.c.entries(h) // the endpoint is the daemon's: none runs here
	for _, s := range h.servers {
		e := got[s.name]
		if name, k, ok := registry.LocalEndpoint(e.url); !ok || name != s.name || k != key {
			t.Errorf("%s: %s holds the URL %q, want %s's on mcptray's local endpoint with the key of gateway.key", c.id, s.name, e.url, s.name)
		}
		checkGatewayEntry(t, c, s.name, entry{transport: "http", url: e.url}, e, false)
	}
}

// stopDaemon ends the daemon the clients' bridges started, if any, and
// with it the servers it runs.
func (h *home) stopDaemon() {
	out, _, err := run(context.Background(), h.proj, h.env(false), h.f.mcptray, "status")
	m := daemonPID.FindStringSubmatch(out)
	if err != nil || m == nil {
		return // none runs
	}
	pid, _ := strconv.Atoi(m[1])
	if !endProcess(pid, 30*time.Second) {
		h.t.Errorf("the daemon the bridges started (pid %d) did not stop", pid)
	}
	if h.t.Failed() {
		logs, _ := filepath.Glob(filepath.Join(h.dir, "*", "mcptray", "daemon.log"))
		for _, l := range logs {
			if data, err := os.ReadFile(l); err == nil {
				h.t.Logf("%s:\n%s", l, data)
			}
		}
	}
}

// daemonPID finds the daemon's pid in `mcptray status`.
var daemonPID = regexp.MustCompile(`(?m)^daemon pid ([0-9]+),`)

// checkGatewayEntry compares what the client holds for name with want, and
// that it holds nothing of the server's own (env, headers, forwarded
// variables); the status only when connected is true.
func checkGatewayEntry(t *testing.T, c *client, name string, want, got entry, connected bool) {
	t.Helper()
	if !connected {
		got.status, want.status = "", ""
	}
	if got.command != "" && want.command != "" && !filepath.IsAbs(got.command) {
		t.Errorf("%s: %s runs %q, not an absolute path", c.id, name, got.command)
	}
	if fmt.Sprintf("%s %s %q %s %s", got.transport, got.command, got.args, got.url, got.status) !=
		fmt.Sprintf("%s %s %q %s %s", want.transport, want.command, want.args, want.url, want.status) ||
		len(got.env)+len(got.headers)+len(got.envVars) > 0 || got.bearerVar != "" {
		t.Errorf("%s: %s holds\n  %v\nwant\n  %v", c.id, name, got, want)
	}
}

// testOneEntry: `mcptray install --client X` writes the one entry
// `mcptray` (every server of the default profile as one MCP server); the
// client lists it, running `mcptray connect --config CFG`, and connects to
// it through the daemon the bridge starts.
func testOneEntry(t *testing.T, f *fixture, c *client) {
	h := f.newHome(t, c)
	t.Cleanup(h.stopDaemon)
	writeFile(t, h.cfg, strings.ReplaceAll(serversTOML(h.servers), "autostart = false", "autostart = true"))
	writeFile(t, filepath.Join(h.dir, ".profile"), fmt.Sprintf("export %s=%s %s=%s\n", keyVar, f.key, tokenVar, f.token))
	out, warnings := h.mcptray("install", "--client", c.id, "--config", h.cfg)
	t.Logf("mcptray install --client %s:\n%sstderr:\n%s", c.id, out, warnings)
	exe, err := filepath.EvalSymlinks(f.mcptray)
	if err != nil {
		t.Fatal(err)
	}
	got := h.entries([]string{"mcptray"})
	want := entry{transport: "stdio", command: exe, args: []string{"connect", "--config", h.cfg}, status: c.connected}
	checkGatewayEntry(t, c, "mcptray", want, got["mcptray"], true)
	for _, s := range h.servers {
		if _, ok := got[s.name]; ok {
			t.Errorf("%s lists %s beside the one entry", c.id, s.name)
		}
	}
}
