package cli

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/demo"
)

// Servers of the 2026-07-28 revision alone that the test binary plays
// (MCPTRAY_TEST_SERVER=modern-only, refuse-initialize).

// serveModernOnly is a server of the 2026-07-28 revision alone: the demo,
// initialize refused, plus a tool that asks its client for a name the
// revision's way (an input_required result, until the call carries the
// answer).
func serveModernOnly() {
	s := demo.NewServer("", &demo.Options{ModernOnly: true})
	type in struct {
		Message string `json:"message"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "ask"}, func(_ context.Context, req *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		if r, ok := req.Params.InputResponses["name"].(*mcp.ElicitResult); ok {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s %v", r.Action, r.Content["name"])}}}, nil, nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"name": &mcp.ElicitParams{
			Message: a.Message, RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}},
		}}}, nil, nil
	})
	_ = s.Run(context.Background(), &mcp.StdioTransport{})
}

// serveRefusingInitialize runs the stdio server at path behind a front
// that answers initialize with the modern-only refusal and passes every
// other line on: the server as one that speaks only 2026-07-28.
func serveRefusingInitialize(path string) {
	cmd := exec.Command(path)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		os.Exit(1)
	}
	out, err := cmd.StdoutPipe()
	if err != nil || cmd.Start() != nil {
		os.Exit(1)
	}
	var mu sync.Mutex // serialises lines on our stdout
	write := func(b []byte) {
		mu.Lock()
		defer mu.Unlock()
		os.Stdout.Write(append(b, '\n'))
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		r := bufio.NewReaderSize(out, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				write(line[:len(line)-min(1, len(line))])
			}
			if err != nil {
				return
			}
		}
	}()
	r := bufio.NewReaderSize(os.Stdin, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) > 0 {
			if msg, derr := jsonrpc.DecodeMessage([]byte(strings.TrimSpace(string(line)))); derr == nil {
				if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && req.Method == "initialize" {
					b, _ := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: req.ID, Error: demo.ErrInitializeRefused})
					write(b)
					continue
				}
			}
			in.Write(line)
		}
		if err != nil {
			break
		}
	}
	in.Close()
	<-done
	_ = cmd.Wait()
}
