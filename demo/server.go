// Package demo is mcptray's built-in MCP server: small, real, and speaking
// both eras of the protocol (server/discover of 2026-07-28 and the initialize
// handshake of 2025-11-25 and older). It is the server a fresh install shows,
// and a fixture for tests that need a well-behaved peer.
package demo

import (
	"context"
	"fmt"
	"io"
	"time"
	_ "time/tzdata" // the time tool takes IANA zones on machines without a zone database

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Name and Version identify the demo server in serverInfo.
const (
	Name    = "mcptray-demo"
	Version = "1.0.0"
)

// Instructions is what the server tells clients about itself.
const Instructions = "mcptray's built-in demo server. Tools: echo (repeats a message), add (sums two numbers), time (the current time). Resource demo://readme. Prompt greet."

// Options tunes the demo server.
type Options struct {
	// Versions restricts the protocol versions offered (newest first); empty
	// means every version the SDK speaks.
	Versions []string
	// Now is the clock for the time tool (nil: time.Now).
	Now func() time.Time
	// ModernOnly refuses the initialize handshake, as a server that speaks
	// only the stateless revision (2026-07-28) does: clients must use
	// server/discover.
	ModernOnly bool
}

// ErrInitializeRefused is what a ModernOnly server answers to initialize.
var ErrInitializeRefused = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "initialize is not supported; this server speaks 2026-07-28"}

// RefuseInitialize is a receiving middleware that makes a go-sdk server
// modern-only: initialize is refused, everything else goes through.
func RefuseInitialize(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "initialize" {
			return nil, ErrInitializeRefused
		}
		return next(ctx, method, req)
	}
}

// NewServer builds the demo server.
func NewServer(version string, opts *Options) *mcp.Server {
	if opts == nil {
		opts = &Options{}
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	if version == "" {
		version = Version
	}
	s := mcp.NewServer(&mcp.Implementation{Name: Name, Title: "mcptray demo", Version: version}, &mcp.ServerOptions{
		Instructions:              Instructions,
		SupportedProtocolVersions: opts.Versions,
	})
	if opts.ModernOnly {
		s.AddReceivingMiddleware(RefuseInitialize)
	}

	type echoIn struct {
		Message string `json:"message" jsonschema:"the text to repeat"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Title: "Echo", Description: "Repeats the message back."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return text(in.Message), nil, nil
		})

	type addIn struct {
		A float64 `json:"a" jsonschema:"the first number"`
		B float64 `json:"b" jsonschema:"the second number"`
	}
	type addOut struct {
		Sum float64 `json:"sum"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "add", Title: "Add", Description: "Adds two numbers."},
		func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, addOut, error) {
			return nil, addOut{Sum: in.A + in.B}, nil
		})

	type timeIn struct {
		Zone string `json:"zone,omitempty" jsonschema:"an IANA time zone such as Europe/Paris; default UTC"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "time", Title: "Time", Description: "Tells the current time, in UTC or a given time zone."},
		func(_ context.Context, _ *mcp.CallToolRequest, in timeIn) (*mcp.CallToolResult, any, error) {
			loc := time.UTC
			if in.Zone != "" {
				l, err := time.LoadLocation(in.Zone)
				if err != nil {
					return nil, nil, fmt.Errorf("unknown time zone %q", in.Zone)
				}
				loc = l
			}
			return text(now().In(loc).Format(time.RFC3339)), nil, nil
		})

	s.AddResource(&mcp.Resource{URI: "demo://readme", Name: "readme", Title: "About the demo server", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
				URI: req.Params.URI, MIMEType: "text/plain", Text: Instructions,
			}}}, nil
		})

	s.AddPrompt(&mcp.Prompt{Name: "greet", Title: "Greet", Description: "A friendly greeting for someone.",
		Arguments: []*mcp.PromptArgument{{Name: "name", Description: "who to greet", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			name := req.Params.Arguments["name"]
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{
				Role: "user", Content: &mcp.TextContent{Text: "Say hello to " + name + "."},
			}}}, nil
		})
	return s
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// Serve runs the demo server over stdio until ctx ends or stdin closes.
func Serve(ctx context.Context, in io.ReadCloser, out io.WriteCloser, opts *Options) error {
	return NewServer("", opts).Run(ctx, &mcp.IOTransport{Reader: in, Writer: out})
}
