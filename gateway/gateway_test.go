//go:build unix

package gateway_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/registry"
	"mcptray/supervisor"
)

func (e *env) pid() int {
	for _, s := range e.sup.Snapshot().Servers {
		if s.Name == "t" {
			return s.PID
		}
	}
	return 0
}

// Every session sees the upstream's identity, tools, resources and
// prompts, and all of them reach the one process.
func TestSessionsShareOneProcess(t *testing.T) {
	e := newEnv(t)
	var sessions []*mcp.ClientSession
	for i := range 3 {
		sessions = append(sessions, e.connect(nil, "client"+string(rune('a'+i))))
	}
	pids := map[string]bool{}
	for _, cs := range sessions {
		ir := cs.InitializeResult()
		if ir.ServerInfo.Name != "gateway-test" || ir.ServerInfo.Version != "1.2.3" || ir.Instructions != "test server" {
			t.Fatalf("handshake through the gateway = %+v, %q; want the upstream's", ir.ServerInfo, ir.Instructions)
		}
		if ir.Capabilities.Tools == nil || ir.Capabilities.Resources == nil || !ir.Capabilities.Resources.Subscribe || ir.Capabilities.Completions == nil {
			t.Fatalf("capabilities through the gateway = %+v", ir.Capabilities)
		}
		pids[callText(t, cs, "pid", nil)] = true
		if got := callText(t, cs, "echo", map[string]any{"message": "hi"}); got != "hi" {
			t.Fatalf("echo = %q", got)
		}
		tools, err := cs.ListTools(context.Background(), nil)
		if err != nil || len(tools.Tools) != 10 {
			t.Fatalf("tools/list = %v, %v", tools, err)
		}
		rd, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "test://r"})
		if err != nil || rd.Contents[0].Text != "hello" {
			t.Fatalf("resources/read = %v, %v", rd, err)
		}
		pr, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"who": "bob"}})
		if err != nil || pr.Messages[0].Content.(*mcp.TextContent).Text != "hi bob" {
			t.Fatalf("prompts/get = %v, %v", pr, err)
		}
		cp, err := cs.Complete(context.Background(), &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "greet"}, Argument: mcp.CompleteParamsArgument{Name: "who", Value: "x"}})
		if err != nil || cp.Completion.Values[0] != "x-done" {
			t.Fatalf("completion/complete = %v, %v", cp, err)
		}
	}
	if len(pids) != 1 {
		t.Fatalf("sessions reached processes %v; want one", pids)
	}
	srv := e.gw.Servers()
	if len(srv) != 1 || len(srv[0].Sessions) != 3 {
		t.Fatalf("gateway servers = %+v; want 3 sessions of t", srv)
	}
	if c := srv[0].Usage.Tools["echo"]; c.Calls != 3 {
		t.Fatalf("echo calls = %+v", c)
	}
	if srv[0].Sessions[0].ClientName != "clienta" || srv[0].Sessions[0].PID != 1 {
		t.Fatalf("session = %+v", srv[0].Sessions[0])
	}
}

// Two sessions using the same progress token each get their own progress.
func TestProgressGoesToItsSession(t *testing.T) {
	e := newEnv(t)
	var mu sync.Mutex
	got := map[string][]float64{}
	var wg sync.WaitGroup
	for _, name := range []string{"a", "b"} {
		cs := e.connect(&mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			if r.Params.ProgressToken != "tok" && r.Params.ProgressToken != float64(1) {
				t.Errorf("%s got progress token %v", name, r.Params.ProgressToken)
			}
			got[name] = append(got[name], r.Params.Progress)
		}}, name)
		steps := 3
		if name == "b" {
			steps = 5
		}
		wg.Go(func() {
			p := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"steps": steps}}
			p.SetProgressToken("tok")
			if _, err := cs.CallTool(context.Background(), p); err != nil {
				t.Errorf("slow: %v", err)
			}
		})
	}
	wg.Wait()
	waitFor(t, "progress", func() bool { mu.Lock(); defer mu.Unlock(); return len(got["a"]) == 3 && len(got["b"]) == 5 })
}

// A server's sampling request goes to the session whose call is in flight;
// with no session able to take it, the server gets an error saying so.
func TestSamplingGoesToTheCaller(t *testing.T) {
	e := newEnv(t)
	sampler := func(who string) *mcp.ClientOptions {
		return &mcp.ClientOptions{CreateMessageHandler: func(_ context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: who}}, nil
		}}
	}
	a := e.connect(sampler("from a"), "a")
	b := e.connect(sampler("from b"), "b")
	plain := e.connect(nil, "plain")
	if got := callText(t, a, "sample", map[string]any{"message": "x"}); got != "sampled: from a" {
		t.Fatalf("a's sample = %q", got)
	}
	if got := callText(t, b, "sample", map[string]any{"message": "x"}); got != "sampled: from b" {
		t.Fatalf("b's sample = %q", got)
	}
	if got := callText(t, plain, "sample", map[string]any{"message": "x"}); !strings.Contains(got, "no client session of t can answer sampling/createMessage") {
		t.Fatalf("sample without a sampling client = %q", got)
	}
}

// roots/list goes to a session that declared roots.
func TestRootsComeFromTheClient(t *testing.T) {
	e := newEnv(t)
	c := mcp.NewClient(&mcp.Implementation{Name: "r"}, nil)
	c.AddRoots(&mcp.Root{URI: "file:///work/a"})
	cs, _ := e.connectClient(c)
	if got := callText(t, cs, "roots", nil); got != "file:///work/a" {
		t.Fatalf("roots = %q", got)
	}
}

// Logs go to each session at its own level, and none to a session that
// set no level, from a server of either era: an initialize-era one is
// told the most verbose level with logging/setLevel, a 2026-07-28 one
// (which has no logging/setLevel) in each request's _meta.
func TestLogLevelPerSession(t *testing.T) {
	for _, era := range []struct{ name, env string }{{"initialize era", ""}, {"2026-07-28", "GATEWAY_TEST_MODERN_ONLY=1"}} {
		t.Run(era.name, func(t *testing.T) {
			var extra []string
			if era.env != "" {
				extra = append(extra, era.env)
			}
			e := newEnv(t, extra...)
			var mu sync.Mutex
			logs := map[string][]string{}
			opts := func(name string) *mcp.ClientOptions {
				return &mcp.ClientOptions{LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
					mu.Lock()
					defer mu.Unlock()
					logs[name] = append(logs[name], r.Params.Data.(string))
				}}
			}
			dbg := e.connect(opts("debug"), "debug")
			info := e.connect(opts("info"), "info")
			quiet := e.connect(opts("quiet"), "quiet")
			if err := dbg.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
				t.Fatal(err)
			}
			if err := info.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
				t.Fatal(err)
			}
			callText(t, info, "log", map[string]any{"message": "m"})
			waitFor(t, "logs", func() bool { mu.Lock(); defer mu.Unlock(); return len(logs["debug"]) == 2 && len(logs["info"]) == 1 })
			callText(t, quiet, "log", map[string]any{"message": "q"})
			waitFor(t, "the quiet session's call's logs", func() bool { mu.Lock(); defer mu.Unlock(); return len(logs["debug"]) == 4 })
			callText(t, quiet, "echo", map[string]any{"message": "flush"})
			mu.Lock()
			defer mu.Unlock()
			if len(logs["info"]) != 2 || logs["info"][0] != "m" || logs["info"][1] != "q" {
				t.Fatalf("info session got %v", logs["info"])
			}
			if len(logs["quiet"]) != 0 {
				t.Fatalf("the session that set no level got %v", logs["quiet"])
			}
		})
	}
}

// resources/updated reaches only the sessions subscribed.
func TestResourceUpdatesOnlyToSubscribers(t *testing.T) {
	e := newEnv(t)
	var mu sync.Mutex
	updates := map[string]int{}
	opts := func(name string) *mcp.ClientOptions {
		return &mcp.ClientOptions{ResourceUpdatedHandler: func(context.Context, *mcp.ResourceUpdatedNotificationRequest) {
			mu.Lock()
			updates[name]++
			mu.Unlock()
		}}
	}
	sub := e.connect(opts("sub"), "sub")
	other := e.connect(opts("other"), "other")
	if err := sub.Subscribe(context.Background(), &mcp.SubscribeParams{URI: "test://r"}); err != nil {
		t.Fatal(err)
	}
	callText(t, other, "touch", nil)
	waitFor(t, "the update", func() bool { mu.Lock(); defer mu.Unlock(); return updates["sub"] == 1 })
	callText(t, other, "echo", map[string]any{"message": "flush"})
	mu.Lock()
	defer mu.Unlock()
	if updates["other"] != 0 {
		t.Fatalf("a session not subscribed got %d updates", updates["other"])
	}
}

// A cancelled call is cancelled upstream.
func TestCancelReachesTheServer(t *testing.T) {
	e := newEnv(t)
	cs := e.connect(nil, "c")
	mark := filepath.Join(t.TempDir(), "cancelled")
	began := filepath.Join(filepath.Dir(mark), "began")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"steps": -1, "mark": mark, "began": began}})
		done <- err
	}()
	// The server has the call (the gateway counting it in flight is
	// not enough: it may not have sent it yet).
	waitFor(t, "the call to reach the server", func() bool { _, err := os.Stat(began); return err == nil })
	cancel()
	<-done
	waitFor(t, "the server to see the cancellation", func() bool { _, err := os.Stat(mark); return err == nil })
}

// A client that goes away mid-call has its request cancelled upstream.
func TestDisconnectCancelsUpstream(t *testing.T) {
	e := newEnv(t)
	cs, hangup := e.connectClient(mcp.NewClient(&mcp.Implementation{Name: "c"}, nil))
	mark := filepath.Join(t.TempDir(), "cancelled")
	began := filepath.Join(filepath.Dir(mark), "began")
	go func() {
		_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"steps": -1, "mark": mark, "began": began}})
	}()
	// The server has the call (the gateway counting it in flight is
	// not enough: it may not have sent it yet).
	waitFor(t, "the call to reach the server", func() bool { _, err := os.Stat(began); return err == nil })
	hangup()
	waitFor(t, "the server to see the cancellation", func() bool { _, err := os.Stat(mark); return err == nil })
}

// A server killed mid-call: the call fails saying so, the session stays,
// the next call reaches the new process, and a changed tool list is
// announced.
func TestRestartKeepsSessions(t *testing.T) {
	extra := filepath.Join(t.TempDir(), "extra")
	e := newEnv(t, "GATEWAY_TEST_EXTRA="+extra)
	changed := make(chan struct{}, 10)
	cs := e.connect(&mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }}, "c")
	first := callText(t, cs, "pid", nil)
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"steps": -1}})
		done <- err
	}()
	waitFor(t, "the call in flight", func() bool { s := e.gw.Servers(); return len(s[0].Sessions) == 1 && s[0].Sessions[0].InFlight == 1 })
	if err := os.WriteFile(extra, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	pid := e.pid()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "restarted while this request was in flight") {
			t.Fatalf("the call in flight ended with %v; want it to say the server restarted", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the call in flight did not end when its server was killed")
	}
	second := callText(t, cs, "pid", nil)
	if second == first || second == "" {
		t.Fatalf("after the restart the call reached pid %s (before: %s)", second, first)
	}
	select {
	case <-changed:
	case <-time.After(30 * time.Second):
		t.Fatal("no tools/list_changed after the restarted server's tools changed")
	}
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil || !slices.ContainsFunc(tools.Tools, func(t *mcp.Tool) bool { return t.Name == "extra" }) {
		t.Fatalf("tools after the restart = %v, %v", tools, err)
	}
	_ = supervisor.StateReady
}

// A hung server (SIGSTOP) is found by its probes and replaced; the
// session survives: the call in flight fails saying the server restarted,
// the next one reaches the new process.
func TestHungServerIsReplaced(t *testing.T) {
	e := newEnvWith(t, func(o *supervisor.Options) {
		o.ProbeInterval, o.ProbeTimeout, o.FailureThreshold = 100*time.Millisecond, 300*time.Millisecond, 1
		o.StopGrace, o.KillGrace = 50*time.Millisecond, 50*time.Millisecond
	})
	cs := e.connect(nil, "c")
	first := callText(t, cs, "pid", nil)
	pid := e.pid()
	// The call is in flight at the server (it wrote began) before the
	// server hangs: on a loaded machine a call sent after the SIGSTOP can
	// reach the new process, which is not what this test is about.
	began := filepath.Join(t.TempDir(), "began")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"steps": -1, "began": began}})
		res <- err
	}()
	waitFor(t, "the call to begin at the server", func() bool { _, err := os.Stat(began); return err == nil })
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(pid, syscall.SIGKILL)
	err := <-res
	if err == nil || !strings.Contains(err.Error(), "restarted while this request was in flight") {
		t.Fatalf("a call to the stopped server ended with %v; want the restart named", err)
	}
	if second := callText(t, cs, "pid", nil); second == first {
		t.Fatalf("after the hang the call reached the same pid %s", second)
	}
}

// A 2026-07-28 client, which cannot be sent requests, still answers an
// initialize-era server's sampling, elicitation and roots: each becomes an
// input_required result, and the client's retry carries the answer back.
func TestModernClientAnswersTheServer(t *testing.T) {
	e := newEnv(t)
	e.session = &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"}
	c := mcp.NewClient(&mcp.Implementation{Name: "modern"}, &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "from modern"}}, nil
		},
	})
	c.AddRoots(&mcp.Root{URI: "file:///modern"})
	cs, _ := e.connectClient(c)
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %s", v)
	}
	if got := callText(t, cs, "sample", map[string]any{"message": "x"}); got != "sampled: from modern" {
		t.Fatalf("sampling through input_required = %q", got)
	}
	if got := callText(t, cs, "roots", nil); got != "file:///modern" {
		t.Fatalf("roots through input_required = %q", got)
	}
	if got := callText(t, cs, "echo", map[string]any{"message": "plain"}); got != "plain" {
		t.Fatalf("echo = %q", got)
	}
}

// start = "lazy": nothing runs until the first client, which waits for it.
func TestLazyServerStartsWithItsFirstClient(t *testing.T) {
	e := newEnvServer(t, nil, func(s *registry.Server) { s.Start = registry.StartLazy })
	waitFor(t, "the snapshot", func() bool { return len(e.sup.Snapshot().Servers) == 1 })
	if pid := e.pid(); pid != 0 {
		t.Fatalf("a lazy server runs (pid %d) before any client", pid)
	}
	cs := e.connect(nil, "first")
	if got := callText(t, cs, "echo", map[string]any{"message": "woke"}); got != "woke" {
		t.Fatalf("echo = %q", got)
	}
	waitFor(t, "the client counted", func() bool { return e.sup.Snapshot().Servers[0].Clients == 1 })
}

// share = false: each client session gets its own process.
func TestUnsharedServerGetsAProcessPerSession(t *testing.T) {
	e := newEnvServer(t, nil, func(s *registry.Server) { s.Unshared = true })
	a, hangA := e.connectClient(mcp.NewClient(&mcp.Implementation{Name: "a"}, nil))
	b, _ := e.connectClient(mcp.NewClient(&mcp.Implementation{Name: "b"}, nil))
	pa, pb := callText(t, a, "pid", nil), callText(t, b, "pid", nil)
	if pa == pb {
		t.Fatalf("two sessions of a share = false server reached one process (%s)", pa)
	}
	shared := callText(t, a, "pid", nil)
	if shared != pa {
		t.Fatalf("a session's second call reached %s, its first %s", shared, pa)
	}
	instances := func() int {
		n := 0
		for _, s := range e.sup.Snapshot().Servers {
			if s.InstanceOf == "t" {
				n++
			}
		}
		return n
	}
	if n := instances(); n != 2 {
		t.Fatalf("%d instances of t; want 2", n)
	}
	hangA()
	waitFor(t, "the instance of the session that left to go", func() bool { return instances() == 1 })
}

// A 2026-07-28 client asked for input by a request the server made on its
// own (not for the call in flight) still gets its call's result, also when
// the call ended before the client's retry.
func TestModernClientAndAServersOwnRequest(t *testing.T) {
	e := newEnv(t)
	e.session = &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"}
	// The client's retries are the test's: no SDK retry loop.
	c := mcp.NewClient(&mcp.Implementation{Name: "modern"}, &mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}})
	c.AddRoots(&mcp.Root{URI: "file:///modern"})
	cs, _ := e.connectClient(c)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// roots_later asks for roots 30 ms after it returns, while slow runs
	// (a second: long past 30 ms on a loaded machine).
	callText(t, cs, "roots_later", nil)
	args := map[string]any{"steps": 50}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.InputRequests) != 1 || res.RequestState == "" {
		t.Fatalf("slow answered %+v; want the server's roots/list as an input request", res)
	}
	waitFor(t, "the call to end upstream", func() bool { return e.gw.Servers()[0].Usage.Tools["slow"].Calls == 1 })
	responses := mcp.InputResponseMap{}
	for k := range res.InputRequests {
		responses[k] = &mcp.ListRootsResult{Roots: []*mcp.Root{{URI: "file:///modern"}}}
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: args, InputResponses: responses, RequestState: res.RequestState})
	if err != nil || len(res.Content) == 0 || res.Content[0].(*mcp.TextContent).Text != "done" {
		t.Fatalf("the retry after the call ended = %+v, %v; want the call's result", res, err)
	}
}

// A server that speaks only 2026-07-28 (initialize refused) is ready under
// the supervisor, in the modern era, and says so; every client era reaches
// it: a 2025-11-25 client gets the server's input_required needs as its
// own requests, a 2026-07-28 client as the gateway's input_required.
func TestModernOnlyServer(t *testing.T) {
	e := newEnv(t, "GATEWAY_TEST_MODERN_ONLY=1")
	answers := func(who string) *mcp.ClientOptions {
		return &mcp.ClientOptions{
			ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": who + " to " + r.Params.Message}}, nil
			},
			CreateMessageHandler: func(_ context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: who}}, nil
			},
		}
	}
	legacy := e.connect(answers("legacy"), "legacy")
	if v := legacy.InitializeResult().ProtocolVersion; v != "2025-11-25" {
		t.Fatalf("the 2025-11-25 client negotiated %s", v)
	}
	if info := legacy.InitializeResult().ServerInfo; info == nil || info.Name != "gateway-test" {
		t.Fatalf("the handshake made from server/discover names %+v", info)
	}
	var st supervisor.ServerState
	for _, s := range e.sup.Snapshot().Servers {
		if s.Name == "t" {
			st = s
		}
	}
	if st.State != supervisor.StateReady || st.Era != "modern" || st.Report == nil || !strings.Contains(st.Report.EraSource, "initialize refused") {
		t.Fatalf("state %s era %s report %+v", st.State, st.Era, st.Report)
	}

	e.session = &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"}
	mc := mcp.NewClient(&mcp.Implementation{Name: "modern"}, answers("modern"))
	mc.AddRoots(&mcp.Root{URI: "file:///modern"})
	modern, _ := e.connectClient(mc)
	if v := modern.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("the 2026-07-28 client negotiated %s", v)
	}
	lc := mcp.NewClient(&mcp.Implementation{Name: "legacy-roots"}, answers("legacy"))
	lc.AddRoots(&mcp.Root{URI: "file:///legacy"})
	e.session = &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}
	legacyRoots, _ := e.connectClient(lc)

	for _, tt := range []struct {
		cs         *mcp.ClientSession
		tool, want string
	}{
		{legacy, "echo", "hi"},
		{legacy, "ask", "elicited: accept legacy to hi"},
		{legacy, "think", "sampled: legacy"},
		{legacy, "both", "accept legacy to hi / legacy"},
		{legacyRoots, "where", "file:///legacy"},
		{modern, "echo", "hi"},
		{modern, "ask", "elicited: accept modern to hi"},
		{modern, "think", "sampled: modern"},
		{modern, "both", "accept modern to hi / modern"},
		{modern, "where", "file:///modern"},
	} {
		if got := callText(t, tt.cs, tt.tool, map[string]any{"message": "hi"}); got != tt.want {
			t.Errorf("%s through %s = %q, want %q", tt.tool, tt.cs.InitializeResult().ProtocolVersion, got, tt.want)
		}
	}
	// A client that cannot answer hears why.
	plain := e.connect(nil, "plain")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := plain.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"message": "hi"}})
	if err == nil || !strings.Contains(err.Error(), "needs elicitation/create to answer this request, and this client session did not declare it") {
		t.Fatalf("ask from a client without elicitation: %v", err)
	}
}
