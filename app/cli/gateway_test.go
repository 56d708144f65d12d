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
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/control"
	"mcptray/internal/testenv"
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

// [settings] gateway_port is the port of the daemon's URLs.
func TestGatewayPortSetting(t *testing.T) {
	d := newDaemonEnv(t)
	port := freePort(t)
	writeFile(t, d.cfg, fmt.Sprintf("[settings]\ngateway_port = %d\n\n[servers.demo]\ncommand = %q\nargs = [\"serve-demo\"]\n", port, d.bin))
	d.startDaemon()
	d.waitStatus("demo", "demo ready", func(e statusEntry) bool { return e.State == "ready" })
	if u := d.gatewayURL("demo"); !strings.HasPrefix(u, fmt.Sprintf("http://127.0.0.1:%d/", port)) {
		t.Errorf("gateway URL %s, want port %d", u, port)
	}
}

// A gateway_port changed in the file moves the local endpoint at the
// reload, and the daemon says so; a port another program holds leaves it
// where it is, saying why; the other settings say they apply.
func TestGatewayPortChangedOnReload(t *testing.T) {
	d := newDaemonEnv(t)
	first, second := freePort(t), freePort(t)
	for second == first {
		second = freePort(t)
	}
	config := func(port int, probe string) string {
		return fmt.Sprintf("[settings]\ngateway_port = %d\nprobe_interval = %q\n\n[servers.demo]\ncommand = %q\nargs = [\"serve-demo\"]\n", port, probe, d.bin)
	}
	writeFile(t, d.cfg, config(first, "1s"))
	daemon := d.startDaemon()
	d.waitStatus("demo", "demo ready", func(e statusEntry) bool { return e.State == "ready" })
	waitListening(t, first)

	writeFile(t, d.cfg, config(second, "2s"))
	out, errOut, code := d.mcptray("reload")
	if code != 0 {
		t.Fatalf("reload: exit %d: %s%s", code, out, errOut)
	}
	moved := fmt.Sprintf("the local HTTP endpoint moved from 127.0.0.1:%d to 127.0.0.1:%d", first, second)
	// The file's watcher may have applied it first: the daemon's log says
	// it either way.
	testenv.Eventually(t, 20*time.Second, func() bool {
		return strings.Contains(daemon.log(), moved) && strings.Contains(daemon.log(), "probe_interval is now 2s (was 1s)")
	}, "the daemon did not say the settings changed (reload said %q):\n%s", out, daemon.log())
	if u := d.gatewayURL("demo"); !strings.HasPrefix(u, fmt.Sprintf("http://127.0.0.1:%d/", second)) {
		t.Fatalf("gateway URL %s after the move, want port %d", u, second)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "moved"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: d.gatewayURL("demo")}, nil)
	if err != nil {
		t.Fatalf("the moved endpoint does not serve: %v", err)
	}
	if got, err := echo(t, cs, "moved"); err != nil || !strings.Contains(got, "moved") {
		t.Errorf("echo through the moved endpoint: %q, %v", got, err)
	}
	cs.Close()
	testenv.Eventually(t, 10*time.Second, func() bool {
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(first))
		if err == nil {
			c.Close()
		}
		return err != nil
	}, "the old port %d still answers after the move", first)

	// A port another program holds: the endpoint stays, and the note says why.
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	taken := held.Addr().(*net.TCPAddr).Port
	writeFile(t, d.cfg, config(taken, "2s"))
	d.mcptray("reload")
	stays := fmt.Sprintf("[settings] gateway_port asks for port %d, which cannot be used (another program listens there): the local HTTP endpoint stays on 127.0.0.1:%d", taken, second)
	testenv.Eventually(t, 20*time.Second, func() bool { return strings.Contains(daemon.log(), stays) },
		"no note that port %d is taken:\n%s", taken, daemon.log())
	if u := d.gatewayURL("demo"); !strings.HasPrefix(u, fmt.Sprintf("http://127.0.0.1:%d/", second)) {
		t.Errorf("gateway URL %s with the asked port taken, want %d still", u, second)
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
		pid := d.daemonPID()
		if pid == 0 {
			// A daemon too busy to answer still holds its lock file.
			b, _ := os.ReadFile(filepath.Join(filepath.Dir(d.sock()), "mcptray.lock"))
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			if cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); !strings.HasPrefix(string(cmd), d.bin+"\x00daemon") {
				pid = 0 // not this test's daemon any more
			}
		}
		if pid > 0 {
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
		if strings.HasPrefix(kv, "HOME=") {
			d.env[i] = "HOME=" + long
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

// listAll is everything a session lists, as JSON, pages followed.
func listAll(t *testing.T, cs *mcp.ClientSession) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out := map[string]string{}
	add := func(kind string, v any, err error) {
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		b, _ := json.Marshal(v)
		out[kind] = string(b)
	}
	var tools []*mcp.Tool
	for tl, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		tools = append(tools, tl)
	}
	add("tools", tools, nil)
	var res []*mcp.Resource
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		res = append(res, r)
	}
	add("resources", res, nil)
	var tpl []*mcp.ResourceTemplate
	for r, err := range cs.ResourceTemplates(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		tpl = append(tpl, r)
	}
	add("templates", tpl, nil)
	var prompts []*mcp.Prompt
	for p, err := range cs.Prompts(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		prompts = append(prompts, p)
	}
	add("prompts", prompts, nil)
	r1, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get-sum", Arguments: map[string]any{"a": 2, "b": 3}})
	add("get-sum", r1, err)
	r2, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "same"}})
	add("echo", r2, err)
	r3, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "demo://resource/static/document/architecture.md"})
	add("read", r3, err)
	r4, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "simple-prompt"})
	add("prompt", r4, err)
	return out
}

// withoutProtocolMeta drops the fields a 2026-07-28 session adds to every
// result (its framing, not the server's content), and the cache hints the
// go-sdk always sends (an initialize-era server sends none; the gateway,
// a go-sdk server, sends their defaults).
func withoutProtocolMeta(s string) string {
	var v map[string]any
	if json.Unmarshal([]byte(s), &v) != nil {
		return canonical(s)
	}
	if v["cacheScope"] == "public" {
		v["cacheScope"] = ""
	}
	if m, ok := v["_meta"].(map[string]any); ok {
		for k := range m {
			if strings.HasPrefix(k, "io.modelcontextprotocol/") {
				delete(m, k)
			}
		}
		if len(m) == 0 {
			delete(v, "_meta")
		}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// canonical is JSON text re-encoded (keys sorted).
func canonical(s string) string {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// fullClient is a client that offers what the gateway offers a server
// (sampling, elicitation, roots): server-everything lists tools by what
// its client offers.
func fullClient(name string) *mcp.Client {
	c := mcp.NewClient(&mcp.Implementation{Name: name}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{
			Sampling:    &mcp.SamplingCapabilities{},
			Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}},
			RootsV2:     &mcp.RootCapabilities{ListChanged: true},
		},
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "ok"}}, nil
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	})
	c.AddRoots(&mcp.Root{URI: "file:///tmp"})
	return c
}

// A go-sdk client through `mcptray connect` sees what it sees direct:
// the same tools, resources, templates, prompts and results, in either
// era (server-everything speaks only the initialize era: a 2026-07-28
// client is bridged).
func TestConnectIsTransparent(t *testing.T) {
	everything := testServers(t)
	d := newDaemonEnv(t)
	writeFile(t, d.cfg, fmt.Sprintf("[servers.everything]\ncommand = \"node\"\nargs = [%q, \"stdio\"]\n", everything))
	d.stopDetachedDaemon()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	directCmd := exec.Command("node", everything, "stdio")
	var directErr syncBuffer
	directCmd.Stderr = &directErr
	direct, err := fullClient("direct").Connect(ctx, &mcp.CommandTransport{Command: directCmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("server-everything, direct: %v\n%s", err, directErr.String())
	}
	defer direct.Close()
	want := listAll(t, direct)
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			cmd := exec.Command(d.bin, "connect", "everything")
			cmd.Env = d.env
			cs, err := fullClient("via").Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if got := cs.InitializeResult().ProtocolVersion; got != version {
				t.Fatalf("negotiated %s through the gateway; want %s", got, version)
			}
			if a, b := cs.InitializeResult().ServerInfo, direct.InitializeResult().ServerInfo; a.Name != b.Name || a.Version != b.Version {
				t.Fatalf("serverInfo through the gateway %+v; direct %+v", a, b)
			}
			got := listAll(t, cs)
			for k, w := range want {
				if g, w := withoutProtocolMeta(got[k]), canonical(w); g != w {
					t.Errorf("%s through the gateway differs from direct:\n got %s\nwant %s", k, tail(got[k], 5), tail(w, 5))
				}
			}
		})
	}
}

// claudeBinary is the pinned Claude Code `make test` installs.
func claudeBinary(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("MCPTRAY_TEST_CLIENTS")
	if dir == "" {
		dir = filepath.Join("..", ".testclients", "node_modules")
	}
	bin, _ := filepath.Abs(filepath.Join(dir, ".bin", "claude"))
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Claude Code is not installed (%v); `make test` installs it", err)
		}
		t.Skipf("Claude Code is not installed (%v); `make test` installs it", err)
	}
	return bin
}

// The real Claude Code through the gateway: an entry running `mcptray
// connect everything`, three `claude mcp list` at once, all connected
// (their handshakes and tools/list went through mcptray), and one process
// of the server.
func TestClaudeCodeThroughTheGateway(t *testing.T) {
	claude := claudeBinary(t)
	everything := testServers(t)
	d := newDaemonEnv(t)
	writeFile(t, d.cfg, fmt.Sprintf("[servers.everything]\ncommand = \"node\"\nargs = [%q, \"stdio\"]\n", everything))
	d.stopDetachedDaemon()
	// MCP_TIMEOUT: Claude Code gives a server 30 s to start by default; on
	// a loaded machine the first bridge's daemon and its Node server can
	// take longer, which is the machine's doing, not mcptray's.
	env := append(slices.Clone(d.env), "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "NO_COLOR=1", "TERM=dumb", "MCP_TIMEOUT=120000")
	run := func(args ...string) (string, error) {
		cmd := exec.Command(claude, args...)
		cmd.Env, cmd.Dir = env, d.dir
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	entry := fmt.Sprintf(`{"type":"stdio","command":%q,"args":["connect","everything"]}`, d.bin)
	if out, err := run("mcp", "add-json", "everything", entry); err != nil {
		t.Fatalf("claude mcp add-json: %v\n%s", err, out)
	}
	var wg sync.WaitGroup
	outs := make([]string, 3)
	errs := make([]error, 3)
	for i := range 3 {
		wg.Go(func() { outs[i], errs[i] = run("mcp", "list") })
	}
	wg.Wait()
	for i := range 3 {
		if errs[i] != nil || !strings.Contains(outs[i], "everything: "+d.bin+" connect everything - ✔ Connected") {
			t.Fatalf("claude mcp list #%d: %v\n%s", i, errs[i], outs[i])
		}
	}
	var usage control.GatewayServer
	for _, s := range d.gatewayInfo().Servers {
		if s.Name == "everything" {
			usage = s
		}
	}
	if c := usage.Usage.Methods["tools/list"]; c.Calls < 3 || c.Errors > 0 {
		t.Fatalf("the gateway relayed tools/list %+v; want each of the 3 sessions' through it", c)
	}
	// Other tests run server-everything too: count this daemon's.
	daemon := d.daemonPID()
	n := 0
	for _, p := range pidsWith(everything) {
		if pid, _ := strconv.Atoi(p); descendsFrom(pid, daemon) {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the daemon runs %d server-everything processes; want one for every client", n)
	}
}

// descendsFrom reports whether pid is a descendant of ancestor.
func descendsFrom(pid, ancestor int) bool {
	for i := 0; pid > 1 && i < 64; i++ {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return false
		}
		s := string(b)
		j := strings.LastIndexByte(s, ')')
		if j < 0 {
			return false
		}
		var state string
		fmt.Sscan(s[j+2:], &state, &pid)
		if pid == ancestor {
			return true
		}
	}
	return false
}

// Another user cannot reach the daemon's servers over the control socket:
// the socket's folder keeps them out, and with the folder and socket
// opened to everyone, the daemon still refuses the peer by its uid.
func TestConnectRefusesOtherUsers(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("only root can run a process as another user")
	}
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Fatal("curl is needed to make a request as another user (apt install curl)")
	}
	d := newDaemonEnv(t)
	daemon := d.startDaemon()
	d.waitStatus("demo", "demo ready", func(e statusEntry) bool { return e.State == "ready" })
	asNobody := func() (int, string) {
		cmd := exec.Command(curl, "-sS", "--max-time", "5", "--unix-socket", d.sock(), "-H", "Connection: Upgrade", "-H", "Upgrade: mcp",
			"http://mcptray/v1/servers/demo/connect")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(out)
		}
		return 0, string(out)
	}
	if code, out := asNobody(); code == 0 || strings.Contains(out, "101") {
		t.Fatalf("uid 65534 reached the socket: exit %d, %s", code, out)
	}
	// Open every folder on the way and the socket itself: the uid check
	// alone now stands between.
	for p := filepath.Dir(d.sock()); strings.HasPrefix(p, d.dir); p = filepath.Dir(p) {
		os.Chmod(p, 0o777)
	}
	os.Chmod(d.sock(), 0o777)
	if code, out := asNobody(); code == 0 || strings.Contains(out, "101") || strings.Contains(out, "Switching") {
		t.Fatalf("uid 65534 got an answer from the daemon: exit %d, %s", code, out)
	} else {
		t.Logf("uid 65534, socket opened to everyone: curl exit %d (%s)", code, strings.TrimSpace(out))
	}
	if !strings.Contains(daemon.log(), "uid 65534") {
		t.Fatalf("the daemon did not say it refused uid 65534:\n%s", daemon.log())
	}
}

// Under a running daemon, `mcptray call NAME` uses the daemon's instance:
// no process of its own, and the call in the server's protocol trace.
func TestCallUsesTheDaemonsInstance(t *testing.T) {
	d := newDaemonEnv(t)
	d.startDaemon()
	st := d.waitStatus("demo", "demo ready", func(e statusEntry) bool { return e.State == "ready" })
	out, errOut, code := d.mcptray("call", "demo", "echo", `{"message":"through the daemon"}`)
	if code != 0 || strings.TrimSpace(out) != "through the daemon" {
		t.Fatalf("call: exit %d\n%s%s", code, out, errOut)
	}
	if now := d.waitStatus("demo", "demo ready", func(e statusEntry) bool { return e.State == "ready" }); now.PID != st.PID {
		t.Fatalf("the daemon's demo changed: pid %d → %d", st.PID, now.PID)
	}
	trace, _, _ := d.mcptray("trace", "--json", "demo")
	var sawClient, sawServer bool
	for _, line := range strings.Split(strings.TrimSpace(trace), "\n") {
		var f struct{ Session, Dir, Method, Body string }
		if json.Unmarshal([]byte(line), &f) != nil || f.Method != "tools/call" || !strings.Contains(f.Body, "through the daemon") {
			continue
		}
		sawClient = sawClient || (f.Dir == "client→mcptray" && f.Session != "")
		sawServer = sawServer || f.Dir == "mcptray→server"
	}
	if !sawClient || !sawServer {
		t.Fatalf("the call is not in the daemon's trace (client side %v, server side %v):\n%s", sawClient, sawServer, tail(trace, 10))
	}
}

// TestCheckListsWhatClientsSee: a check offers a server what the gateway
// offers it (sampling, elicitation, roots), so it lists the tools a
// client reaches through mcptray: server-everything lists some only to
// such a client (17 tools, not 13).
func TestCheckListsWhatClientsSee(t *testing.T) {
	bin := mcptrayBinary(t)
	everything := testServers(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "servers.toml")
	writeFile(t, cfg, fmt.Sprintf("[servers.everything]\ncommand = \"node\"\nargs = [%q, \"stdio\"]\n", everything))
	cmd := exec.Command(bin, "check", "--json", "--config", cfg)
	cmd.Env = append(os.Environ(), homeEnv(dir)...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("check: %v\n%s", err, out)
	}
	var results []serverReport
	if err := json.Unmarshal(out, &results); err != nil || len(results) != 1 {
		t.Fatalf("not one report (%v):\n%s", err, out)
	}
	var checked []string
	for _, tl := range results[0].Tools {
		checked = append(checked, tl.Name)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := fullClient("direct").Connect(ctx, &mcp.CommandTransport{Command: exec.Command("node", everything, "stdio")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var listed []string
	for tl, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, tl.Name)
	}
	slices.Sort(checked)
	slices.Sort(listed)
	if !slices.Equal(checked, listed) {
		t.Errorf("check lists %d tools %q;\na client offering what the gateway offers is listed %d: %q", len(checked), checked, len(listed), listed)
	}
	// What makes the test worth running: the server lists fewer to a
	// client offering nothing.
	bare, err := mcp.NewClient(&mcp.Implementation{Name: "bare"}, nil).Connect(ctx, &mcp.CommandTransport{Command: exec.Command("node", everything, "stdio")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bare.Close()
	n := 0
	for _, err := range bare.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n >= len(listed) {
		t.Errorf("server-everything lists %d tools to a client offering nothing, %d to one offering sampling, elicitation and roots: the test no longer tells the two apart", n, len(listed))
	}
}
