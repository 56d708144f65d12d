//go:build unix

// Unix only: these run the built mcptray and its daemon as daemonEnv
// (daemon_test.go) does, ending processes with signals and finding the
// daemon by its Unix socket; the Windows daemon's named pipe and Job
// Objects are tested in control and supervisor.

package cli

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/gateway"
	"mcptray/registry/clients"
)

// exportedURL is the URL `mcptray export --url` writes for server name
// (key revealed), with its stderr and exit code.
func (d *daemonEnv) exportedURL(name string) (string, string, int) {
	d.t.Helper()
	out, errOut, code := d.mcptray("export", "--client", "cursor", "--url", "--reveal-secrets", name)
	if code != 0 {
		return "", errOut, code
	}
	c, _ := clients.Lookup("cursor")
	u, _ := exported(d.t, c, out)[name]["url"].(string)
	return u, errOut, code
}

func urlPort(t *testing.T, u string) int {
	t.Helper()
	_, rest, ok := strings.Cut(u, "http://127.0.0.1:")
	p, err := strconv.Atoi(strings.SplitN(rest, "/", 2)[0])
	if !ok || err != nil {
		t.Fatalf("%q is not a local endpoint URL", u)
	}
	return p
}

// The local endpoint's port is picked once per person outside every
// system's ephemeral range and kept. With it held by another program,
// `export --url` refuses while no daemon runs; a daemon started then
// listens on another port, and `export --url` and `mcptray gateway` both
// name that one, where a client reaches the server.
func TestGatewayPortPickedAndHeld(t *testing.T) {
	d := newDaemonEnv(t)
	u, errOut, code := d.exportedURL("demo")
	if code != 0 {
		t.Fatalf("export --url: exit %d: %s", code, errOut)
	}
	picked := urlPort(t, u)
	if picked < 20000 || picked > 32767 {
		t.Fatalf("the picked port %d is not outside the ephemeral ranges (32768-60999 on Linux, 49152-65535 elsewhere)", picked)
	}
	kept, err := os.ReadFile(gateway.PortPath(d.cfg))
	if err != nil || strings.TrimSpace(string(kept)) != strconv.Itoa(picked) {
		t.Fatalf("gateway.port holds %q (%v); want %d", kept, err, picked)
	}
	if again, _, _ := d.exportedURL("demo"); urlPort(t, again) != picked {
		t.Fatalf("a second export names port %d; want the kept %d", urlPort(t, again), picked)
	}

	held, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(picked)))
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if _, errOut, code := d.exportedURL("demo"); code == 0 || !strings.Contains(errOut, fmt.Sprintf("port %d", picked)) || !strings.Contains(errOut, "in use by another program") {
		t.Fatalf("export --url with the port held and no daemon: exit %d; want a refusal that says why:\n%s", code, errOut)
	}

	d.startDaemon()
	d.waitStatus("demo", "demo ready", func(e statusEntry) bool { return e.State == "ready" })
	gi := d.gatewayInfo()
	if gi.Port == picked || gi.Port == 0 {
		t.Fatalf("the daemon reports port %d with %d held (problem: %s)", gi.Port, picked, gi.Problem)
	}
	u, errOut, code = d.exportedURL("demo")
	if code != 0 || urlPort(t, u) != gi.Port {
		t.Fatalf("export --url under the daemon: exit %d, url port %d; want the daemon's %d\n%s", code, urlPort(t, u), gi.Port, errOut)
	}
	if !strings.Contains(errOut, fmt.Sprintf("port %d was taken", picked)) {
		t.Errorf("export --url says nothing of the moved port:\n%s", errOut)
	}
	if gu := d.gatewayURL("demo"); gu != u {
		t.Fatalf("mcptray gateway says %s, export wrote %s", gu, u)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "url-entry"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: u}, nil)
	if err != nil {
		t.Fatalf("a client at the exported URL: %v", err)
	}
	defer cs.Close()
	if got, err := echo(t, cs, "by url"); err != nil || got != "by url" {
		t.Fatalf("echo at the exported URL = %q, %v", got, err)
	}
}
