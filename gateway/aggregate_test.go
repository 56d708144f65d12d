//go:build unix

package gateway_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/gateway"
	"mcptray/registry"
	"mcptray/registry/tooltrust"
	"mcptray/supervisor"
)

// aggEnv runs several servers under one supervisor, with a gateway in
// front that knows profiles.
type aggEnv struct {
	*env
	catalogues string
}

// testServer is the test binary as server name.
func testServer(t testing.TB, name string, extraEnv ...string) *registry.Server {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	e := map[string]string{"GATEWAY_TEST_SERVER": "1", "GORACE": "atexit_sleep_ms=0"}
	for _, kv := range extraEnv {
		k, v, _ := strings.Cut(kv, "=")
		e[k] = v
	}
	return &registry.Server{Name: name, Command: exe, Env: e, Autostart: true}
}

func newAggEnv(t testing.TB, catalogues string, servers ...*registry.Server) *aggEnv {
	t.Helper()
	if catalogues == "" {
		catalogues = t.TempDir()
	}
	return newAggEnvWith(t, &gateway.Options{CatalogueDir: catalogues}, servers...)
}

func newAggEnvWith(t testing.TB, opts *gateway.Options, servers ...*registry.Server) *aggEnv {
	t.Helper()
	catalogues := opts.CatalogueDir
	var gw *gateway.Gateway
	var mu sync.Mutex
	ch := &checker{gw: func() *gateway.Gateway { mu.Lock(); defer mu.Unlock(); return gw }}
	so := &supervisor.Options{
		Checker: ch, LogDir: t.TempDir(), ProcDir: t.TempDir(), NoLogFiles: true,
		BackoffBase: 50 * time.Millisecond,
		Environ:     func(context.Context) []string { return os.Environ() },
	}
	sup := supervisor.New(servers, so)
	mu.Lock()
	gw = gateway.New(sup, opts)
	mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = sup.Run(ctx) })
	wg.Go(func() { _ = gw.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	return &aggEnv{env: &env{t: t, sup: sup, gw: gw, ctx: ctx, session: &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}}, catalogues: catalogues}
}

// connectProfile is one aggregate session of profile over pipes.
func (e *aggEnv) connectProfile(profile string, opts *mcp.ClientOptions) *mcp.ClientSession {
	e.t.Helper()
	cs, err := e.tryProfile(profile, opts)
	if err != nil {
		e.t.Fatalf("connecting to profile %s: %v", profile, err)
	}
	return cs
}

func (e *aggEnv) tryProfile(profile string, opts *mcp.ClientOptions) (*mcp.ClientSession, error) {
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	st := gateway.LineTransport(sr, sw, sw)
	go func() { _ = e.gw.ServeProfile(e.ctx, profile, st, gateway.Peer{Via: "stdio", PID: 1}) }()
	ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
	defer cancel()
	e.t.Cleanup(func() { cw.Close(); cr.Close() })
	return mcp.NewClient(&mcp.Implementation{Name: "agg-client", Version: "0.1"}, opts).Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, e.session)
}

func (e *aggEnv) waitReady(names ...string) {
	e.t.Helper()
	waitFor(e.t.(*testing.T), strings.Join(names, ", ")+" ready", func() bool {
		snap := e.sup.Snapshot()
		for _, n := range names {
			if st := snap.Server(n); st == nil || st.State != supervisor.StateReady {
				return false
			}
		}
		return true
	})
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

func TestAggregateNamespacesAndRoutes(t *testing.T) {
	e := newAggEnv(t, "", testServer(t, "alpha"), testServer(t, "beta"))
	e.gw.SetProfiles("__", []*registry.Profile{{Name: "work", Servers: []string{"alpha", "beta"},
		Tools: map[string]registry.ToolFilter{"beta": {Deny: []string{"flood", "s*"}}}}})
	e.waitReady("alpha", "beta")

	var mu sync.Mutex
	var logs []string
	var progress []float64
	cs := e.connectProfile("work", &mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "answer to " + r.Params.Messages[0].Content.(*mcp.TextContent).Text}}, nil
		},
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			mu.Lock()
			logs = append(logs, r.Params.Logger+": "+r.Params.Data.(string))
			mu.Unlock()
		},
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, r.Params.Progress)
			mu.Unlock()
		},
	})
	ir := cs.InitializeResult()
	if ir.Capabilities.Tools == nil || !ir.Capabilities.Tools.ListChanged || ir.Capabilities.Resources == nil || !ir.Capabilities.Resources.Subscribe {
		t.Errorf("capabilities are the union, list changes promised: %+v", ir.Capabilities)
	}
	if !strings.Contains(ir.Instructions, "## alpha\n\ntest server") || !strings.Contains(ir.Instructions, "## beta\n\ntest server") {
		t.Errorf("instructions are each server's under its name:\n%s", ir.Instructions)
	}
	names := toolNames(t, cs)
	for _, want := range []string{"alpha__echo", "alpha__sample", "alpha__slow", "beta__echo", "beta__log"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s: %v", want, names)
		}
	}
	for _, hidden := range []string{"beta__flood", "beta__sample", "beta__slow"} {
		if slices.Contains(names, hidden) {
			t.Errorf("%s is denied by the profile but listed", hidden)
		}
	}
	if got := callText(t, cs, "alpha__echo", map[string]any{"message": "hi"}); got != "hi" {
		t.Errorf("alpha__echo: %q", got)
	}
	if got := callText(t, cs, "beta__echo", map[string]any{"message": "b"}); got != "b" {
		t.Errorf("beta__echo: %q", got)
	}
	// The server's own request reaches the aggregate's client.
	if got := callText(t, cs, "alpha__sample", map[string]any{"message": "q"}); got != "sampled: answer to q" {
		t.Errorf("sampling through the aggregate: %q", got)
	}
	// A hidden tool is refused, saying why.
	ctx := context.Background()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "beta__flood", Arguments: map[string]any{"count": 1}}); err == nil || !strings.Contains(err.Error(), "hidden by profile work") {
		t.Errorf("a denied tool: %v", err)
	}
	// A server's own name reaches it when no other server of the profile
	// has that name; else the error names the choices.
	if got := callText(t, cs, "sample", map[string]any{"message": "own"}); got != "sampled: answer to own" {
		t.Errorf("sample (only alpha offers it: beta's is denied): %q", got)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "x"}}); err == nil || !strings.Contains(err.Error(), "call it as one of [alpha__echo beta__echo]") {
		t.Errorf("an ambiguous bare name: %v", err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "nope__echo"}); err == nil || !strings.Contains(err.Error(), `profile work has no tool "nope__echo"`) {
		t.Errorf("an unknown tool: %v", err)
	}
	// Progress goes back with the client's token.
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__slow", Arguments: map[string]any{"steps": 3}, Meta: mcp.Meta{"progressToken": "p1"}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "progress", func() bool { mu.Lock(); defer mu.Unlock(); return len(progress) == 3 })
	// Logs say which server logged, at the session's level.
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	callText(t, cs, "beta__log", map[string]any{"message": "m"})
	waitFor(t, "a log message", func() bool { mu.Lock(); defer mu.Unlock(); return slices.Contains(logs, "beta: m") })
	// Resources by URI (both offer test://r: the first server has it, and
	// the collision is said), prompts namespaced, completions routed.
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://r"})
	if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != "hello" {
		t.Fatalf("resources/read: %v %+v", err, rr)
	}
	gp, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "beta__greet", Arguments: map[string]string{"who": "x"}})
	if err != nil || gp.Messages[0].Content.(*mcp.TextContent).Text != "hi x" {
		t.Fatalf("prompts/get: %v %+v", err, gp)
	}
	comp, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "alpha__greet"}, Argument: mcp.CompleteParamsArgument{Name: "who", Value: "a"}})
	if err != nil || len(comp.Completion.Values) != 1 || comp.Completion.Values[0] != "a-done" {
		t.Fatalf("completion/complete: %v %+v", err, comp)
	}
	agg := e.gw.Aggregates()
	var work *gateway.Aggregate
	for i := range agg {
		if agg[i].Profile == "work" {
			work = &agg[i]
		}
	}
	if work == nil || len(work.Sessions) != 1 || work.Sessions[0].ClientName != "agg-client" || !slices.ContainsFunc(work.Notices, func(n string) bool { return strings.Contains(n, "test://r is offered by alpha and beta") }) {
		t.Errorf("Aggregates: %+v", agg)
	}
	// The aggregate session shows among each server's sessions it used,
	// and its frames are in that server's trace.
	for _, s := range e.gw.Servers() {
		if s.Name == "beta" && (len(s.Sessions) != 1 || s.Sessions[0].Profile != "work") {
			t.Errorf("beta's sessions: %+v", s.Sessions)
		}
	}
	frames, _, _ := e.gw.TraceSince("beta", 0)
	if !slices.ContainsFunc(frames, func(f gateway.Frame) bool { return f.Method == "tools/call" && strings.HasPrefix(f.Session, "@work#") }) {
		t.Errorf("beta's trace has no frame of the aggregate session")
	}
}

// The list changes whenever the union does, and a call to a tool of a
// server that cannot serve says which server, its state and why.
func TestAggregateListChanges(t *testing.T) {
	flag := filepath.Join(t.TempDir(), "extra")
	e := newAggEnv(t, "", testServer(t, "alpha"), testServer(t, "beta", "GATEWAY_TEST_EXTRA="+flag))
	e.waitReady("alpha", "beta")
	changed := make(chan struct{}, 10)
	cs := e.connectProfile("default", &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	awaitChange := func(what string) {
		t.Helper()
		select {
		case <-changed:
		case <-time.After(30 * time.Second):
			t.Fatalf("no tools/list_changed after %s", what)
		}
	}
	if names := toolNames(t, cs); !slices.Contains(names, "beta__echo") || slices.Contains(names, "beta__extra") {
		t.Fatalf("before: %v", names)
	}
	// beta stops: its tools go.
	if err := e.sup.Stop("beta"); err != nil {
		t.Fatal(err)
	}
	awaitChange("beta stopped")
	waitFor(t, "beta's tools gone", func() bool { return !slices.Contains(toolNames(t, cs), "beta__echo") })
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "beta__echo", Arguments: map[string]any{"message": "x"}})
	if err == nil || !strings.Contains(err.Error(), "server beta is not available: it is stopped") {
		t.Errorf("a call to a stopped server's tool: %v", err)
	}
	// beta comes back with a tool more.
	if err := os.WriteFile(flag, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for len(changed) > 0 {
		<-changed
	}
	if err := e.sup.Start("beta"); err != nil {
		t.Fatal(err)
	}
	awaitChange("beta started again")
	waitFor(t, "beta's new tool", func() bool { return slices.Contains(toolNames(t, cs), "beta__extra") })
	// A profile filter that changes hides a tool: the list changes.
	for len(changed) > 0 {
		<-changed
	}
	e.gw.SetProfiles("__", []*registry.Profile{{Name: "default", Tools: map[string]registry.ToolFilter{"alpha": {Deny: []string{"echo"}}}}})
	awaitChange("a tool hidden")
	if names := toolNames(t, cs); slices.Contains(names, "alpha__echo") || !slices.Contains(names, "beta__echo") {
		t.Errorf("after hiding alpha__echo: %v", names)
	}
}

// A lazy server is listed from the catalogue kept from an earlier run:
// listing starts nothing; the first call starts it.
func TestAggregateLazyServerFromDisk(t *testing.T) {
	dir := t.TempDir()
	{
		e := newAggEnv(t, dir, testServer(t, "lazy"))
		e.waitReady("lazy")
		cs := e.connectProfile("default", nil)
		if names := toolNames(t, cs); !slices.Contains(names, "lazy__echo") {
			t.Fatalf("first run: %v", names)
		}
		if _, err := os.Stat(filepath.Join(dir, "lazy.json")); err != nil {
			t.Fatalf("the catalogue was not kept: %v", err)
		}
	}
	srv := testServer(t, "lazy")
	srv.Start = registry.StartLazy
	srv.Autostart = false
	e := newAggEnv(t, dir, srv)
	waitFor(t, "lazy waits for a client", func() bool {
		st := e.sup.Snapshot().Server("lazy")
		return st != nil && st.WaitsForClient
	})
	cs := e.connectProfile("default", nil)
	if names := toolNames(t, cs); !slices.Contains(names, "lazy__echo") {
		t.Fatalf("the lazy server's remembered tools: %v", names)
	}
	if st := e.sup.Snapshot().Server("lazy"); st.State != supervisor.StateStopped || st.PID != 0 {
		t.Errorf("listing started the lazy server: %s", st.State)
	}
	if got := callText(t, cs, "lazy__echo", map[string]any{"message": "woke"}); got != "woke" {
		t.Errorf("first call: %q", got)
	}
}

func TestAggregateBadProfile(t *testing.T) {
	e := newAggEnv(t, "", testServer(t, "alpha"))
	e.gw.SetProfiles("__", []*registry.Profile{{Name: "broken", Servers: []string{}, Invalid: errString("profiles.broken: the profile holds no servers")}})
	for profile, want := range map[string]string{"nope": `no profile named "nope" is configured`, "broken": "profile broken cannot be used: profiles.broken: the profile holds no servers"} {
		// The handshake itself is answered with why, as for a server
		// that is not there.
		_, err := e.tryProfile(profile, nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("profile %s: %v, want %q", profile, err, want)
		}
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// A profile has a URL of its own on the local endpoint, with the same key
// rules as a server's; a 2026-07-28 client is served too.
func TestAggregateHTTP(t *testing.T) {
	e := newAggEnv(t, "", testServer(t, "alpha"), testServer(t, "beta"))
	e.waitReady("alpha", "beta")
	base := e.serveHTTP(gateway.PeerIsSameUser)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "http-agg"}, &mcp.ClientOptions{CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "over http"}}, nil
	}})
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/profile/default/" + testKey}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatalf("%s: connecting to the profile's URL: %v", version, err)
		}
		if names := toolNames(t, cs); !slices.Contains(names, "alpha__echo") || !slices.Contains(names, "beta__echo") {
			t.Errorf("%s: tools over http: %v", version, names)
		}
		if got := callText(t, cs, "beta__sample", map[string]any{"message": "x"}); got != "sampled: over http" {
			t.Errorf("%s: sampling through the aggregate over http = %q", version, got)
		}
		cs.Close()
	}
	for path, want := range map[string]int{"/profile/default/wrong": 401, "/profile/default": 401} {
		if code, _ := post(t, base+path, nil); code != want {
			t.Errorf("POST %s: %d, want %d", path, code, want)
		}
	}
}

// A profile with exposure = "search" lists search, describe and call (and
// its pinned tools); call_tool reaches the server as a call of the session
// (the server's own requests come back to it).
func TestAggregateSearchExposure(t *testing.T) {
	e := newAggEnv(t, "", testServer(t, "alpha"), testServer(t, "beta"))
	e.gw.SetProfiles("__", []*registry.Profile{{Name: "find", Servers: []string{"alpha", "beta"}, Exposure: registry.ExposureSearch,
		Tools: map[string]registry.ToolFilter{"alpha": {Pin: []string{"echo"}}, "beta": {Deny: []string{"flood"}}}}})
	e.waitReady("alpha", "beta")
	cs := e.connectProfile("find", &mcp.ClientOptions{CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "via search"}}, nil
	}})
	if got := toolNames(t, cs); !slices.Equal(got, []string{"search_tools", "describe_tools", "call_tool", "alpha__echo"}) {
		t.Fatalf("search exposure lists %v", got)
	}
	if got := callText(t, cs, "search_tools", map[string]any{"query": "flood"}); strings.Contains(got, "beta__flood") {
		t.Errorf("a denied tool is found: %s", got)
	}
	if got := callText(t, cs, "search_tools", map[string]any{"query": "echo"}); !strings.Contains(got, `"name":"beta__echo"`) {
		t.Errorf("search_tools echo: %s", got)
	}
	if got := callText(t, cs, "call_tool", map[string]any{"name": "beta__echo", "arguments": map[string]any{"message": "found"}}); got != "found" {
		t.Errorf("call_tool beta__echo: %q", got)
	}
	if got := callText(t, cs, "call_tool", map[string]any{"name": "beta__echo", "arguments": map[string]any{"message": 5}}); !strings.HasPrefix(got, "ERROR: call_tool beta__echo:") || !strings.Contains(got, "nothing was sent") {
		t.Errorf("call_tool with arguments that do not fit: %q", got)
	}
	if got := callText(t, cs, "call_tool", map[string]any{"name": "beta__sample", "arguments": map[string]any{"message": "q"}}); got != "sampled: via search" {
		t.Errorf("sampling under call_tool: %q", got)
	}
	if got := callText(t, cs, "alpha__echo", map[string]any{"message": "pinned"}); got != "pinned" {
		t.Errorf("a pinned tool: %q", got)
	}
}

// connectTo is a session of server name alone, over pipes.
func (e *aggEnv) connectTo(name string) *mcp.ClientSession {
	e.t.Helper()
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	st := gateway.LineTransport(sr, sw, sw)
	go func() { _ = e.gw.Serve(e.ctx, name, st, gateway.Peer{Via: "stdio", PID: 1}) }()
	ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "one"}, nil).Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, e.session)
	if err != nil {
		e.t.Fatalf("connecting to %s: %v", name, err)
	}
	e.t.Cleanup(func() { cw.Close(); cr.Close() })
	return cs
}

// A server with 10,000 tools: the aggregate lists them all, says so, and
// the other servers go on working; a held tool is neither listed nor
// called.
func TestAggregateHugeCatalogueAndHolds(t *testing.T) {
	var held sync.Map
	held.Store("alpha/echo", "its description changed; approve it with mcptray tools approve")
	servers := []*registry.Server{testServer(t, "alpha"), testServer(t, "huge", "GATEWAY_TEST_MANY=10000")}
	e := newAggEnvWith(t, &gateway.Options{CatalogueDir: t.TempDir(), HeldTool: func(server string, tl *mcp.Tool) string {
		why, _ := held.Load(server + "/" + tl.Name)
		s, _ := why.(string)
		return s
	}}, servers...)
	began := time.Now()
	e.waitReady("alpha", "huge")
	t.Logf("ready after %s", time.Since(began))
	changed := make(chan struct{}, 4)
	cs := e.connectProfile("default", &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }})
	began = time.Now()
	names := toolNames(t, cs)
	t.Logf("tools/list of %d tools: %s", len(names), time.Since(began))
	if len(names) < 10000 || !slices.Contains(names, "huge__tool_09999") {
		t.Fatalf("%d tools listed", len(names))
	}
	if slices.Contains(names, "alpha__echo") {
		t.Error("a held tool is listed")
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"message": "x"}}); err == nil || !strings.Contains(err.Error(), "tool echo of server alpha is held: its description changed") {
		t.Errorf("a call to a held tool: %v", err)
	}
	if got := callText(t, cs, "huge__tool_04242", nil); got != "4242" {
		t.Errorf("a tool of the huge server: %q", got)
	}
	if got := callText(t, cs, "alpha__pid", nil); got == "" || strings.HasPrefix(got, "ERROR") {
		t.Errorf("the other server: %q", got)
	}
	var notices []string
	for _, a := range e.gw.Aggregates() {
		if a.Profile == "default" {
			notices = a.Notices
		}
	}
	if !slices.ContainsFunc(notices, func(n string) bool {
		return strings.HasPrefix(n, "server huge offers 10010 tools: clients may load only some")
	}) {
		t.Errorf("notices: %q", notices)
	}
	// Approved: it comes back, with a list_changed.
	held.Delete("alpha/echo")
	e.gw.HoldsChanged()
	select {
	case <-changed:
	case <-time.After(30 * time.Second):
		t.Fatal("no list_changed after a hold was lifted")
	}
	if got := callText(t, cs, "alpha__echo", map[string]any{"message": "back"}); got != "back" {
		t.Errorf("after approval: %q", got)
	}
}

// With the trust store (as the daemon runs it) and approve_new_servers on,
// a server reached only through an aggregate has its tools recorded there
// and held as a new server's: none is listed; approving them lifts the
// hold and the aggregate session gets a list_changed.
func TestAggregateHoldsFromTheTrustStore(t *testing.T) {
	st, err := tooltrust.Open(filepath.Join(t.TempDir(), tooltrust.FileName), nil)
	if err != nil {
		t.Fatal(err)
	}
	st.SetHoldNewServers(true)
	e := newAggEnvWith(t, &gateway.Options{CatalogueDir: t.TempDir(), Trust: st}, testServer(t, "alpha"))
	e.waitReady("alpha")
	changed := make(chan struct{}, 4)
	cs := e.connectProfile("default", &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }})
	if names := toolNames(t, cs); slices.Contains(names, "alpha__echo") {
		t.Fatalf("a new server's tool is listed while approve_new_servers holds it: %v", names)
	}
	if _, ok := st.Held("alpha", "echo"); !ok {
		t.Fatal("the aggregate did not record alpha's tools with the store")
	}
	if err := st.Approve("alpha", ""); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(30 * time.Second):
		t.Fatal("no list_changed after the approval")
	}
	if got := callText(t, cs, "alpha__echo", map[string]any{"message": "approved"}); got != "approved" {
		t.Errorf("after approval: %q", got)
	}
}
