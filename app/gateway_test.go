//go:build unix

package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/control"
)

// referenceServer builds the go-sdk's conformance everything-server (the
// module mcptray depends on ships it).
func referenceServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "everything-server")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/modelcontextprotocol/go-sdk/conformance/everything-server").CombinedOutput()
	if err != nil {
		t.Fatalf("building the go-sdk's everything-server: %v\n%s", err, out)
	}
	return bin
}

// gatewayInfo asks the daemon for its gateway, URLs revealed.
func (d *daemonEnv) gatewayInfo() control.GatewayInfo {
	d.t.Helper()
	out, errOut, code := d.mcptray("gateway", "--json", "--reveal")
	if code != 0 {
		d.t.Fatalf("mcptray gateway: exit %d\n%s", code, errOut)
	}
	var gi control.GatewayInfo
	if err := json.Unmarshal([]byte(out), &gi); err != nil {
		d.t.Fatalf("gateway --json: %v\n%s", err, out)
	}
	return gi
}

func (d *daemonEnv) gatewayURL(name string) string {
	for _, s := range d.gatewayInfo().Servers {
		if s.Name == name {
			if s.URL == "" {
				d.t.Fatalf("server %s has no URL (the endpoint is off?)", name)
			}
			return s.URL
		}
	}
	d.t.Fatalf("the gateway lists no server %s", name)
	return ""
}

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// runServerSuite runs the conformance suite's server scenarios against url
// and returns the passed and total counts.
func runServerSuite(t *testing.T, node, suite, url string) (passed, total int, out string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	b, _ := exec.CommandContext(ctx, node, suite, "server", "--url", url).CombinedOutput()
	out = string(b)
	i := strings.LastIndex(out, "Total: ")
	if i < 0 {
		t.Fatalf("the suite printed no total:\n%s", tail(out, 40))
	}
	var failed int
	fmt.Sscanf(out[i:], "Total: %d passed, %d failed", &passed, &failed)
	return passed, passed + failed, out
}

// The conformance suite's server scenarios pass through the gateway's URL
// for the go-sdk's reference server supervised over stdio exactly as they
// pass against that server's own HTTP mode.
func TestGatewayConformance(t *testing.T) {
	node, suite := conformanceTools(t)
	ref := referenceServer(t)
	d := newDaemonEnv(t)
	writeFile(t, d.cfg, fmt.Sprintf("[servers.ref]\ncommand = %q\n", ref))
	d.startDaemon()
	d.waitStatus("ref", "ref ready", func(e statusEntry) bool { return e.State == "ready" })

	port := freePort(t)
	own := exec.Command(ref, "-http", "127.0.0.1:"+strconv.Itoa(port), "-stateless=false")
	if err := own.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { own.Process.Kill(); own.Wait() }()
	ownURL := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	waitListening(t, port)

	directPassed, directTotal, directOut := runServerSuite(t, node, suite, ownURL)
	gwPassed, gwTotal, gwOut := runServerSuite(t, node, suite, d.gatewayURL("ref"))
	t.Logf("the server's own HTTP mode: %d/%d; through mcptray's gateway (stdio upstream): %d/%d", directPassed, directTotal, gwPassed, gwTotal)
	if gwPassed != directPassed || gwTotal != directTotal || gwPassed != gwTotal {
		t.Fatalf("through the gateway %d/%d, direct %d/%d\ngateway run:\n%s\ndirect run:\n%s", gwPassed, gwTotal, directPassed, directTotal, tail(gwOut, 40), tail(directOut, 20))
	}
}

func waitListening(t *testing.T, port int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
			c.Close()
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("nothing listens on port %d", port)
}

// connectClient runs `mcptray connect NAME` as a client would and talks to
// it with the go-sdk.
func (d *daemonEnv) connectClient(name, client string) *mcp.ClientSession {
	d.t.Helper()
	cmd := exec.Command(d.bin, "connect", name)
	cmd.Env = d.env
	var stderr syncBuffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: client, Version: "1.0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		d.t.Fatalf("mcptray connect %s: %v\nstderr: %s", name, err, stderr.String())
	}
	d.t.Cleanup(func() { cs.Close() })
	return cs
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func echo(t *testing.T, cs *mcp.ClientSession, msg string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": msg}})
	if err != nil {
		return "", err
	}
	return res.Content[0].(*mcp.TextContent).Text, nil
}

// daemonPID is the pid of the daemon answering on d's socket (0: none).
func (d *daemonEnv) daemonPID() int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	c, err := control.Dial(ctx, &control.ClientOptions{Socket: d.sock()})
	if err != nil {
		return 0
	}
	return c.Info().PID
}

// stopDetachedDaemon ends a daemon a bridge started, at the end of a test.
func (d *daemonEnv) stopDetachedDaemon() {
	d.t.Cleanup(func() {
		if pid := d.daemonPID(); pid > 0 {
			syscall.Kill(pid, syscall.SIGTERM)
			deadline := time.Now().Add(20 * time.Second)
			for pidAlive(pid) && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
		}
	})
}

// With no daemon running, the first bridge starts one; every client
// session shares the one server process, and the gateway lists them.
func TestConnectSharesOneProcess(t *testing.T) {
	d := newDaemonEnv(t)
	d.stopDetachedDaemon()
	var sessions []*mcp.ClientSession
	for i := range 3 {
		sessions = append(sessions, d.connectClient("demo", fmt.Sprintf("client-%d", i)))
	}
	for i, cs := range sessions {
		if got, err := echo(t, cs, fmt.Sprint("hi ", i)); err != nil || got != fmt.Sprint("hi ", i) {
			t.Fatalf("echo through session %d = %q, %v", i, got, err)
		}
	}
	st := d.waitStatus("demo", "demo ready", func(e statusEntry) bool { return e.State == "ready" })
	gi := d.gatewayInfo()
	var demo control.GatewayServer
	for _, s := range gi.Servers {
		if s.Name == "demo" {
			demo = s
		}
	}
	if len(demo.Sessions) != 3 {
		t.Fatalf("the gateway lists %d sessions of demo; want 3: %+v", len(demo.Sessions), demo.Sessions)
	}
	pids := map[int]bool{}
	for _, s := range demo.Sessions {
		if !strings.HasPrefix(s.ClientName, "client-") || s.Via != "stdio" || s.PID <= 0 || s.Requests < 1 {
			t.Fatalf("session = %+v", s)
		}
		pids[s.PID] = true
	}
	if len(pids) != 3 {
		t.Fatalf("bridge pids %v; want 3 different", pids)
	}
	if n := countProcesses(t, "serve-demo"); n != 1 {
		t.Fatalf("%d demo server processes run; want 1 (pid %d)", n, st.PID)
	}
}

// countProcesses counts processes of this test's binary whose command
// line has arg.
func countProcesses(t *testing.T, arg string) int {
	t.Helper()
	bin := mcptrayBinary(t)
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			continue
		}
		parts := strings.Split(string(cmdline), "\x00")
		if len(parts) > 1 && parts[0] == bin && parts[1] == arg && pidAlive(pid) {
			n++
		}
	}
	return n
}

// kill -9 of the daemon: the call in flight fails saying why, the bridge
// starts a new daemon, the session carries on, and the server the killed
// daemon left is ended by the next.
func TestConnectOutlivesTheDaemon(t *testing.T) {
	d := newDaemonEnv(t)
	d.stopDetachedDaemon()
	cs := d.connectClient("demo", "survivor")
	if _, err := echo(t, cs, "before"); err != nil {
		t.Fatal(err)
	}
	first := d.daemonPID()
	old := d.waitStatus("demo", "demo ready", func(e statusEntry) bool { return e.State == "ready" }).PID
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	var got string
	var err error
	for time.Now().Before(deadline) {
		if got, err = echo(t, cs, "after"); err == nil {
			break
		}
		if !strings.Contains(err.Error(), "went away") {
			t.Fatalf("a request while the daemon was gone failed with %v; want it to say the daemon went away", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil || got != "after" {
		t.Fatalf("after the daemon was killed: %q, %v", got, err)
	}
	if second := d.daemonPID(); second == 0 || second == first {
		t.Fatalf("daemon pid after the kill = %d (before: %d)", second, first)
	}
	for time.Now().Before(deadline) && pidAlive(old) {
		time.Sleep(50 * time.Millisecond)
	}
	if pidAlive(old) {
		t.Fatalf("the demo server of the killed daemon (pid %d) is still running", old)
	}
}

// When no daemon can start, the bridge says why and runs the server
// itself.
func TestConnectFallsBackToTheServer(t *testing.T) {
	d := newDaemonEnv(t)
	// A socket path the kernel refuses: no daemon can listen there.
	long := filepath.Join(d.dir, strings.Repeat("x", 120))
	os.MkdirAll(long, 0o700)
	for i, kv := range d.env {
		if strings.HasPrefix(kv, "XDG_RUNTIME_DIR=") {
			d.env[i] = "XDG_RUNTIME_DIR=" + long
		}
	}
	cmd := exec.Command(d.bin, "connect", "demo")
	cmd.Env = d.env
	var stderr syncBuffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "fallback"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect without a daemon: %v\nstderr: %s", err, stderr.String())
	}
	defer cs.Close()
	if got, err := echo(t, cs, "direct"); err != nil || got != "direct" {
		t.Fatalf("echo = %q, %v", got, err)
	}
	if !strings.Contains(stderr.String(), "running the server directly instead") {
		t.Fatalf("stderr does not say the server runs directly:\n%s", stderr.String())
	}
}
