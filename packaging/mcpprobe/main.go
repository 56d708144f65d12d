// Command mcpprobe is a go-sdk MCP client for `make dist-test`: it runs the
// command line it is given as a stdio server (`mcptray connect demo` inside
// the installed system), connects, lists the tools, calls echo and prints
// what came back; it exits 1 with the reason when any step fails. Built
// statically, it runs in the clean system without anything installed.
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: mcpprobe COMMAND [ARGS...]")
		os.Exit(2)
	}
	if err := probe(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "mcpprobe:", err)
		os.Exit(1)
	}
}

func probe(argv []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpprobe", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", strings.Join(argv, " "), err)
	}
	defer cs.Close()
	if r := cs.InitializeResult(); r != nil && r.ServerInfo != nil {
		fmt.Printf("server: %s %s, protocol %s\n", r.ServerInfo.Name, r.ServerInfo.Version, r.ProtocolVersion)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	var names []string
	for _, t := range tools.Tools {
		names = append(names, t.Name)
	}
	fmt.Printf("tools: %s\n", strings.Join(names, ","))
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hello from mcpprobe"}})
	if err != nil {
		return fmt.Errorf("tools/call echo: %w", err)
	}
	if res.IsError {
		return fmt.Errorf("tools/call echo: the tool failed: %+v", res.Content)
	}
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			fmt.Printf("echo: %s\n", t.Text)
		}
	}
	return nil
}
