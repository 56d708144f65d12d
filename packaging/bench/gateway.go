//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// gatewayBench measures the gateway against going direct, same servers,
// same run: the round trip of a tools/call through `mcptray connect` and
// through the local HTTP endpoint (p50 overhead, target ≤ 1 ms), a
// bridge's RSS (target ≤ 15 MB), and 5 client sessions of server-everything
// sharing one process (processes and total RSS, direct vs through
// mcptray). It reports whether a target was missed.
func gatewayBench(bin, everything, dir string, env []string, calls int) (missed bool) {
	// What client entries and a daemon started on demand run: the
	// headless build beside the desktop one, when there is one.
	if h := filepath.Join(filepath.Dir(bin), "mcptray-headless"); exists(h) {
		bin = h
	}
	run := filepath.Join(dir, "run")
	check(os.MkdirAll(run, 0o700))
	cfgText := fmt.Sprintf("[servers.demo]\ncommand = %q\nargs = [\"serve-demo\"]\n", bin)
	if everything != "" {
		cfgText += fmt.Sprintf("\n[servers.everything]\ncommand = \"node\"\nargs = [%q, \"stdio\"]\n", everything)
	}
	cfg := writeConfig(dir, "gateway.toml", cfgText)
	env = append(slices.Clone(env), "XDG_RUNTIME_DIR="+run, "MCPTRAY_CONFIG="+cfg)
	daemon := exec.Command(bin, "daemon")
	daemon.Env = env
	check(daemon.Start())
	defer stopGUI(daemon)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	url := gatewayURL(bin, env, "demo")

	direct := session(ctx, &mcp.CommandTransport{Command: exec.Command(bin, "serve-demo")})
	bridgeCmd := exec.Command(bin, "connect", "demo")
	bridgeCmd.Env = env
	viaConnect := session(ctx, &mcp.CommandTransport{Command: bridgeCmd})
	viaHTTP := session(ctx, &mcp.StreamableClientTransport{Endpoint: url})
	defer direct.Close()
	defer viaConnect.Close()
	defer viaHTTP.Close()

	// Interleaved rounds, so the machine's load falls on all three alike.
	var d, c, h []time.Duration
	for range 50 { // warm-up
		roundTrip(ctx, direct)
		roundTrip(ctx, viaConnect)
		roundTrip(ctx, viaHTTP)
	}
	for range calls {
		d = append(d, roundTrip(ctx, direct))
		c = append(c, roundTrip(ctx, viaConnect))
		h = append(h, roundTrip(ctx, viaHTTP))
	}
	pd, pc, ph := median(d), median(c), median(h)
	overhead := func(name string, via time.Duration) {
		t := "≤ 1 ms overhead"
		if via-pd > time.Millisecond {
			t += " **missed**"
			missed = true
		}
		fmt.Printf("| tools/call round trip (p50 of %d), %s vs direct to the same server | %s | %s | +%s | %s |\n",
			calls, name, us(via), us(pd), us(via-pd), t)
	}
	overhead("through `mcptray connect`", pc)
	overhead("through the local HTTP endpoint", ph)

	rss := rssKB(bridgeCmd.Process.Pid)
	t := "≤ 15 MB"
	if rss > 15*1024 {
		t += " **missed**"
		missed = true
	}
	fmt.Printf("| RSS of a `mcptray connect` bridge after %d calls | %.1f MB | – | – | %s |\n", calls+50, float64(rss)/1024, t)

	if everything != "" {
		shareBench(ctx, bin, everything, env)
	}
	return missed
}

// shareBench compares 5 client sessions of server-everything, direct (each
// starts its own node process) and through `mcptray connect` (one process
// the daemon supervises, 5 bridges).
func shareBench(ctx context.Context, bin, everything string, env []string) {
	const n = 5
	open := func(mk func() *exec.Cmd) ([]*mcp.ClientSession, []*exec.Cmd) {
		var sessions []*mcp.ClientSession
		var cmds []*exec.Cmd
		var mu sync.Mutex
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				cmd := mk()
				cs := session(ctx, &mcp.CommandTransport{Command: cmd})
				if _, err := cs.ListTools(ctx, nil); err != nil {
					fail("tools/list: %v", err)
				}
				mu.Lock()
				sessions, cmds = append(sessions, cs), append(cmds, cmd)
				mu.Unlock()
			})
		}
		wg.Wait()
		return sessions, cmds
	}
	closeAll := func(ss []*mcp.ClientSession) {
		for _, s := range ss {
			s.Close()
		}
	}
	already := countArg(everything) // the daemon's, and any other
	ds, dcmds := open(func() *exec.Cmd { return exec.Command("node", everything, "stdio") })
	directProcs := countArg(everything) - already
	directRSS := 0
	for _, c := range dcmds {
		directRSS += treeRSS(c.Process.Pid)
	}
	closeAll(ds)

	gs, gcmds := open(func() *exec.Cmd {
		c := exec.Command(bin, "connect", "everything")
		c.Env = env
		return c
	})
	gwProcs := countArg(everything) - already + 1 // the daemon's one
	gwRSS := 0
	for _, c := range gcmds {
		gwRSS += rssKB(c.Process.Pid)
	}
	bridges := gwRSS
	daemonPID := pidOf(bin, "daemon")
	gwRSS += treeRSS(daemonPID)
	closeAll(gs)
	fmt.Printf("| %d client sessions of server-everything: processes of the server, total RSS | through mcptray: %d process, %d MB (daemon and server %d MB, %d bridges %d MB) | direct: %d processes, %d MB | %.2fx RSS | reported |\n",
		n, gwProcs, gwRSS/1024, (gwRSS-bridges)/1024, n, bridges/1024, directProcs, directRSS/1024, float64(gwRSS)/float64(directRSS))
}

func session(ctx context.Context, t mcp.Transport) *mcp.ClientSession {
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		fail("connecting: %v", err)
	}
	return cs
}

func roundTrip(ctx context.Context, cs *mcp.ClientSession) time.Duration {
	start := time.Now()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "bench"}})
	if err != nil || res.IsError {
		fail("tools/call: %v", err)
	}
	return time.Since(start)
}

// gatewayURL waits for the daemon's gateway and returns server name's URL.
func gatewayURL(bin string, env []string, name string) string {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		cmd := exec.Command(bin, "gateway", "--json", "--reveal")
		cmd.Env = env
		out, err := cmd.Output()
		if err == nil {
			var gi struct {
				Servers []struct{ Name, URL string }
			}
			if json.Unmarshal(out, &gi) == nil {
				for _, s := range gi.Servers {
					if s.Name == name && s.URL != "" {
						return s.URL
					}
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	fail("the daemon's gateway did not answer")
	return ""
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
	os.Exit(2)
}

// procs lists the live processes' pids and command lines.
func procs() map[int][]string {
	out := map[int][]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || len(b) == 0 {
			continue
		}
		out[pid] = strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	}
	return out
}

func countArg(arg string) int {
	n := 0
	for _, argv := range procs() {
		if slices.Contains(argv, arg) {
			n++
		}
	}
	return n
}

func pidOf(bin, arg string) int {
	for pid, argv := range procs() {
		if len(argv) > 1 && argv[0] == bin && argv[1] == arg {
			return pid
		}
	}
	return 0
}

// treeRSS is the RSS of pid and its descendants.
func treeRSS(pid int) int {
	total := rssKB(pid)
	for child := range procs() {
		if parentOf(child) == pid {
			total += treeRSS(child)
		}
	}
	return total
}

func parentOf(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	var state string
	var ppid int
	fmt.Sscan(s[i+2:], &state, &ppid)
	return ppid
}
