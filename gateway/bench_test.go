//go:build unix

package gateway_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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
