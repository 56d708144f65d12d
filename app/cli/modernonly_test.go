//go:build unix

// Unix only: these run the built mcptray and its daemon as daemonEnv
// (daemon_test.go) does, ending processes with signals and finding the
// daemon by its Unix socket; the Windows daemon's named pipe and Job
// Objects are tested in control and supervisor.

package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// answering is a client that answers elicitation with who.
func answering(who string) *mcp.ClientOptions {
	return &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": who + ": " + r.Params.Message}}, nil
	}}
}

func askTool(t *testing.T, cs *mcp.ClientSession, msg string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"message": msg}})
	if err != nil {
		t.Fatalf("ask: %v", err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("ask: %d contents", len(res.Content))
	}
	return res.Content[0].(*mcp.TextContent).Text
}

// A server that speaks only 2026-07-28 is ready under the daemon, in the
// modern era, and status says how that was found; a 2025-11-25 client
// through `mcptray connect` and a 2026-07-28 client through the gateway's
// URL both use it, and the server's elicitation reaches each.
func TestModernOnlyServerUnderTheDaemon(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	d := newDaemonEnv(t)
	writeFile(t, d.cfg, fmt.Sprintf("[settings]\nprobe_interval = \"1s\"\n\n[servers.modern]\ncommand = %q\nenv = { MCPTRAY_TEST_SERVER = \"modern-only\" }\n", exe))
	d.startDaemon()
	d.waitStatus("modern", "modern ready", func(e statusEntry) bool { return e.State == "ready" })
	out, _, _ := d.mcptray("status", "--json")
	var list []struct {
		Name, Era, EraSource string
		Restarts             int
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 1 {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	if e := list[0]; e.Era != "modern" || !strings.Contains(e.EraSource, "initialize refused") || e.Restarts != 0 {
		t.Fatalf("status: era %q (%s), %d restarts", e.Era, e.EraSource, e.Restarts)
	}

	cmd := exec.Command(d.bin, "connect", "modern")
	cmd.Env = d.env
	var stderr syncBuffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	legacy, err := mcp.NewClient(&mcp.Implementation{Name: "legacy", Version: "1"}, answering("legacy")).Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("mcptray connect modern: %v\nstderr: %s", err, stderr.String())
	}
	defer legacy.Close()
	if v := legacy.InitializeResult().ProtocolVersion; v != "2025-11-25" {
		t.Fatalf("through connect: %s", v)
	}
	if got, err := echo(t, legacy, "hi"); err != nil || got != "hi" {
		t.Fatalf("echo through connect = %q, %v", got, err)
	}
	if got := askTool(t, legacy, "who?"); got != "accept legacy: who?" {
		t.Fatalf("ask through connect = %q", got)
	}

	modern, err := mcp.NewClient(&mcp.Implementation{Name: "modern", Version: "1"}, answering("modern")).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: d.gatewayURL("modern")}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatalf("the gateway's URL: %v", err)
	}
	defer modern.Close()
	if v := modern.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("through HTTP: %s", v)
	}
	if got := askTool(t, modern, "who?"); got != "accept modern: who?" {
		t.Fatalf("ask through HTTP = %q", got)
	}
	// Still the one process, never restarted.
	d.waitStatus("modern", "modern still ready", func(e statusEntry) bool { return e.State == "ready" && *e.Restarts == 0 })
}

// An error never repeats its own text: `mcptray call` of a server the
// daemon gave up on says why once.
func TestCallUnderTheDaemonSaysItOnce(t *testing.T) {
	d := newDaemonEnv(t)
	writeFile(t, d.cfg, "[servers.broken]\ncommand = \"/bin/sh\"\nargs = [\"-c\", \"echo boom on stderr >&2; exit 3\"]\n")
	d.startDaemon()
	d.waitStatus("broken", "broken given up on", func(e statusEntry) bool { return e.State == "crash-looping" })
	_, errOut, code := d.mcptray("call", "broken", "echo")
	if code == 0 {
		t.Fatalf("call of a crash-looping server succeeded")
	}
	if rep := repeatedRun(errOut, 30); rep != "" {
		t.Fatalf("the error repeats %q:\n%s", rep, errOut)
	}
	if !strings.Contains(errOut, "crash-looping") {
		t.Fatalf("the error does not say the server is crash-looping:\n%s", errOut)
	}
}

// repeatedRun returns a run of n characters that s holds twice, or "".
func repeatedRun(s string, n int) string {
	for i := 0; i+n <= len(s); i++ {
		if strings.Contains(s[i+n:], s[i:i+n]) {
			return s[i : i+n]
		}
	}
	return ""
}
