// Command bareclient is the baseline the bench measures mcptray against:
// a bare go-sdk client and nothing else, built as pure Go (CGO_ENABLED=0,
// a static binary, as a Go MCP client would ship). It must not link what
// the bench itself needs (X11 for the GUI rows): a baseline that loads
// shared libraries at start is slower than the world's, and every ratio
// against it kinder than the truth.
//
//	bareclient list SERVER ARGS...      start the server, connect, tools/list, close
//	bareclient call SERVER ARGS...      start the server, connect, call add {"a":2,"b":3}, close
//	bareclient many N SERVER ARGS...    start N servers, connect to each at once, tools/list, close all
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if len(os.Args) < 3 {
		usage()
	}
	args := os.Args[2:]
	var err error
	switch os.Args[1] {
	case "list":
		err = session(args, func(ctx context.Context, cs *mcp.ClientSession) error {
			_, err := cs.ListTools(ctx, nil)
			return err
		})
	case "call":
		err = session(args, func(ctx context.Context, cs *mcp.ClientSession) error {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 2, "b": 3}})
			if err == nil && res.IsError {
				err = errors.New("the tool reported an error")
			}
			return err
		})
	case "many":
		n, aerr := strconv.Atoi(args[0])
		if aerr != nil || n < 1 || len(args) < 2 {
			usage()
		}
		err = many(n, args[1:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bareclient:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: bareclient list|call SERVER [ARGS...] | bareclient many N SERVER [ARGS...]")
	os.Exit(2)
}

// session starts the server argv, connects, runs do and closes.
func session(argv []string, do func(context.Context, *mcp.ClientSession) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(argv[0], argv[1:]...)}, nil)
	if err != nil {
		return err
	}
	defer cs.Close()
	return do(ctx, cs)
}

// many is the n-way floor: one process starts n servers, connects to each
// at once, lists tools and closes them all.
func many(n int, argv []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
			cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(argv[0], argv[1:]...)}, nil)
			if err != nil {
				errs <- err
				return
			}
			defer cs.Close()
			if _, err := cs.ListTools(ctx, nil); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs // nil when none failed
}
