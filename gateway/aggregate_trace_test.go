//go:build unix

package gateway_test

import (
	"fmt"
	"strings"
	"testing"

	"mcptray/healthcheck"
	"mcptray/registry"
)

// What an aggregate answers itself (the handshake, tools/list and the
// other lists, search_tools and describe_tools) is in its profile's trace,
// as a server's relayed requests are in the server's, with the same
// redaction; what it routes is in the profile's trace as the client sent
// it and in the server's as the server got it.
func TestAggregateTracesItsOwnAnswers(t *testing.T) {
	alpha := testServer(t, "alpha", "ALPHA_API_KEY=sk-agg-secret-7731")
	e := newAggEnv(t, "", alpha, testServer(t, "beta"))
	e.gw.SetProfiles("__", []*registry.Profile{{Name: "find", Servers: []string{"alpha", "beta"}, Exposure: registry.ExposureSearch}})
	e.waitReady("alpha", "beta")
	cs := e.connectProfile("find", nil)
	toolNames(t, cs)
	ctx := e.ctx
	if _, err := cs.ListPrompts(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ListResources(ctx, nil); err != nil {
		t.Fatal(err)
	}
	callText(t, cs, "search_tools", map[string]any{"query": "echo sk-agg-secret-7731", "password": "hunter2-typed"})
	callText(t, cs, "describe_tools", map[string]any{"names": []string{"beta__echo"}})
	if got := callText(t, cs, "call_tool", map[string]any{"name": "beta__echo", "arguments": map[string]any{"message": "routed"}}); got != "routed" {
		t.Fatalf("call_tool: %q", got)
	}

	frames, next, _ := e.gw.ProfileTraceSince("find", 0)
	if next != uint64(len(frames))+1 {
		t.Errorf("next %d after %d frames", next, len(frames))
	}
	var all strings.Builder
	seen := map[string]bool{}
	for _, f := range frames {
		fmt.Fprintf(&all, "%s %s %s %s %s\n", f.Session, f.Dir, f.Kind, f.Method, f.Body)
		if !strings.HasPrefix(f.Session, "@find#") {
			t.Errorf("frame of session %q", f.Session)
		}
		seen[f.Dir+" "+f.Kind+" "+f.Method] = true
		if strings.Contains(f.Body, "sk-agg-secret-7731") || strings.Contains(f.Body, "hunter2-typed") {
			t.Errorf("a secret in the profile's trace: %s", f.Body)
		}
	}
	for _, want := range []string{
		healthcheck.DirClientIn + " request initialize", healthcheck.DirClientOut + " result initialize",
		healthcheck.DirClientIn + " notification notifications/initialized",
		healthcheck.DirClientIn + " request tools/list", healthcheck.DirClientOut + " result tools/list",
		healthcheck.DirClientIn + " request prompts/list", healthcheck.DirClientIn + " request resources/list",
		healthcheck.DirClientIn + " request tools/call", healthcheck.DirClientOut + " result tools/call",
	} {
		if !seen[want] {
			t.Errorf("no %q frame in the profile's trace:\n%s", want, all.String())
		}
	}
	for _, want := range []string{`"name":"search_tools"`, `"name":"describe_tools"`, `"name":"call_tool"`, `"password":"••••••"`, `search_tools`} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("the profile's trace lacks %s:\n%s", want, all.String())
		}
	}
	// The routed call is in beta's trace too, under beta's own tool name.
	bf, _, _ := e.gw.TraceSince("beta", 0)
	found := false
	for _, f := range bf {
		found = found || (f.Method == "tools/call" && strings.Contains(f.Body, `"name":"echo"`) && strings.HasPrefix(f.Session, "@find#"))
	}
	if !found {
		t.Errorf("beta's trace lacks the routed call")
	}
	// Another profile's trace is its own.
	if other, _, _ := e.gw.ProfileTraceSince("default", 0); len(other) != 0 {
		t.Errorf("profile default has %d frames", len(other))
	}
}
