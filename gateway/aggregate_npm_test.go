//go:build unix

package gateway_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/healthcheck"
	"mcptray/registry"
	"mcptray/supervisor"
)

// npmServers is the folder of the npm test servers; without them the test
// is skipped, and fails under CI.
func npmServers(t *testing.T) (node, dir string) {
	t.Helper()
	dir = os.Getenv("MCPTRAY_TEST_SERVERS")
	if dir == "" {
		_, file, _, _ := runtime.Caller(0)
		dir = filepath.Join(filepath.Dir(file), "..", ".testservers", "node_modules")
	}
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(dir, "@modelcontextprotocol", "server-everything", "dist", "index.js"))
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the npm test servers are needed (./packaging/ensure-deps.sh npm): %v", err)
		}
		t.Skipf("the npm test servers are not installed: %v", err)
	}
	return node, dir
}

// A go-sdk client through an aggregate of server-everything, -memory,
// -filesystem and the demo sees every tool namespaced, calls a tool of
// each, reads a resource and gets a prompt of each that offers them, and
// answers server-everything's elicitation and sampling.
func TestAggregateOfRealServers(t *testing.T) {
	node, dir := npmServers(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	files := t.TempDir()
	if err := os.WriteFile(filepath.Join(files, "note.txt"), []byte("a note"), 0o600); err != nil {
		t.Fatal(err)
	}
	js := func(pkg string) string { return filepath.Join(dir, "@modelcontextprotocol", pkg, "dist", "index.js") }
	servers := []*registry.Server{
		{Name: "everything", Command: node, Args: []string{js("server-everything"), "stdio"}, Autostart: true},
		{Name: "memory", Command: node, Args: []string{js("server-memory")}, Env: map[string]string{"MEMORY_FILE_PATH": filepath.Join(t.TempDir(), "memory.jsonl")}, Autostart: true},
		{Name: "filesystem", Command: node, Args: []string{js("server-filesystem"), files}, Autostart: true},
		{Name: "demo", Command: exe, Env: map[string]string{"GATEWAY_TEST_DEMO": "1", "GORACE": "atexit_sleep_ms=0"}, Autostart: true},
	}
	e := newAggEnv(t, "", servers...)
	e.waitReady("everything", "memory", "filesystem", "demo")

	elicited := make(chan string, 1)
	cs := e.connectProfile("default", &mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Model: "test-model", Role: "assistant", Content: &mcp.TextContent{Text: "sampled through the aggregate"}}, nil
		},
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			elicited <- r.Params.Message
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// Every tool of every server, namespaced, names within the clients' rule.
	snap := e.sup.Snapshot()
	want := map[string]bool{}
	for _, s := range servers {
		for _, tl := range snap.Server(s.Name).Report.Tools {
			want[s.Name+"__"+tl.Name] = true
		}
	}
	waitFor(t, "server-everything's tools for what its client declared", func() bool {
		return slices.Contains(toolNames(t, cs), "everything__trigger-sampling-request")
	})
	names := toolNames(t, cs)
	for n := range want {
		if !slices.Contains(names, n) {
			t.Errorf("tools/list lacks %s", n)
		}
	}
	for _, n := range names {
		if !validName(n) {
			t.Errorf("%q is not a name clients take", n)
		}
		if server, _, ok := strings.Cut(n, "__"); !ok || !slices.ContainsFunc(servers, func(s *registry.Server) bool { return s.Name == server }) {
			t.Errorf("%q is not SERVER__TOOL", n)
		}
	}
	t.Logf("%d tools through the aggregate: %v", len(names), names)

	// A tool of each.
	for tool, args := range map[string]map[string]any{
		"everything__echo":                     {"message": "hi"},
		"memory__read_graph":                   {},
		"filesystem__list_allowed_directories": {},
		"demo__add":                            {"a": 2, "b": 3},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil || res.IsError {
			b, _ := json.Marshal(res)
			t.Errorf("%s: %v %s", tool, err, b)
		}
	}
	// A resource and a prompt of each that offers any.
	for _, s := range servers {
		rep := snap.Server(s.Name).Report
		if len(rep.Resources) > 0 {
			uri := rep.Resources[0].URI
			if rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err != nil || len(rr.Contents) == 0 {
				t.Errorf("%s: resources/read %s: %v", s.Name, uri, err)
			} else {
				t.Logf("%s: read %s", s.Name, uri)
			}
		}
		for _, p := range rep.Prompts {
			if slices.ContainsFunc(p.Arguments, func(a healthcheck.PromptArgument) bool { return a.Required }) && s.Name != "demo" {
				continue
			}
			args := map[string]string{}
			for _, a := range p.Arguments {
				args[a.Name] = "x"
			}
			if gp, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: s.Name + "__" + p.Name, Arguments: args}); err != nil || len(gp.Messages) == 0 {
				t.Errorf("%s: prompts/get %s: %v", s.Name, p.Name, err)
			} else {
				t.Logf("%s: got prompt %s", s.Name, p.Name)
			}
			break
		}
	}
	// server-everything's own requests reach the client.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "everything__trigger-sampling-request", Arguments: map[string]any{"prompt": "hello", "maxTokens": 10}})
	if err != nil || res.IsError || !strings.Contains(text(res), "sampled through the aggregate") {
		t.Errorf("sampling: %v %s", err, text(res))
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "everything__trigger-elicitation-request", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("elicitation: %v", err)
	}
	select {
	case m := <-elicited:
		t.Logf("elicitation reached the client: %q; the server answered %q", m, text(res))
	default:
		t.Errorf("the elicitation did not reach the client: %s", text(res))
	}
	if st := e.sup.Snapshot().Server("everything"); st.State != supervisor.StateReady {
		t.Errorf("everything is %s", st.State)
	}
}

func text(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
