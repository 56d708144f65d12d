//go:build unix

package gateway_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/gateway"
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
