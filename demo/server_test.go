package demo

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestMain(m *testing.M) {
	// Re-executed as the demo server on real stdin/stdout.
	if os.Getenv("DEMO_TEST_SERVE") == "1" {
		var opts Options
		if v := os.Getenv("DEMO_TEST_VERSIONS"); v != "" {
			opts.Versions = strings.Split(v, ",")
		}
		opts.ModernOnly = os.Getenv("DEMO_TEST_MODERN_ONLY") == "1"
		if err := Serve(context.Background(), os.Stdin, os.Stdout, &opts); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func connect(t *testing.T, version string, env ...string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), "DEMO_TEST_SERVE=1"), env...)
	client := mcp.NewClient(&mcp.Implementation{Name: "demo-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect (%s): %v", version, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestBothEras(t *testing.T) {
	for _, tt := range []struct {
		offer, want string
		env         []string
	}{
		{"2026-07-28", "2026-07-28", nil},                                       // server/discover
		{"2025-11-25", "2025-11-25", nil},                                       // initialize
		{"2024-11-05", "2024-11-05", nil},                                       // oldest initialize
		{"2026-07-28", "2025-06-18", []string{"DEMO_TEST_VERSIONS=2025-06-18"}}, // discover refused, initialize
	} {
		t.Run(tt.offer+"->"+tt.want, func(t *testing.T) {
			cs := connect(t, tt.offer, tt.env...)
			ctx := context.Background()
			res := cs.InitializeResult()
			if res.ProtocolVersion != tt.want {
				t.Errorf("protocol version = %s, want %s", res.ProtocolVersion, tt.want)
			}
			if res.ServerInfo == nil || res.ServerInfo.Name != Name || res.Instructions != Instructions {
				t.Errorf("identity = %+v, instructions %q", res.ServerInfo, res.Instructions)
			}
			var tools []string
			for tool, err := range cs.Tools(ctx, nil) {
				if err != nil {
					t.Fatal(err)
				}
				tools = append(tools, tool.Name)
			}
			if strings.Join(tools, ",") != "add,echo,time" {
				t.Errorf("tools = %v", tools)
			}
			r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 2, "b": 40.5}})
			if err != nil || r.IsError {
				t.Fatalf("add: %v %+v", err, r)
			}
			if b, _ := json.Marshal(r.StructuredContent); string(b) != `{"sum":42.5}` {
				t.Errorf("add result = %s", b)
			}
			r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "héllo"}})
			if err != nil || r.Content[0].(*mcp.TextContent).Text != "héllo" {
				t.Errorf("echo: %v %+v", err, r)
			}
			rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "demo://readme"})
			if err != nil || !strings.Contains(rr.Contents[0].Text, "demo server") {
				t.Errorf("read resource: %v", err)
			}
			p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "Ada"}})
			if err != nil || !strings.Contains(p.Messages[0].Content.(*mcp.TextContent).Text, "Ada") {
				t.Errorf("prompt: %v", err)
			}
			if tt.want < "2026-07-28" {
				if err := cs.Ping(ctx, nil); err != nil {
					t.Errorf("ping: %v", err)
				}
			}
		})
	}
}

func TestTimeTool(t *testing.T) {
	fixed := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	srv := NewServer("", &Options{Now: func() time.Time { return fixed }})
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for zone, want := range map[string]string{"": "2026-11-30T12:00:00Z", "Asia/Tokyo": "2026-11-30T21:00:00+09:00"} {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "time", Arguments: map[string]any{"zone": zone}})
		if err != nil || r.Content[0].(*mcp.TextContent).Text != want {
			t.Errorf("time(%q) = %v %+v, want %s", zone, err, r, want)
		}
	}
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "time", Arguments: map[string]any{"zone": "Mars/Olympus"}})
	if err != nil || !r.IsError {
		t.Errorf("bad zone: %v %+v", err, r)
	}
}

// A modern-only demo answers server/discover and refuses initialize, the
// way a server of the stateless revision alone does.
func TestModernOnly(t *testing.T) {
	cs := connect(t, "2026-07-28", "DEMO_TEST_MODERN_ONLY=1")
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("protocol version = %s, want 2026-07-28", v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "DEMO_TEST_SERVE=1", "DEMO_TEST_MODERN_ONLY=1")
	client := mcp.NewClient(&mcp.Implementation{Name: "demo-test", Version: "1"}, nil)
	_, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err == nil || !strings.Contains(err.Error(), ErrInitializeRefused.Message) {
		t.Fatalf("initialize with a modern-only demo: %v, want %q", err, ErrInitializeRefused.Message)
	}
}
