//go:build unix

package supervisor

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"mcptray/demo"
	"mcptray/healthcheck"
	"mcptray/registry"
)

// TestMain lets the test binary play the servers: with SUPERVISOR_TEST_CHILD
// set it runs that child behaviour instead of the tests.
func TestMain(m *testing.M) {
	if mode := os.Getenv("SUPERVISOR_TEST_CHILD"); mode != "" {
		child(mode)
		return
	}
	os.Exit(m.Run())
}

func child(mode string) {
	if f := os.Getenv("SUPERVISOR_TEST_STARTS"); f != "" {
		// One line per start.
		if w, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
			fmt.Fprintln(w, os.Getpid())
			w.Close()
		}
	}
	if f := os.Getenv("SUPERVISOR_TEST_PIDFILE"); f != "" {
		os.WriteFile(f+".tmp", []byte(strconv.Itoa(os.Getpid())), 0o600)
		os.Rename(f+".tmp", f)
	}
	switch mode {
	case "serve":
		// An idle server: exits when stdin ends, or on "exit N". With
		// SERVE_LOG it appends each line read to that file.
		var lines *os.File
		if f := os.Getenv("SERVE_LOG"); f != "" {
			lines, _ = os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		}
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			if lines != nil {
				fmt.Fprintln(lines, sc.Text())
			}
			if n, ok := strings.CutPrefix(sc.Text(), "exit "); ok {
				code, _ := strconv.Atoi(n)
				os.Exit(code)
			}
		}
		os.Exit(0)
	case "print-secrets":
		// Prints what it was given on stderr, as servers do when they log
		// their configuration, then fails.
		fmt.Fprintf(os.Stderr, "token=%s setting=%s args=%q\n", os.Getenv("MY_TOKEN"), os.Getenv("PLAIN_SETTING"), os.Args[1:])
		os.Exit(3)
	case "crash", "read-crash":
		if mode == "read-crash" {
			bufio.NewReader(os.Stdin).ReadString('\n')
		}
		fmt.Fprintln(os.Stderr, "starting up")
		fmt.Fprintln(os.Stderr, "fatal: boom")
		os.Exit(3)
	case "exit0":
		os.Exit(0)
	case "ignore-eof":
		// Ignores stdin's end; SIGTERM ends it.
		select {}
	case "ignore-term":
		// Ignores stdin's end and SIGTERM; only SIGKILL ends it.
		signal.Ignore(syscall.SIGTERM)
		select {}
	case "grandchild":
		// Starts a grandchild that ignores SIGTERM, writes its pid, and
		// itself ignores SIGTERM and stdin.
		signal.Ignore(syscall.SIGTERM)
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "SUPERVISOR_TEST_CHILD=ignore-term", "SUPERVISOR_TEST_PIDFILE="+os.Getenv("SUPERVISOR_TEST_GRANDPIDFILE"))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		select {}
	case "setsid-grandchild", "setsid-grandchild-noenv", "setsid-grandchild-exit":
		// Starts a grandchild in a session of its own (setsid(), as
		// `setsid sleep 1000 &` would) that ignores SIGTERM and has no
		// stdio, then serves MCP (or, -exit, exits 3: a crash that leaves
		// the grandchild behind). -noenv: the grandchild also drops
		// mcptray's token, so only its parentage gives it away.
		env := append(os.Environ(), "SUPERVISOR_TEST_CHILD=ignore-term", "SUPERVISOR_TEST_PIDFILE="+os.Getenv("SUPERVISOR_TEST_GRANDPIDFILE"))
		if mode == "setsid-grandchild-noenv" {
			env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, spawnIDVar+"=") })
		}
		startChild(env, &syscall.SysProcAttr{Setsid: true}, false)
		if mode == "setsid-grandchild-exit" {
			waitPidFile(os.Getenv("SUPERVISOR_TEST_GRANDPIDFILE"))
			os.Exit(3)
		}
		demo.Serve(context.Background(), os.Stdin, os.Stdout, nil)
		os.Exit(0)
	case "setsid-noenv-pipes", "setsid-noenv-nopipes":
		// A grandchild in a session of its own with a cleared environment
		// (no token, no mark: only what it needs to run), keeping the
		// server's stdin, stdout and stderr or with none; then serves.
		startChild(clearedEnv("ignore-term"), &syscall.SysProcAttr{Setsid: true}, mode == "setsid-noenv-pipes")
		waitPidFile(os.Getenv("SUPERVISOR_TEST_GRANDPIDFILE"))
		demo.Serve(context.Background(), os.Stdin, os.Stdout, nil)
		os.Exit(0)
	case "vanish":
		// A middle process in a session of its own with a cleared
		// environment and no stdio starts the grandchild the same way and
		// exits at once: nothing is left that names the grandchild but
		// its cgroup.
		middle := clearedEnv("vanish-middle")
		middle[1] = "SUPERVISOR_TEST_PIDFILE=" // only the grandchild writes it
		startChild(middle, &syscall.SysProcAttr{Setsid: true}, false)
		waitPidFile(os.Getenv("SUPERVISOR_TEST_GRANDPIDFILE"))
		demo.Serve(context.Background(), os.Stdin, os.Stdout, nil)
		os.Exit(0)
	case "vanish-middle":
		startChild(clearedEnv("ignore-term"), nil, false)
		os.Exit(0)
	case "daemonize":
		// A double fork: starts a middle process in a new session with
		// stdin, stdout and stderr, and exits 0 at once; the middle one
		// starts the server and exits 0 too.
		startChild(append(os.Environ(), "SUPERVISOR_TEST_CHILD=daemon-middle", "SUPERVISOR_TEST_PIDFILE="), &syscall.SysProcAttr{Setsid: true}, true)
		os.Exit(0)
	case "daemon-middle":
		startChild(append(os.Environ(), "SUPERVISOR_TEST_CHILD=daemon-serve", "SUPERVISOR_TEST_PIDFILE="+os.Getenv("SUPERVISOR_TEST_GRANDPIDFILE")), nil, true)
		os.Exit(0)
	case "daemon-serve":
		// The daemon: serves MCP on the stdin and stdout it inherited.
		// With SUPERVISOR_TEST_LINGER it does not exit when its client
		// goes away.
		demo.Serve(context.Background(), os.Stdin, os.Stdout, nil)
		if os.Getenv("SUPERVISOR_TEST_LINGER") != "" {
			select {}
		}
		os.Exit(0)
	case "supervise":
		// A supervisor of its own (a stand-in for `mcptray daemon`): runs
		// the servers described in SUPERVISOR_TEST_SERVERS (name=mode,…)
		// with records in SUPERVISOR_TEST_PROCDIR, prints "ready" once
		// they all are, and runs until killed.
		superviseChild()
	case "stderr-script":
		// Long line, invalid UTF-8, CRLF, then an unfinished line.
		w := bufio.NewWriter(os.Stderr)
		w.WriteString("hello\r\n")
		w.WriteString(strings.Repeat("x", 40000) + "\n")
		w.WriteString("bad \xff\xfe bytes\n")
		w.WriteString("no newline at the end")
		w.Flush()
		os.Exit(4)
	case "stderr-flood":
		// Writes stderr at SUPERVISOR_TEST_RATE bytes/s (0: as fast as it
		// can) until stdin ends.
		rate, _ := strconv.Atoi(os.Getenv("SUPERVISOR_TEST_RATE"))
		go func() {
			b := make([]byte, 1)
			os.Stdin.Read(b)
			os.Exit(0)
		}()
		line := []byte(strings.Repeat("flood of diagnostic output ", 4) + "\n")
		chunk := make([]byte, 0, 64<<10)
		for len(chunk)+len(line) <= cap(chunk) {
			chunk = append(chunk, line...)
		}
		start := time.Now()
		var sent int
		for {
			n, err := os.Stderr.Write(chunk)
			if err != nil {
				os.Exit(1)
			}
			sent += n
			if rate > 0 {
				if ahead := time.Duration(float64(sent)/float64(rate)*float64(time.Second)) - time.Since(start); ahead > 0 {
					time.Sleep(ahead)
				}
			}
		}
	case "mcp":
		mcpChild()
	default:
		fmt.Fprintln(os.Stderr, "unknown child mode", mode)
		os.Exit(2)
	}
}

// mcpChild is a small legacy (initialize-era) MCP server on stdio. Its
// misbehaviours are chosen by environment variables:
//
//	MCP_ON_DISCOVER=die   exit 1 on server/discover (before initialize)
//	MCP_PING=hang|error   never answer ping, or answer it with an error
//	MCP_BANNER=text       print text on stdout first (not JSON-RPC)
//	MCP_NOISE_AFTER=text  print text on stdout once the handshake is done
//	MCP_CRASH_AFTER=d     exit 1 after d (after the handshake)
//	MCP_METHODS=file      append each method received to file
func mcpChild() {
	out := bufio.NewWriter(os.Stdout)
	var mu sync.Mutex
	send := func(v any) {
		mu.Lock()
		defer mu.Unlock()
		b, _ := json.Marshal(v)
		out.Write(append(b, '\n'))
		out.Flush()
	}
	if b := os.Getenv("MCP_BANNER"); b != "" {
		fmt.Fprintln(out, b)
		out.Flush()
	}
	var methods *os.File
	if f := os.Getenv("MCP_METHODS"); f != "" {
		methods, _ = os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || m.Method == "" {
			continue
		}
		if methods != nil {
			fmt.Fprintln(methods, m.Method)
		}
		reply := func(result any) { send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result}) }
		fail := func(code int, msg string) {
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": code, "message": msg}})
		}
		switch m.Method {
		case "server/discover":
			if os.Getenv("MCP_ON_DISCOVER") == "die" {
				fmt.Fprintln(os.Stderr, "unknown method server/discover; bye")
				os.Exit(1)
			}
			fail(-32601, "method not found")
		case "initialize":
			v := m.Params.ProtocolVersion
			if v == "" || v > "2025-11-25" {
				v = "2025-11-25"
			}
			reply(map[string]any{"protocolVersion": v, "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "test-mcp", "version": "0.1"}})
			if d, err := time.ParseDuration(os.Getenv("MCP_CRASH_AFTER")); err == nil {
				go func() {
					time.Sleep(d)
					fmt.Fprintln(os.Stderr, "crashing as told")
					os.Exit(1)
				}()
			}
		case "notifications/initialized":
			if b := os.Getenv("MCP_NOISE_AFTER"); b != "" {
				mu.Lock()
				fmt.Fprintln(out, b)
				out.Flush()
				mu.Unlock()
			}
		case "tools/list":
			reply(map[string]any{"tools": []any{map[string]any{"name": "echo", "inputSchema": map[string]any{"type": "object"}}}})
		case "ping":
			switch os.Getenv("MCP_PING") {
			case "hang":
			case "error":
				fail(-32603, "ping is broken")
			default:
				reply(map[string]any{})
			}
		default:
			if len(m.ID) > 0 {
				fail(-32601, "method not found")
			}
		}
	}
	os.Exit(0)
}

// childServer is a server entry that runs the test binary as mode.
func childServer(t testing.TB, name, mode string, env ...string) *registry.Server {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// A race-enabled binary sleeps 1 s on exit by default; a stop test
	// would see a slow server.
	e := map[string]string{"SUPERVISOR_TEST_CHILD": mode, "GORACE": "atexit_sleep_ms=0"}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		e[k] = v
	}
	return &registry.Server{Name: name, Command: exe, Env: e, Autostart: true}
}

// testOptions are quick, file-less options.
func testOptions(t testing.TB) *Options {
	return &Options{
		LogDir:     t.TempDir(),
		ProcDir:    t.TempDir(),
		NoLogFiles: true,
		Jitter:     -1,
		StopGrace:  200 * time.Millisecond,
		KillGrace:  300 * time.Millisecond,
		Environ:    func(context.Context) []string { return os.Environ() },
	}
}

// runSup runs s until the test ends and checks that Run returns.
func runSup(t testing.TB, s *Supervisor) context.CancelFunc {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	stop := sync.OnceFunc(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("Run did not return")
		}
	})
	t.Cleanup(stop)
	return stop
}

// waitState waits (in real time, generously) until cond holds for the
// server's state.
func waitState(t testing.TB, s *Supervisor, name string, what string, cond func(st *ServerState) bool) ServerState {
	t.Helper()
	deadline := time.After(20 * time.Second)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if st := s.Snapshot().Server(name); st != nil && cond(st) {
			return *st
		}
		select {
		case <-deadline:
			st := s.Snapshot().Server(name)
			if st == nil {
				t.Fatalf("%s: gone while waiting for %s", name, what)
			}
			t.Fatalf("%s: waited for %s; state %s (%s) diag %v", name, what, st.State, st.Reason, st.Diagnosis)
		case <-tick.C:
		}
	}
}

func inState(state State) func(*ServerState) bool {
	return func(st *ServerState) bool { return st.State == state }
}

// alive reports whether pid is a live (not zombie) process.
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	if runtime.GOOS == "linux" {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return false
		}
		// state is the field after the ")" that closes the command name.
		if i := strings.LastIndexByte(string(b), ')'); i >= 0 && i+2 < len(b) && b[i+2] == 'Z' {
			return false
		}
	}
	return true
}

// waitGone waits until pid has died (a killed orphan needs a moment to be
// reaped by init).
func waitGone(t testing.TB, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("%s (pid %d) survived", what, pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func readPid(t testing.TB, file string) int {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, err := os.ReadFile(file)
		if err == nil {
			pid, err := strconv.Atoi(string(b))
			if err == nil {
				return pid
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s", file)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func pidFile(t testing.TB, name string) string { return filepath.Join(t.TempDir(), name+".pid") }

// startChild starts the test binary with env; stdio hands it this
// process's stdin, stdout and stderr, else it gets none.
func startChild(env []string, attr *syscall.SysProcAttr, stdio bool) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = env
	cmd.SysProcAttr = attr
	if stdio {
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// clearedEnv is an environment with nothing of the server's: the child
// mode, the grandchild's pid file and what a race-enabled binary needs.
func clearedEnv(mode string) []string {
	gpf := os.Getenv("SUPERVISOR_TEST_GRANDPIDFILE")
	return []string{"SUPERVISOR_TEST_CHILD=" + mode, "SUPERVISOR_TEST_PIDFILE=" + gpf, "SUPERVISOR_TEST_GRANDPIDFILE=" + gpf, "GORACE=atexit_sleep_ms=0"}
}

// waitPidFile waits until a child wrote its pid file.
func waitPidFile(f string) {
	for {
		if _, err := os.Stat(f); err == nil {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// mcpChecker is the real health check (as the app plugs it in).
type mcpChecker struct{}

func (mcpChecker) Connect(ctx context.Context, t healthcheck.Target) (Session, error) {
	s, err := healthcheck.Connect(ctx, t, &healthcheck.Options{ClientName: "supervisor-test", ClientVersion: "1"})
	if err != nil {
		return nil, err
	}
	return s, nil
}

func superviseChild() {
	exe, _ := os.Executable()
	var servers []*registry.Server
	for _, nm := range strings.Split(os.Getenv("SUPERVISOR_TEST_SERVERS"), ",") {
		name, mode, _ := strings.Cut(nm, "=")
		env := map[string]string{"SUPERVISOR_TEST_CHILD": mode, "GORACE": "atexit_sleep_ms=0"}
		if f := os.Getenv("SUPERVISOR_TEST_GRANDPIDFILE"); f != "" {
			env["SUPERVISOR_TEST_GRANDPIDFILE"] = f + "." + name
		}
		servers = append(servers, &registry.Server{Name: name, Command: exe, Autostart: true, Env: env})
	}
	if os.Getenv("SUPERVISOR_TEST_NOCGROUP") != "" {
		noCgroups.Store(true)
	}
	s := New(servers, &Options{Checker: mcpChecker{}, NoLogFiles: true, ProcDir: os.Getenv("SUPERVISOR_TEST_PROCDIR"),
		Environ: func(context.Context) []string { return os.Environ() }})
	go s.Run(context.Background())
	for {
		ready := 0
		for _, st := range s.Snapshot().Servers {
			if st.State == StateReady {
				ready++
			}
		}
		if ready == len(servers) {
			fmt.Println("ready")
			select {}
		}
		time.Sleep(5 * time.Millisecond)
	}
}
