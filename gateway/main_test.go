//go:build unix

package gateway_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/demo"
	"mcptray/gateway"
	"mcptray/healthcheck"
	"mcptray/internal/testenv"
	"mcptray/registry"
	"mcptray/supervisor"
)

// TestMain lets the test binary play the upstream server: with
// GATEWAY_TEST_SERVER set it serves MCP on stdio.
func TestMain(m *testing.M) {
	if os.Getenv("GATEWAY_TEST_SERVER") != "" {
		serveTestServer()
		return
	}
	if os.Getenv("GATEWAY_TEST_DEMO") != "" {
		demo.Serve(context.Background(), os.Stdin, os.Stdout, nil)
		return
	}
	os.Exit(m.Run())
}

// serveTestServer is a go-sdk server with a tool for each thing a gateway
// routes: progress, sampling, elicitation, roots, logs, resource updates.
func serveTestServer() {
	var srv *mcp.Server
	// The initialize era unless asked: a 2026-07-28 server asks its
	// client through input_required results instead of requests.
	versions := []string{"2025-11-25", "2025-06-18"}
	modernOnly := os.Getenv("GATEWAY_TEST_MODERN_ONLY") != ""
	if os.Getenv("GATEWAY_TEST_MODERN") != "" || modernOnly {
		versions = nil
	}
	srv = mcp.NewServer(&mcp.Implementation{Name: "gateway-test", Version: "1.2.3"}, &mcp.ServerOptions{
		Instructions:              "test server",
		SupportedProtocolVersions: versions,
		SubscribeHandler:          func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler:        func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		CompletionHandler: func(_ context.Context, r *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{r.Params.Argument.Value + "-done"}}}, nil
		},
	})
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	type msg struct {
		Message string `json:"message"`
	}
	if modernOnly {
		// A server of the stateless revision alone: initialize refused,
		// and its needs asked as input_required results.
		srv.AddReceivingMiddleware(demo.RefuseInitialize)
		addInputTools(srv)
	}
	// GATEWAY_TEST_DESC names a file: when it exists, echo's description
	// is what it holds (a tool that changes across a restart).
	echoDesc := ""
	if f := os.Getenv("GATEWAY_TEST_DESC"); f != "" {
		if b, err := os.ReadFile(f); err == nil {
			echoDesc = string(b)
		}
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: echoDesc}, func(_ context.Context, _ *mcp.CallToolRequest, in msg) (*mcp.CallToolResult, any, error) {
		return text(in.Message), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "pid"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return text(fmt.Sprint(os.Getpid())), nil, nil
	})
	type slowIn struct {
		Steps int    `json:"steps"`
		Mark  string `json:"mark,omitempty"`  // a file written when the call is cancelled
		Began string `json:"began,omitempty"` // a file written when the call begins
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "slow"}, func(ctx context.Context, req *mcp.CallToolRequest, in slowIn) (*mcp.CallToolResult, any, error) {
		if in.Began != "" {
			_ = os.WriteFile(in.Began, []byte("began"), 0o600)
		}
		tok := req.Params.GetProgressToken()
		for i := range in.Steps {
			if tok != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i + 1), Total: float64(in.Steps)})
			}
			select {
			case <-ctx.Done():
				if in.Mark != "" {
					_ = os.WriteFile(in.Mark, []byte("cancelled"), 0o600)
				}
				return nil, nil, ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
		}
		if in.Steps < 0 { // forever, until cancelled
			<-ctx.Done()
			if in.Mark != "" {
				_ = os.WriteFile(in.Mark, []byte("cancelled"), 0o600)
			}
			return nil, nil, ctx.Err()
		}
		return text("done"), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "sample"}, func(ctx context.Context, req *mcp.CallToolRequest, in msg) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: in.Message}}}})
		if err != nil {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "sampling failed: " + err.Error()}}}, nil, nil
		}
		return text("sampled: " + res.Content.(*mcp.TextContent).Text), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "sample_twice"}, func(ctx context.Context, req *mcp.CallToolRequest, in msg) (*mcp.CallToolResult, any, error) {
		var got []string
		for range 2 {
			res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: in.Message}}}})
			if err != nil {
				return nil, nil, err
			}
			got = append(got, res.Content.(*mcp.TextContent).Text)
		}
		return text("sampled: " + strings.Join(got, ", ")), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "roots"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil, nil
		}
		var uris []string
		for _, r := range res.Roots {
			uris = append(uris, r.URI)
		}
		return text(strings.Join(uris, ",")), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "roots_later"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		ss := req.Session
		go func() {
			time.Sleep(30 * time.Millisecond)
			_, _ = ss.ListRoots(context.Background(), nil)
		}()
		return text("later"), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "log"}, func(ctx context.Context, req *mcp.CallToolRequest, in msg) (*mcp.CallToolResult, any, error) {
		_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: in.Message})
		_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "debug", Data: "debug " + in.Message})
		return text("logged"), nil, nil
	})
	type floodIn struct {
		Count int `json:"count"`
		Every int `json:"every,omitempty"` // microseconds between messages
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "flood"}, func(ctx context.Context, req *mcp.CallToolRequest, in floodIn) (*mcp.CallToolResult, any, error) {
		for i := range in.Count {
			_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: i})
			if in.Every > 0 {
				time.Sleep(time.Duration(in.Every) * time.Microsecond)
			}
		}
		return text("flooded"), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "touch"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		_ = srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "test://r"})
		return text("touched"), nil, nil
	})
	if n, _ := strconv.Atoi(os.Getenv("GATEWAY_TEST_MANY")); n > 0 {
		// A huge catalogue: n more tools.
		// (Without the typed form's schema inference: 10,000 of those
		// take long under the race detector.)
		schema := map[string]any{"type": "object"}
		for i := range n {
			srv.AddTool(&mcp.Tool{Name: fmt.Sprintf("tool_%05d", i), Description: fmt.Sprintf("Tool number %d of a huge catalogue.", i), InputSchema: schema},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return text(fmt.Sprint(i)), nil
				})
		}
	}
	if f := os.Getenv("GATEWAY_TEST_EXTRA"); f != "" {
		if _, err := os.Stat(f); err == nil {
			mcp.AddTool(srv, &mcp.Tool{Name: "extra"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
				return text("extra"), nil, nil
			})
		}
	}
	srv.AddResource(&mcp.Resource{URI: "test://r", Name: "r", MIMEType: "text/plain"}, func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, Text: "hello"}}}, nil
	})
	srv.AddPrompt(&mcp.Prompt{Name: "greet", Arguments: []*mcp.PromptArgument{{Name: "who"}}}, func(_ context.Context, r *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi " + r.Params.Arguments["who"]}}}}, nil
	})
	_ = srv.Run(context.Background(), &mcp.StdioTransport{})
}

// addInputTools adds tools that ask their client the 2026-07-28 way, by
// answering input_required until the call carries the answers: ask
// (elicitation), think (sampling), where (roots), and both (elicitation
// and sampling at once).
func addInputTools(srv *mcp.Server) {
	type msg struct {
		Message string `json:"message"`
	}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	elicit := func(m string) *mcp.ElicitParams {
		return &mcp.ElicitParams{Message: m, RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}}
	}
	sample := func(m string) *mcp.CreateMessageParams {
		return &mcp.CreateMessageParams{MaxTokens: 10, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: m}}}}
	}
	elicited := func(r mcp.InputResponse) string {
		if e, ok := r.(*mcp.ElicitResult); ok {
			return fmt.Sprintf("%s %v", e.Action, e.Content["name"])
		}
		return fmt.Sprintf("not an elicitation answer: %T", r)
	}
	sampled := func(r mcp.InputResponse) string {
		switch v := r.(type) {
		case *mcp.CreateMessageWithToolsResult:
			if len(v.Content) == 1 {
				if tc, ok := v.Content[0].(*mcp.TextContent); ok {
					return tc.Text
				}
			}
		case *mcp.CreateMessageResult:
			if tc, ok := v.Content.(*mcp.TextContent); ok {
				return tc.Text
			}
		}
		return fmt.Sprintf("not a sampling answer: %T", r)
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "ask"}, func(_ context.Context, req *mcp.CallToolRequest, in msg) (*mcp.CallToolResult, any, error) {
		if r, ok := req.Params.InputResponses["name"]; ok {
			return text("elicited: " + elicited(r)), nil, nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"name": elicit(in.Message)}, RequestState: "asked"}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "think"}, func(_ context.Context, req *mcp.CallToolRequest, in msg) (*mcp.CallToolResult, any, error) {
		if r, ok := req.Params.InputResponses["llm"]; ok {
			return text("sampled: " + sampled(r)), nil, nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"llm": sample(in.Message)}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "where"}, func(_ context.Context, req *mcp.CallToolRequest, _ msg) (*mcp.CallToolResult, any, error) {
		if r, ok := req.Params.InputResponses["roots"].(*mcp.ListRootsResult); ok {
			var uris []string
			for _, root := range r.Roots {
				uris = append(uris, root.URI)
			}
			return text(strings.Join(uris, ",")), nil, nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"roots": &mcp.ListRootsParams{}}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "both"}, func(_ context.Context, req *mcp.CallToolRequest, in msg) (*mcp.CallToolResult, any, error) {
		got := req.Params.InputResponses
		if got["name"] != nil && got["llm"] != nil && req.Params.RequestState == "both" {
			return text(elicited(got["name"]) + " / " + sampled(got["llm"])), nil, nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"name": elicit(in.Message), "llm": sample(in.Message)}, RequestState: "both"}, nil, nil
	})
}

// checker makes the supervisor's sessions with the gateway's handlers, as
// mcptray's engine does.
type checker struct {
	gw func() *gateway.Gateway
}

func (c *checker) Connect(ctx context.Context, t healthcheck.Target) (supervisor.Session, error) {
	gw := c.gw()
	name := t.Server.Name
	s, err := healthcheck.Connect(ctx, t, &healthcheck.Options{
		Client:       gw.Handlers(name),
		PreferLegacy: true,
		Trace:        func(f healthcheck.Frame) { gw.Trace(name, f) },
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

type env struct {
	// session are the client sessions' options: the initialize era
	// unless a test asks for 2026-07-28.
	session *mcp.ClientSessionOptions
	t       testing.TB
	sup     *supervisor.Supervisor
	gw      *gateway.Gateway
	ctx     context.Context
}

// newEnv runs the test server under a supervisor, with a gateway in front.
func newEnv(t testing.TB, extraEnv ...string) *env {
	t.Helper()
	return newEnvWith(t, nil, extraEnv...)
}

// newEnvWith is newEnv with the supervisor's options edited by tune.
func newEnvWith(t testing.TB, tune func(*supervisor.Options), extraEnv ...string) *env {
	return newEnvServer(t, tune, nil, extraEnv...)
}

// newEnvServer is newEnvWith with the server's entry edited too.
func newEnvServer(t testing.TB, tune func(*supervisor.Options), tuneServer func(*registry.Server), extraEnv ...string) *env {
	t.Helper()
	return newEnvAll(t, tune, tuneServer, nil, extraEnv...)
}

// newEnvAll is newEnvServer with the gateway's options too.
func newEnvAll(t testing.TB, tune func(*supervisor.Options), tuneServer func(*registry.Server), gwOpts *gateway.Options, extraEnv ...string) *env {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	e := map[string]string{"GATEWAY_TEST_SERVER": "1", "GORACE": "atexit_sleep_ms=0"}
	for _, kv := range extraEnv {
		k, v, _ := strings.Cut(kv, "=")
		e[k] = v
	}
	srv := &registry.Server{Name: "t", Command: exe, Env: e, Autostart: true}
	if tuneServer != nil {
		tuneServer(srv)
	}
	var gw *gateway.Gateway
	var mu sync.Mutex
	ch := &checker{gw: func() *gateway.Gateway { mu.Lock(); defer mu.Unlock(); return gw }}
	so := &supervisor.Options{
		Checker: ch, LogDir: t.TempDir(), ProcDir: t.TempDir(), NoLogFiles: true,
		BackoffBase: 50 * time.Millisecond,
		Environ:     func(context.Context) []string { return os.Environ() },
	}
	if tune != nil {
		tune(so)
	}
	sup := supervisor.New([]*registry.Server{srv}, so)
	mu.Lock()
	gw = gateway.New(sup, gwOpts)
	mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = sup.Run(ctx) })
	wg.Go(func() { _ = gw.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	return &env{t: t, sup: sup, gw: gw, ctx: ctx, session: &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}}
}

// connect is one client session through the gateway, over pipes.
func (e *env) connect(opts *mcp.ClientOptions, name string) *mcp.ClientSession {
	e.t.Helper()
	cs, _ := e.connectClient(mcp.NewClient(&mcp.Implementation{Name: name, Version: "0.1"}, opts))
	return cs
}

// connectClient connects c through the gateway; hangup ends the
// connection as a client process that dies would.
func (e *env) connectClient(c *mcp.Client) (cs *mcp.ClientSession, hangup func()) {
	e.t.Helper()
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	hangup = func() { cw.Close(); cr.Close() }
	st := gateway.LineTransport(sr, sw, sw)
	go func() { _ = e.gw.Serve(e.ctx, "t", st, gateway.Peer{Via: "stdio", PID: 1}) }()
	ct := &mcp.IOTransport{Reader: cr, Writer: cw}
	ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, ct, e.session)
	if err != nil {
		e.t.Fatalf("connecting through the gateway: %v", err)
	}
	e.t.Cleanup(hangup)
	return cs, hangup
}

func callText(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("calling %s: %v", tool, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.IsError {
		return "ERROR: " + b.String()
	}
	return b.String()
}

// waitFor polls cond (state kept by other goroutines) until it holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	// A hang guard, not a time the test claims: a server of 10,000 tools
	// under -race on a loaded machine takes most of a minute to be ready.
	testenv.Eventually(t, 90*time.Second, cond, "timed out waiting for %s", what)
}
