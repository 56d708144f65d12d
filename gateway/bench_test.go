//go:build unix

package gateway_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/gateway"
	"mcptray/registry"
	"mcptray/registry/tooltrust"
	"mcptray/supervisor"
)

// BenchmarkRelay is a tools/call through the gateway (client session over
// pipes, upstream over stdio) against the same call on the upstream
// session itself.
func BenchmarkRelay(b *testing.B) {
	e := newEnv(b)
	cs := e.connect(nil, "bench")
	args := map[string]any{"message": "x"}
	ctx := context.Background()
	b.Run("through-gateway", func(b *testing.B) {
		for b.Loop() {
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("through-http-endpoint", func(b *testing.B) {
		base := e.serveHTTP(nil)
		hs, err := mcp.NewClient(&mcp.Implementation{Name: "bench-http"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp/t/" + testKey}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			b.Fatal(err)
		}
		defer hs.Close()
		for b.Loop() {
			if _, err := hs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("upstream-session", func(b *testing.B) {
		err := e.sup.Use(ctx, "t", func(ctx context.Context, s supervisor.Session) error {
			up := s.(interface{ Client() *mcp.ClientSession }).Client()
			for b.Loop() {
				if _, err := up.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkListTools is a tools/list through the gateway, without a trust
// store and with one (every listed definition recorded, held ones left
// out).
func BenchmarkListTools(b *testing.B) {
	for _, withTrust := range []bool{false, true} {
		name := "no-trust-store"
		var opts *gateway.Options
		if withTrust {
			name = "trust-store"
			st, err := tooltrust.Open(filepath.Join(b.TempDir(), tooltrust.FileName), nil)
			if err != nil {
				b.Fatal(err)
			}
			opts = &gateway.Options{Trust: st}
		}
		b.Run(name, func(b *testing.B) {
			e := newEnvAll(b, nil, nil, opts)
			cs := e.connect(nil, "bench")
			ctx := context.Background()
			for b.Loop() {
				if _, err := cs.ListTools(ctx, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAggregate is tools/list through an aggregate of 20 ready
// servers (answered from the supervised catalogues), and a tools/call
// through the aggregate against the same call through the server's own
// session, over pipes.
func BenchmarkAggregate(b *testing.B) {
	// 20 demo servers (3 tools each), as make bench runs.
	var servers []*registry.Server
	for i := range 20 {
		s := testServer(b, fmt.Sprintf("s%d", i+1))
		s.Env = map[string]string{"GATEWAY_TEST_DEMO": "1", "GORACE": "atexit_sleep_ms=0"}
		servers = append(servers, s)
	}
	e := newAggEnv(b, "", servers...)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		ready := 0
		for _, st := range e.sup.Snapshot().Servers {
			if st.State == supervisor.StateReady {
				ready++
			}
		}
		if ready == len(servers) {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d servers ready", ready, len(servers))
		}
		time.Sleep(20 * time.Millisecond)
	}
	agg := e.connectProfile("default", nil)
	one := e.connectTo("s1")
	ctx := context.Background()
	res, err := agg.ListTools(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%d tools through the aggregate", len(res.Tools))
	args := map[string]any{"message": "x"}
	b.Run("tools-list-20-servers", func(b *testing.B) {
		for b.Loop() {
			if _, err := agg.ListTools(ctx, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("tools-call-aggregate", func(b *testing.B) {
		for b.Loop() {
			if _, err := agg.CallTool(ctx, &mcp.CallToolParams{Name: "s1__echo", Arguments: args}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("tools-list-per-server-relayed", func(b *testing.B) {
		for b.Loop() {
			if _, err := one.ListTools(ctx, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("tools-call-per-server", func(b *testing.B) {
		for b.Loop() {
			if _, err := one.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
