//go:build unix

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callArgs is the call both sides of the call benchmark make.
var callArgs = map[string]any{"a": 2, "b": 3}

// callBench times `cli call` of the demo server's add tool (server serves
// it) against a bare go-sdk client that starts the same server and makes
// the same call.
func callBench(self, cli, server string, env []string, runs int) (mcptray, bare time.Duration) {
	return pair(runs, env, callArgv(cli, server), []string{self, "-call-client", server, "serve-demo"})
}

// callArgv is cli's `call` of the add tool of server's demo server.
func callArgv(cli, server string) []string {
	return []string{cli, "call", "add", `{"a":2,"b":3}`, "--", server, "serve-demo"}
}

// bareCall is the baseline: start the server, connect, call the tool.
func bareCall(argv []string) int {
	return bareSession(argv, func(ctx context.Context, cs *mcp.ClientSession) error {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: callArgs})
		if err == nil && res.IsError {
			err = fmt.Errorf("the tool reported an error")
		}
		return err
	})
}

// bareSession starts the server argv, connects a bare go-sdk client, runs
// do and closes; the exit code says whether all went well.
func bareSession(argv []string, do func(context.Context, *mcp.ClientSession) error) int {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(argv[0], argv[1:]...)}, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cs.Close()
	if err := do(ctx, cs); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
