package searchtools_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/demo"
	"mcptray/gateway/searchtools"
	"mcptray/gateway/toolsearch"
)

// TestThroughASession serves the three tools over a go-sdk server whose
// calls go to the real demo server, and uses them from a go-sdk client as
// a model would: search, describe, call (a bad call first, which must not
// reach the demo server).
func TestThroughASession(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The demo server, upstream.
	dst, dct := mcp.NewInMemoryTransports()
	dss, err := demo.NewServer("", nil).Connect(ctx, dst, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dss.Close()
	up, err := mcp.NewClient(&mcp.Implementation{Name: "up"}, nil).Connect(ctx, dct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	var entries []toolsearch.Entry
	for tl, err := range up.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, toolsearch.Entry{Name: "demo__" + tl.Name, Server: "demo", Tool: tl})
	}
	var sent atomic.Int32
	x := searchtools.New(toolsearch.New(entries), func(ctx context.Context, e toolsearch.Entry, args map[string]any) (*mcp.CallToolResult, error) {
		sent.Add(1)
		return up.CallTool(ctx, &mcp.CallToolParams{Name: e.Tool.Name, Arguments: args})
	})

	// The front a client sees: the three tools only.
	front := mcp.NewServer(&mcp.Implementation{Name: "front"}, nil)
	for _, tl := range x.Tools() {
		front.AddTool(tl, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return x.Call(ctx, req.Params.Name, req.Params.Arguments)
		})
	}
	fst, fct := mcp.NewInMemoryTransports()
	fss, err := front.Connect(ctx, fst, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "model"}, nil).Connect(ctx, fct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	lr, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(lr.Tools) != 3 {
		t.Fatalf("listed %d tools, want the three", len(lr.Tools))
	}

	call := func(name string, args any) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var b strings.Builder
		for _, c := range res.Content {
			b.WriteString(c.(*mcp.TextContent).Text)
		}
		return b.String(), res.IsError
	}

	out, isErr := call(searchtools.SearchTool, map[string]any{"query": "add two numbers", "limit": 2})
	var found struct{ Tools []searchtools.Found }
	if err := json.Unmarshal([]byte(out), &found); isErr || err != nil || len(found.Tools) == 0 {
		t.Fatalf("search: %s (%v)", out, err)
	}
	if found.Tools[0].Name != "demo__add" || found.Tools[0].InputSchema == nil {
		t.Fatalf("search's best match is %+v, want demo__add with its schema", found.Tools[0])
	}

	out, isErr = call(searchtools.DescribeTool, map[string]any{"names": []string{"demo__add"}})
	if isErr || !strings.Contains(out, `"outputSchema"`) || !strings.Contains(out, `"demo__add"`) {
		t.Fatalf("describe: %s", out)
	}
	out, isErr = call(searchtools.DescribeTool, map[string]any{"names": []string{"demo__ad"}})
	if !isErr || !strings.Contains(out, `no tool named "demo__ad"; did you mean demo__add`) {
		t.Fatalf("describe of an unknown tool: %s", out)
	}

	// Arguments that do not fit: said as `mcptray call` says it, nothing sent.
	out, isErr = call(searchtools.CallTool, map[string]any{"name": "demo__add", "arguments": map[string]any{"a": "two", "b": 3}})
	if !isErr || !strings.Contains(out, "argument a: must be number, not the string \"two\"") || !strings.Contains(out, "nothing was sent") {
		t.Fatalf("bad arguments: %s", out)
	}
	out, isErr = call(searchtools.CallTool, map[string]any{"name": "demo__add", "arguments": map[string]any{"a": 2}})
	if !isErr || !strings.Contains(out, "argument b: is required") {
		t.Fatalf("missing argument: %s", out)
	}
	out, isErr = call(searchtools.CallTool, map[string]any{"arguments": map[string]any{}})
	if !isErr || !strings.Contains(out, "argument name: is required") {
		t.Fatalf("call without a name: %s", out)
	}
	if n := sent.Load(); n != 0 {
		t.Fatalf("%d calls reached the server before one fitted", n)
	}

	out, isErr = call(searchtools.CallTool, map[string]any{"name": "demo__add", "arguments": map[string]any{"a": 2, "b": 3}})
	if isErr || !strings.Contains(out, `"sum":5`) || sent.Load() != 1 {
		t.Fatalf("call: %s (sent %d)", out, sent.Load())
	}

	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "nope"}); err == nil {
		t.Fatal("a tool that is not one of the three was answered")
	}
}
