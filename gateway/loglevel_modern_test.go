//go:build unix

package gateway_test

import (
	"context"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server of the 2026-07-28 revision has no logging/setLevel: a request
// says the level it wants logs of in its _meta. Sessions of the initialize
// era that set a level get the server's logs as they do from a server of
// their own era, each at its own level.
func TestLogLevelPerSessionModernUpstream(t *testing.T) {
	e := newEnv(t, "GATEWAY_TEST_MODERN_ONLY=1")
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
}
