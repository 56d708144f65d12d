package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"mcptray/demo"
	"mcptray/healthcheck"
	"mcptray/registry"
	"mcptray/supervisor"
)

// TestMain lets the test binary play the demo server (CONTROL_TEST_DEMO=1).
func TestMain(m *testing.M) {
	if os.Getenv("CONTROL_TEST_DEMO") != "" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
		defer stop()
		fmt.Fprintf(os.Stderr, "demo ready pid %d\n", os.Getpid())
		demo.Serve(ctx, os.Stdin, os.Stdout, nil)
		fmt.Fprintln(os.Stderr, "demo done")
		return
	}
	os.Exit(m.Run())
}

func demoServer(t *testing.T, name string) *registry.Server {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return &registry.Server{Name: name, Command: exe, Autostart: true,
		Env: map[string]string{"CONTROL_TEST_DEMO": "1", "GORACE": "atexit_sleep_ms=0"}}
}

// shortDir is a temp folder short enough for a socket path (108 bytes).
func shortDir(t *testing.T) string {
	d, err := os.MkdirTemp("", "ctl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

type daemon struct {
	ln     *Listener
	client *Client
	sock   string
	stop   func()
}

// startDaemon runs a supervisor for servers behind a control server on a
// socket in a fresh folder, like `mcptray daemon` does, and dials it.
func startDaemon(t *testing.T, cfgPath string, servers ...*registry.Server) *daemon {
	t.Helper()
	sock := filepath.Join(shortDir(t), "mcptray", SocketName)
	ln, err := Listen(sock, nil)
	if err != nil {
		t.Fatal(err)
	}
	serveFirstPipe(t, sock)
	eng := NewLocal(&registry.Config{Path: cfgPath, Servers: servers}, &LocalOptions{
		Supervisor: &supervisor.Options{
			NoLogFiles: true, StopGrace: 200 * time.Millisecond, KillGrace: 300 * time.Millisecond,
			Environ: func(context.Context) []string { return os.Environ() },
		},
		NoWatch: true,
	})
	srv := NewServer(eng, &ServerOptions{Socket: sock, Version: "test"})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { eng.Run(ctx) })
	wg.Go(func() {
		if err := srv.Serve(ctx, ln); err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	stop := sync.OnceFunc(func() {
		cancel()
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("daemon did not stop")
		}
	})
	t.Cleanup(stop)
	c, err := Dial(context.Background(), &ClientOptions{Socket: sock})
	if err != nil {
		t.Fatal(err)
	}
	return &daemon{ln: ln, client: c, sock: sock, stop: stop}
}

// waitFor polls the daemon through the client until cond holds.
func waitFor(t *testing.T, c *Client, what string, cond func(s supervisor.Snapshot) bool) supervisor.Snapshot {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s, err := c.FetchSnapshot(context.Background())
		if err == nil && cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; last snapshot %+v (err %v)", what, s, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func stateIs(name string, st supervisor.State) func(supervisor.Snapshot) bool {
	return func(s supervisor.Snapshot) bool {
		x := s.Server(name)
		return x != nil && x.State == st
	}
}

var bg = context.Background()

func TestRoundTrip(t *testing.T) {
	dir := shortDir(t)
	cfg := filepath.Join(dir, "servers.toml")
	exe, _ := os.Executable()
	os.WriteFile(cfg, fmt.Appendf(nil, "[servers.demo]\ncommand = %q\nenv = { CONTROL_TEST_DEMO = \"1\", GORACE = \"atexit_sleep_ms=0\" }\n", exe), 0o600)
	d := startDaemon(t, cfg, demoServer(t, "demo"))
	c := d.client

	if info := c.Info(); info.PID != os.Getpid() || info.API != "v1" || info.ConfigPath != cfg || info.Socket != d.sock {
		t.Errorf("info = %+v", info)
	}
	s := waitFor(t, c, "demo running", stateIs("demo", supervisor.StateRunning))
	pid := s.Server("demo").PID
	if !alive(pid) {
		t.Fatalf("pid %d not alive", pid)
	}

	t.Run("log", func(t *testing.T) {
		var page *LogPage
		deadline := time.Now().Add(10 * time.Second)
		for page == nil || len(page.Lines) == 0 {
			if time.Now().After(deadline) {
				t.Fatal("no stderr line")
			}
			p, err := c.LogPage(context.Background(), "demo", 0)
			if err != nil {
				t.Fatal(err)
			}
			page = p
			time.Sleep(20 * time.Millisecond)
		}
		if want := fmt.Sprintf("demo ready pid %d", pid); page.Lines[0].Text != want || page.Next != page.Lines[len(page.Lines)-1].Seq+1 {
			t.Errorf("log page %+v, want %q", page, want)
		}
		lines, next, _ := c.Log(bg, "demo", page.Next)
		if len(lines) != 0 || next != page.Next {
			t.Errorf("nothing new expected: %v %d", lines, next)
		}
	})

	t.Run("restart gives a new pid, followed log sees it", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		got := make(chan string, 10)
		done := make(chan error, 1)
		go func() {
			done <- c.FollowLog(ctx, "demo", 1, func(l supervisor.LogLine) { got <- l.Text })
		}()
		if err := c.Restart(bg, "demo"); err != nil {
			t.Fatal(err)
		}
		s := waitFor(t, c, "a new pid", func(s supervisor.Snapshot) bool {
			x := s.Server("demo")
			return x.State == supervisor.StateRunning && x.PID != pid && x.PID != 0
		})
		npid := s.Server("demo").PID
		want := fmt.Sprintf("demo ready pid %d", npid)
		timeout := time.After(10 * time.Second)
	wait:
		for {
			select {
			case l := <-got:
				if l == want {
					break wait
				}
			case <-timeout:
				t.Fatalf("followed log never showed %q", want)
			}
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("FollowLog: %v", err)
		}
		if s.Server("demo").Restarts != 1 {
			t.Errorf("restarts = %d", s.Server("demo").Restarts)
		}
		pid = npid
	})

	t.Run("stop and start", func(t *testing.T) {
		if err := c.Stop(bg, "demo"); err != nil {
			t.Fatal(err)
		}
		waitFor(t, c, "demo stopped", stateIs("demo", supervisor.StateStopped))
		if alive(pid) {
			t.Errorf("pid %d survives a stop", pid)
		}
		if err := c.Start(bg, "demo"); err != nil {
			t.Fatal(err)
		}
		waitFor(t, c, "demo running", stateIs("demo", supervisor.StateRunning))
		if err := c.CheckNow(bg, ""); err != nil {
			t.Errorf("check all: %v", err)
		}
	})

	t.Run("unknown server", func(t *testing.T) {
		for _, err := range []error{c.Restart(bg, "nope"), c.Command(context.Background(), "nope", "check"), func() error {
			_, err := c.LogPage(context.Background(), "nope", 0)
			return err
		}()} {
			if !errors.Is(err, supervisor.ErrUnknownServer) || !strings.Contains(err.Error(), `"nope"`) {
				t.Errorf("err = %v", err)
			}
		}
		if err := c.Command(context.Background(), "demo", "explode"); err == nil || !strings.Contains(err.Error(), "unknown action") {
			t.Errorf("bad action: %v", err)
		}
	})

	t.Run("reload reads the daemon's file", func(t *testing.T) {
		os.WriteFile(cfg, fmt.Appendf(nil, "[servers.demo]\ncommand = %q\nenv = { CONTROL_TEST_DEMO = \"1\", GORACE = \"atexit_sleep_ms=0\" }\n\n[servers.second]\ncommand = %q\nenv = { CONTROL_TEST_DEMO = \"1\" }\nautostart = false\n\n[servers.bad]\nurl = \"ftp://x\"\n", exe, exe), 0o600)
		res, err := c.Reload(bg)
		if err != nil {
			t.Fatal(err)
		}
		if res.Servers != 3 || res.Errors != 1 || res.ConfigPath != cfg {
			t.Errorf("reload = %+v", res)
		}
		s := waitFor(t, c, "three servers", func(s supervisor.Snapshot) bool { return len(s.Servers) == 3 })
		if bad := s.Server("bad"); bad.Server.Invalid == nil || !strings.Contains(bad.Server.Invalid.Error(), "ftp") {
			t.Errorf("invalid entry lost its error: %+v", bad.Server)
		}
		if err := c.Start(bg, "bad"); err == nil || !strings.Contains(err.Error(), "cannot start") {
			t.Errorf("starting an invalid server: %v", err)
		}
		// A broken file changes nothing.
		os.WriteFile(cfg, []byte("[servers.demo\n"), 0o600)
		_, err = c.Reload(bg)
		var ce *ConfigError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), "nothing was changed") || ce.Diagnostic.Line == 0 || ce.Diagnostic.File != cfg {
			t.Errorf("broken file: %v (%+v)", err, ce)
		}
		if p := c.Status().ConfigProblem; p != nil {
			t.Errorf("status before a new snapshot: %+v", p)
		}
		c.FetchSnapshot(bg)
		if p := c.Status().ConfigProblem; p == nil || p.Line == 0 || p.File != cfg {
			t.Errorf("the daemon's status does not say the file does not load: %+v", p)
		}
		if s := waitFor(t, c, "demo still up", stateIs("demo", supervisor.StateRunning)); len(s.Servers) != 3 {
			t.Errorf("servers after a broken reload: %d", len(s.Servers))
		}
	})

	t.Run("Run streams changes", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- c.Run(ctx) }()
		c.Stop(bg, "demo")
		deadline := time.After(20 * time.Second)
		for {
			if st := c.Snapshot().Server("demo"); st != nil && st.State == supervisor.StateStopped {
				break
			}
			select {
			case <-c.Changes():
			case <-deadline:
				t.Fatalf("stream never showed demo stopped: %+v", c.Snapshot())
			}
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})

	// The daemon stops with streams open: Serve returns, nothing survives.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c.Start(bg, "demo")
	s = waitFor(t, c, "demo running", stateIs("demo", supervisor.StateRunning))
	pid = s.Server("demo").PID
	go c.FollowLog(ctx, "demo", 0, func(supervisor.LogLine) {})
	go c.Run(ctx)
	time.Sleep(50 * time.Millisecond)
	d.stop()
	if alive(pid) {
		t.Errorf("server pid %d survives the daemon", pid)
	}
	if _, err := os.Stat(d.sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket left behind: %v", err)
	}
	if _, err := Dial(context.Background(), &ClientOptions{Socket: d.sock}); !errors.Is(err, ErrNoDaemon) {
		t.Errorf("dial after stop: %v", err)
	}
}

func TestListen(t *testing.T) {
	t.Run("second daemon refused", func(t *testing.T) {
		sock := filepath.Join(shortDir(t), "mcptray", SocketName)
		ln, err := Listen(sock, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		_, err = Listen(sock, nil)
		var are *AlreadyRunningError
		if !errors.As(err, &are) || !errors.Is(err, ErrAlreadyRunning) || are.PID != os.Getpid() || are.Socket != sock {
			t.Fatalf("second Listen: %v", err)
		}
		if !strings.Contains(err.Error(), sock) || !strings.Contains(err.Error(), fmt.Sprint(os.Getpid())) {
			t.Errorf("message does not say where: %v", err)
		}
		// Once the first goes, the next one may start.
		ln.Close()
		ln2, err := Listen(sock, nil)
		if err != nil {
			t.Fatalf("after the first closed: %v", err)
		}
		ln2.Close()
	})

	t.Run("no daemon", func(t *testing.T) {
		sock := filepath.Join(shortDir(t), "mcptray", SocketName)
		_, err := Dial(context.Background(), &ClientOptions{Socket: sock})
		if !errors.Is(err, ErrNoDaemon) || !strings.HasPrefix(err.Error(), "no daemon running; start it with `mcptray daemon` or `mcptray service install`") {
			t.Errorf("err = %v", err)
		}
	})
}

func TestWireRoundTrip(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 123456789, time.UTC)
	srv := &registry.Server{Name: "gh", Command: "npx", Args: []string{"-y", "x"}, Env: map[string]string{"T": "${env:T}"},
		Cwd: "~/p", Autostart: true, Restart: registry.RestartAlways, Description: "d", Line: 7,
		Invalid: &registry.ServerError{Server: "gh", Field: "cwd", Message: "bad"}}
	remote := &registry.Server{Name: "r", URL: "https://x/mcp", TransportName: registry.TransportSSE, Headers: map[string]string{"A": "b"}, Disabled: true,
		Start: registry.StartLazy, IdleStop: 10 * time.Minute, Unshared: true}
	inst := remote.Clone()
	inst.Name = "r#2"
	in := supervisor.Snapshot{Time: t0, Servers: []supervisor.ServerState{
		{
			Name: "gh", Server: srv, Transport: registry.TransportStdio, State: supervisor.StateReady, Reason: "r", Since: t0,
			PID: 42, Command: "npx → /usr/bin/npx", ResolvedPath: "/usr/bin/npx", StartedAt: t0.Add(-time.Hour),
			Restarts: 3, NextAttempt: t0.Add(time.Second),
			LastExit:   &supervisor.ExitInfo{Code: -1, Signal: "SIGKILL", Uptime: 1500 * time.Millisecond, Time: t0},
			StderrTail: []supervisor.LogLine{{Seq: 9, Time: t0, Text: "x", Partial: true}},
			Diagnosis:  &healthcheck.Diagnosis{Code: healthcheck.CodeCrashed, Message: "m", Evidence: []string{"e"}, Fix: "f"},
			Report: &healthcheck.Report{Era: healthcheck.EraLegacy, EraSource: "s", ProtocolVersion: "2025-11-25",
				ServerInfo: healthcheck.ServerInfo{Name: "n", Version: "v", Title: "t"}, Capabilities: json.RawMessage(`{"tools":{}}`),
				Instructions: "i", Tools: []healthcheck.Tool{{Name: "a", InputSchema: json.RawMessage(`{"type":"object"}`)}},
				Resources:         []healthcheck.Resource{{URI: "u", Name: "n"}},
				ResourceTemplates: []healthcheck.ResourceTemplate{{URITemplate: "u/{x}", Name: "t"}},
				Prompts:           []healthcheck.Prompt{{Name: "p", Arguments: []healthcheck.PromptArgument{{Name: "a", Required: true}}}},
				ConnectLatency:    1234567 * time.Nanosecond,
				Diagnoses:         []healthcheck.Diagnosis{{Code: healthcheck.CodeStdoutNoise, Message: "noise"}}},
			Probes: healthcheck.ProbeStats{Count: 2, Last: time.Millisecond, Min: 1, Median: 2, P95: 3, ConsecutiveFailures: 1,
				LastError: "e", LastAt: t0, Recent: []time.Duration{time.Millisecond, 2 * time.Microsecond}},
			Era:      healthcheck.EraLegacy,
			Warnings: []healthcheck.Diagnosis{{Code: healthcheck.CodeStdoutNoise, Message: "noise"}},
			LastLive: t0, Failures: 2, Level: supervisor.LevelWarn,
			Start: registry.StartAuto, Clients: 3, LastUse: t0.Add(-time.Minute),
		},
		{Name: "r", Server: remote, Transport: registry.TransportSSE, State: supervisor.StateStopped,
			Start: registry.StartLazy, IdleStop: 10 * time.Minute, WaitsForClient: true, Instances: 1},
		{Name: "r#2", Server: inst, Transport: registry.TransportSSE, State: supervisor.StateReady, InstanceOf: "r"},
	}}
	// Every field of a server's state is set in some entry above, so the
	// round trip below covers it: a new field must be carried on the wire.
	for i := range reflect.TypeFor[supervisor.ServerState]().NumField() {
		f := reflect.TypeFor[supervisor.ServerState]().Field(i)
		set := false
		for _, st := range in.Servers {
			set = set || !reflect.ValueOf(st).Field(i).IsZero()
		}
		if !set {
			t.Errorf("ServerState.%s is set in no entry of this test: set it, and carry it in wireServerState", f.Name)
		}
	}
	status := Status{ConfigPath: "/c/servers.toml", WatchProblem: "w",
		ConfigProblem: &registry.Diagnostic{Severity: registry.SeverityError, File: "/c/servers.toml", Line: 3, Col: 9, Message: "m", Source: "s"}}
	data, err := json.Marshal(toWire(in, status))
	if err != nil {
		t.Fatal(err)
	}
	var w wireSnapshot
	if err := json.Unmarshal(data, &w); err != nil {
		t.Fatal(err)
	}
	out, outStatus := fromWire(w)
	if !reflect.DeepEqual(status, outStatus) {
		t.Errorf("status: %+v, want %+v", outStatus, status)
	}
	if got := out.Servers[0].Server.Invalid; got == nil || got.Error() != srv.Invalid.Error() {
		t.Fatalf("Invalid = %v", got)
	}
	// The error's type does not cross the socket, its text does.
	out.Servers[0].Server.Invalid = srv.Invalid
	if !reflect.DeepEqual(in, out) {
		a, _ := json.MarshalIndent(in, "", " ")
		b, _ := json.MarshalIndent(out, "", " ")
		t.Errorf("round trip differs:\n%s\n---\n%s", a, b)
	}
	if out.Servers[0].Report.ConnectLatency != 1234567 || len(out.Servers[0].Probes.Recent) != 2 {
		t.Errorf("hidden latencies lost")
	}
}

// TestNoExportEndpoint: exports are made by the command line and the app
// from the config file; the daemon does not serve them.
func TestNoExportEndpoint(t *testing.T) {
	rec := httptest.NewRecorder()
	NewServer(NewLocal(&registry.Config{}, nil), nil).Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/v1/export?client=cursor", nil))
	if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "no such API endpoint") {
		t.Errorf("GET /v1/export: %d %s", rec.Code, rec.Body)
	}
}

// TestTransitionsAcrossTheSocket: the engine's transitions reach a client
// in order, on the change stream and on /v1/transitions, and several
// watchers of the client wake on one change.
func TestTransitionsAcrossTheSocket(t *testing.T) {
	d := startDaemon(t, "", demoServer(t, "demo"))
	c := d.client
	waitFor(t, c, "demo running", stateIs("demo", supervisor.StateRunning))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runDone := make(chan error, 1)
	// Wait for the stream's first message: transitions after it are
	// streamed. (Snapshot alone does not tell: without a stream it asks
	// the daemon directly.) The channel is taken before Run, so the first
	// message's signal cannot be missed.
	first := c.Watch()
	go func() { runDone <- c.Run(ctx) }()
	select {
	case <-first:
	case <-time.After(20 * time.Second):
		t.Fatal("no message on the change stream")
	}
	if c.Snapshot().Server("demo") == nil {
		t.Fatal("the stream's first snapshot lacks demo")
	}
	w1, w2 := c.Watch(), c.Watch()
	if err := c.Stop(ctx, "demo"); err != nil {
		t.Fatal(err)
	}
	for i, w := range []<-chan struct{}{w1, w2} {
		select {
		case <-w:
		case <-time.After(20 * time.Second):
			t.Fatalf("watcher %d not woken", i)
		}
	}
	var got []string
	deadline := time.After(20 * time.Second)
	for {
		trs, _ := c.Transitions(0)
		got = got[:0]
		for _, tr := range trs {
			got = append(got, string(tr.From)+">"+string(tr.To))
		}
		if strings.Join(got, ",") == "running>stopping,stopping>stopped" {
			break
		}
		select {
		case <-c.Watch():
		case <-deadline:
			t.Fatalf("client transitions %v, want running>stopping,stopping>stopped", got)
		}
	}
	page, err := c.FetchTransitions(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(page.Transitions); n != 3 || page.Transitions[n-1].To != supervisor.StateStopped || page.Next != page.Transitions[n-1].Seq+1 {
		t.Errorf("daemon's transitions: %+v next %d", page.Transitions, page.Next)
	}
	cancel()
	<-runDone
}
