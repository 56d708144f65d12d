package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"mcptray/app"
	"mcptray/internal/testenv"
	"mcptray/internal/wine"
	"mcptray/registry"
	"mcptray/supervisor"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// mcptrayBinary builds mcptray once per test run, or is the headless build
// $MCPTRAY_TEST_BINARY names (make test-windows builds it for Wine, which
// has no Go toolchain).
func mcptrayBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("MCPTRAY_TEST_BINARY"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("MCPTRAY_TEST_BINARY: %v", err)
		}
		return p
	}
	if testing.Short() {
		t.Skip("builds the binary (not in -short mode)")
	}
	wine.Skip(t, "has no Go toolchain to build mcptray with (make test-windows sets MCPTRAY_TEST_BINARY)")
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mcptray-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, exeName("mcptray"))
		out, err := exec.Command("go", "build", "-tags", "nogui", "-o", binPath, "mcptray").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// testServers is where `make test` installs the npm servers.
func testServers(t *testing.T) string {
	wine.Skip(t, "runs no Node.js here (the npm servers are node programs)")
	dir := os.Getenv("MCPTRAY_TEST_SERVERS")
	if dir == "" {
		dir = filepath.Join("..", "..", ".testservers", "node_modules")
	}
	everything := filepath.Join(dir, "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(everything); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("server-everything not installed (%v); `make test` installs it", err)
		}
		testenv.Need(t, fmt.Sprintf("server-everything (%v); `make test` installs it", err))
	}
	if _, err := exec.LookPath("node"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("node not on PATH")
		}
		testenv.Need(t, "node on PATH")
	}
	abs, _ := filepath.Abs(everything)
	return abs
}

// pidsWith lists processes whose command line holds marker.
func pidsWith(marker string) []string {
	out, _ := exec.Command("pgrep", "-f", marker).Output()
	return strings.Fields(string(out))
}

// TestCheckEndToEnd runs `mcptray check` as a new user would on a config
// mixing the demo server, one that speaks only 2026-07-28,
// server-everything, a server printing a banner on stdout, one that never
// answers and a missing command.
func TestCheckEndToEnd(t *testing.T) {
	bin := mcptrayBinary(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	everything := testServers(t)
	dir := t.TempDir()
	marker := fmt.Sprintf("silent-%d", time.Now().UnixNano())
	cfg := filepath.Join(dir, "servers.toml")
	writeFile(t, cfg, fmt.Sprintf(`
[servers.demo]
command = %[1]q
args = ["serve-demo"]

[servers.modern]
command = %[4]q
env = { MCPTRAY_TEST_SERVER = "modern-only" }

[servers.modernexits]
command = %[4]q
env = { MCPTRAY_TEST_SERVER = "modern-exits-on-initialize" }

[servers.everything]
command = "node"
args = [%[2]q, "stdio"]

[servers.banner]
command = "sh"
args = ["-c", "echo 'Welcome to banner server 1.0'; exec %[1]s serve-demo"]

[servers.silent]
command = "sh"
args = ["-c", "exec sleep 3600", %[3]q]

[servers.eofexit]
command = "sh"
args = ["-c", "cat > /dev/null", %[3]q]

[servers.missing]
command = "no-such-mcp-server-xyz"

[servers.off]
command = "true"
disabled = true
`, bin, everything, marker, exe))

	start := time.Now()
	cmd := exec.Command(bin, "check", "--json", "--timeout", "8s", "--config", cfg)
	cmd.Env = append(append(os.Environ(), homeEnv(dir)...), "XDG_CACHE_HOME="+filepath.Join(dir, "cache"))
	out, err := cmd.Output()
	elapsed := time.Since(start)
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v (want 1)\n%s", err, out)
	}
	var results []serverReport
	if err := json.Unmarshal(out, &results); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	got := map[string]serverReport{}
	var order []string
	for _, r := range results {
		got[r.Name] = r
		order = append(order, r.Name)
	}
	if strings.Join(order, ",") != "demo,modern,modernexits,everything,banner,silent,eofexit,missing" {
		t.Errorf("servers checked: %v (the disabled one must be skipped)", order)
	}
	want := map[string]struct{ status, code string }{
		"demo":        {"ready", ""},
		"modern":      {"ready", ""},
		"modernexits": {"ready", ""},
		"everything":  {"ready", ""},
		"banner":      {"ready", "stdout-noise"},
		"silent":      {"failed", "handshake-timeout"},
		"eofexit":     {"failed", "handshake-timeout"}, // mcptray closed its stdin: the exit is evidence
		"missing":     {"failed", "command-not-found"},
	}
	for name, w := range want {
		r := got[name]
		code := ""
		if len(r.Diagnostics) > 0 {
			code = string(r.Diagnostics[0].Code)
		}
		if r.Status != w.status || code != w.code {
			t.Errorf("%s: status %q code %q, want %q %q (%+v)", name, r.Status, code, w.status, w.code, r.Diagnostics)
		}
	}
	// A check speaks the era the daemon and the gateway speak to the
	// server: initialize when it answers it, 2026-07-28 when it refuses.
	if d := got["demo"]; d.Era != "legacy" || d.ProtocolVersion != "2025-11-25" || !strings.Contains(d.EraSource, "tried first") ||
		d.ServerInfo == nil || d.ServerInfo.Name != "mcptray-demo" ||
		len(d.Tools) != 3 || len(d.Resources) != 1 || len(d.Prompts) != 1 || d.LatencyMs.Connect == nil || d.LatencyMs.Probe == nil {
		t.Errorf("demo report: era %q %q (%s), %d/%d/%d, latency %v/%v", d.Era, d.ProtocolVersion, d.EraSource,
			len(d.Tools), len(d.Resources), len(d.Prompts), d.LatencyMs.Connect, d.LatencyMs.Probe)
	}
	if m := got["modern"]; m.Era != "modern" || m.ProtocolVersion != "2026-07-28" || !strings.Contains(m.EraSource, "initialize refused") ||
		len(m.Tools) == 0 || m.LatencyMs.Probe == nil {
		t.Errorf("modern-only report: era %q %q (%s), %d tools, probe %v", m.Era, m.ProtocolVersion, m.EraSource, len(m.Tools), m.LatencyMs.Probe)
	}
	// One that ends on initialize is started once more, with server/discover.
	if m := got["modernexits"]; m.Era != "modern" || m.ProtocolVersion != "2026-07-28" || len(m.Tools) != 3 {
		t.Errorf("a server of 2026-07-28 alone that exits on initialize: era %q %q (%s), %d tools", m.Era, m.ProtocolVersion, m.EraSource, len(m.Tools))
	}
	if e := got["everything"]; e.Era == "" || len(e.Tools) < 10 || e.Transport != "stdio" {
		t.Errorf("everything report: era %q, %d tools", e.Era, len(e.Tools))
	}
	if b := got["banner"]; !strings.Contains(strings.Join(b.Diagnostics[0].Evidence, " "), "Welcome to banner server") {
		t.Errorf("banner evidence: %+v", b.Diagnostics)
	}
	if b := got["banner"]; b.Level != "warn" || len(b.Warnings) != 1 || b.Warnings[0].Code != "stdout-noise" {
		t.Errorf("banner: level %q warnings %+v, want warn with stdout-noise", b.Level, b.Warnings)
	}
	if d := got["demo"]; d.Level != "ok" || len(d.Warnings) != 0 {
		t.Errorf("demo: level %q warnings %+v", d.Level, d.Warnings)
	}
	if e := got["eofexit"]; !strings.Contains(strings.Join(e.Diagnostics[0].Evidence, " "), "then mcptray stopped the process: exited with code 0") {
		t.Errorf("eofexit: the exit after mcptray closed stdin is not evidence: %+v", e.Diagnostics[0])
	}
	if s := got["silent"]; !strings.Contains(s.Diagnostics[0].Message, "wrote nothing") {
		t.Errorf("silent diagnosis does not say it wrote nothing: %+v", s.Diagnostics[0])
	}
	if elapsed > 20*time.Second {
		t.Errorf("check took %s with --timeout 8s", elapsed)
	}
	if left := pidsWith(marker); len(left) > 0 {
		t.Errorf("processes left behind: %v", left)
	}
}

func TestCheckAllReadyExitsZero(t *testing.T) {
	bin := mcptrayBinary(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "servers.toml")
	writeFile(t, cfg, fmt.Sprintf("[servers.demo]\ncommand = %q\nargs = [\"serve-demo\"]\nautostart = false\n", bin))
	cmd := exec.Command(bin, "check", "--config", cfg)
	cmd.Env = append(os.Environ(), homeEnv(dir)...)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "demo") || !strings.Contains(string(out), "ready") {
		t.Fatalf("check: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"check", "--config", cfg, "nope"}, {"check", "--timeout", "-1s", "--config", cfg}} {
		err := exec.Command(bin, args...).Run()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
			t.Errorf("%v: %v, want exit 2", args, err)
		}
	}
}

// CheckServer runs one server that is in no config, as the desktop app's
// form does before saving: the demo server is ready with its tools, a
// command that exits says how.
func TestCheckServer(t *testing.T) {
	bin := mcptrayBinary(t)
	st := app.CheckServer(context.Background(), nil, &registry.Server{Name: "demo", Command: bin, Args: []string{"serve-demo"}}, 30*time.Second)
	if st.State != supervisor.StateReady || st.Report == nil || len(st.Report.Tools) == 0 {
		t.Errorf("demo: %s %v", st.State, st.Diagnosis)
	}
	// A server that waits for its first client, or a person, is checked
	// all the same: the check is its client.
	for _, mode := range []registry.StartMode{registry.StartLazy, registry.StartManual} {
		st := app.CheckServer(context.Background(), nil, &registry.Server{Name: "demo", Command: bin, Args: []string{"serve-demo"}, Start: mode, IdleStop: time.Minute}, 30*time.Second)
		if st.State != supervisor.StateReady {
			t.Errorf("start = %q: %s (%s)", mode, st.State, st.Reason)
		}
	}
	// A server that says why and exits 3, in the OS's own shell.
	quitter := &registry.Server{Name: "quitter", Command: "sh", Args: []string{"-c", "echo no token >&2; exit 3"}}
	if runtime.GOOS == "windows" {
		quitter.Command, quitter.Args = "cmd", []string{"/c", "echo no token 1>&2 & exit 3"}
	}
	st = app.CheckServer(context.Background(), nil, quitter, 30*time.Second)
	if st.State == supervisor.StateReady || st.Diagnosis == nil || st.LastExit == nil || st.LastExit.Code != 3 {
		t.Errorf("quitter: %s %+v %+v", st.State, st.Diagnosis, st.LastExit)
	}
}

// hangPingJS is a legacy MCP server whose ping never answers.
const hangPingJS = `
const rl = require('readline').createInterface({input: process.stdin});
const send = o => process.stdout.write(JSON.stringify(o) + "\n");
rl.on('line', l => {
  let m; try { m = JSON.parse(l) } catch { return }
  if (m.method === 'initialize') send({jsonrpc: '2.0', id: m.id, result: {protocolVersion: '2025-06-18', capabilities: {tools: {}}, serverInfo: {name: 'hang-ping', version: '1.0'}}});
  else if (m.method === 'tools/list') send({jsonrpc: '2.0', id: m.id, result: {tools: []}});
  else if (m.method === 'ping') {}
  else if (m.id !== undefined) send({jsonrpc: '2.0', id: m.id, error: {code: -32601, message: 'method not found'}});
});
rl.on('close', () => process.exit(0));
`

// TestCheckProbeTimeout: a server whose probe never answers is not ready:
// the probe's deadline fits in the check's time and it says how long it
// waited.
func TestCheckProbeTimeout(t *testing.T) {
	bin := mcptrayBinary(t)
	wine.Skip(t, "runs no Node.js here (the server is a node script)")
	if _, err := exec.LookPath("node"); err != nil {
		testenv.Need(t, "node on PATH")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "hang-ping.js")
	writeFile(t, script, hangPingJS)
	cfg := filepath.Join(dir, "servers.toml")
	writeFile(t, cfg, fmt.Sprintf("[servers.hang]\ncommand = \"node\"\nargs = [%q]\n", script))
	cmd := exec.Command(bin, "check", "--json", "--timeout", "4s", "--config", cfg)
	cmd.Env = append(os.Environ(), homeEnv(dir)...)
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v (want 1)\n%s", err, out)
	}
	var results []serverReport
	if err := json.Unmarshal(out, &results); err != nil || len(results) != 1 {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	r := results[0]
	if r.Status == "ready" || len(r.Diagnostics) == 0 || r.Diagnostics[0].Code != "probe-timeout" {
		t.Fatalf("status %q diagnostics %+v, want not ready with probe-timeout", r.Status, r.Diagnostics)
	}
	if msg := r.Diagnostics[0].Message; !strings.Contains(msg, "within") || strings.Contains(msg, "still ready") {
		t.Errorf("message %q does not say how long it waited", msg)
	}
}

// regexpLine says whether a line of text matches pattern.
func regexpLine(text, pattern string) bool {
	re := regexp.MustCompile(pattern)
	for _, l := range strings.Split(text, "\n") {
		if re.MatchString(l) {
			return true
		}
	}
	return false
}

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
