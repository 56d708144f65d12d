package realclients

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mcptray/gateway"
)

// hasBridge reports whether the mcptray under test has `mcptray connect`,
// through which a client reaches the servers mcptray supervises.
func hasBridge(t *testing.T, mcptray string) bool {
	_, _, err := run(context.Background(), t.TempDir(), []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}, mcptray, "connect", "--help")
	return err == nil
}

// testThroughMcptray: `mcptray install --client X` (entries through
// mcptray, the default) over the direct entries of an earlier install says
// each switch, and the client reads back `/path/to/mcptray connect
// --config CFG NAME` for every server, stdio and remote alike, with none of
// the server's env, headers or URL; then `install --url`: the client reads
// back each server's URL on the local endpoint, and mcptray never prints
// the key.
func testThroughMcptray(t *testing.T, f *fixture, c *client) {
	h := f.newHome(t, c)
	h.mcptray("install", "--direct", "--client", c.id, "--config", h.cfg)
	out, warnings := h.mcptray("install", "--client", c.id, "--config", h.cfg)
	t.Logf("mcptray install --client %s:\n%sstderr:\n%s", c.id, out, warnings)
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
	bridge := hasBridge(t, f.mcptray)
	if !bridge {
		t.Logf("this mcptray has no `connect` yet: the clients' entries are read back, their connections not checked")
	}
	read := func() map[string]entry {
		if bridge {
			return h.entries(names(h.servers))
		}
		return h.c.entries(h) // asking again would not make them connect
	}
	got := read()
	for _, s := range h.servers {
		want := entry{transport: "stdio", command: exe, args: []string{"connect", "--config", h.cfg, s.name}, status: c.connected}
		checkGatewayEntry(t, c, s.name, want, got[s.name], bridge)
	}

	out, warnings = h.mcptray("install", "--url", "--client", c.id, "--config", h.cfg)
	t.Logf("mcptray install --url --client %s:\n%sstderr:\n%s", c.id, out, warnings)
	key, err := gateway.ReadKey(gateway.KeyPath(h.cfg))
	if err != nil {
		t.Fatalf("install --url made no key: %v", err)
	}
	if strings.Contains(out+warnings, key) {
		t.Errorf("mcptray install --url printed the local endpoint's key:\n%s%s", out, warnings)
	}
	if !strings.Contains(out, "→ through mcptray's local endpoint (http://127.0.0.1:") {
		t.Errorf("install --url does not say the switch:\n%s", out)
	}
	got = h.c.entries(h) // the endpoint is the daemon's: none runs here
	for _, s := range h.servers {
		want := entry{transport: "http", url: gateway.URL(gateway.DefaultPort, key, s.name)}
		checkGatewayEntry(t, c, s.name, want, got[s.name], false)
	}
}

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
