package cli

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Terminal escapes a hostile server might send: an OSC 52 clipboard write,
// a screen clear, a colour.
const (
	osc52  = "\x1b]52;c;ZXZpbA==\x07"
	clear2 = "\x1b[2J"
	red    = "\x1b[31m"
)

// TestMain lets the test binary play servers (MCPTRAY_TEST_SERVER=name).
func TestMain(m *testing.M) {
	switch os.Getenv("MCPTRAY_TEST_SERVER") {
	case "":
		os.Exit(m.Run())
	case "escapes":
		// Escapes everywhere a server's text reaches: stderr, a stdout
		// banner, serverInfo and a tool.
		fmt.Fprintln(os.Stderr, "stderr "+osc52+clear2+"line")
		fmt.Println("banner " + osc52 + clear2)
		s := mcp.NewServer(&mcp.Implementation{Name: "evil" + osc52, Version: "1" + red + clear2}, nil)
		mcp.AddTool(s, &mcp.Tool{Name: "t", Description: "tool " + osc52 + clear2},
			func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
				return nil, nil, nil
			})
		s.Run(context.Background(), &mcp.StdioTransport{})
	case "modern-only":
		serveModernOnly()
	case "refuse-initialize":
		serveRefusingInitialize(os.Getenv("MCPTRAY_TEST_WRAP"))
	case "escapes-crash":
		fmt.Fprintln(os.Stderr, "dying "+osc52+clear2+red)
		os.Exit(3)
	}
	os.Exit(0)
}
