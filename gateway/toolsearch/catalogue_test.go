package toolsearch_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/demo"
	"mcptray/gateway/toolsearch"
	"mcptray/internal/wine"
)

// The tools real servers list, captured once into testdata/tools so the
// search quality test runs without node. Regenerate them (after the npm
// servers in testdata/servers/package.json change) with
//
//	go test ./gateway/toolsearch -run TestCatalogues -update
//
// TestCatalogues fails when a capture is no longer what the installed
// server lists.
var update = flag.Bool("update", false, "rewrite testdata/tools from the installed servers")

// catalogue is one captured server: how it is run, and where its tools are kept.
type catalogue struct {
	server string
	// npm is the package under MCPTRAY_TEST_SERVERS and its arguments
	// ("" for the demo server, run in process).
	npm  string
	args []string
}

var catalogues = []catalogue{
	{server: "everything", npm: "server-everything", args: []string{"stdio"}},
	// The folder is an argument only; the tools' definitions do not name it.
	{server: "filesystem", npm: "server-filesystem", args: []string{"/tmp"}},
	{server: "memory", npm: "server-memory"},
	{server: "demo"},
}

func capturePath(server string) string { return filepath.Join("testdata", "tools", server+".json") }

// loadCatalogues are the captured tools of every server, as index entries
// named SERVER__TOOL, as an aggregate names them.
func loadCatalogues(t testing.TB) []toolsearch.Entry {
	t.Helper()
	var out []toolsearch.Entry
	for _, c := range catalogues {
		b, err := os.ReadFile(capturePath(c.server))
		if err != nil {
			t.Fatalf("%v (regenerate: go test ./gateway/toolsearch -run TestCatalogues -update)", err)
		}
		var tools []*mcp.Tool
		if err := json.Unmarshal(b, &tools); err != nil {
			t.Fatalf("%s: %v", capturePath(c.server), err)
		}
		for _, tl := range tools {
			out = append(out, toolsearch.Entry{Name: c.server + "__" + tl.Name, Server: c.server, Tool: tl})
		}
	}
	return out
}

// listTools is what server c lists now, to a client that declares
// sampling, elicitation and roots (server-everything offers the tools
// that need them only then).
func listTools(t *testing.T, c catalogue) []*mcp.Tool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "toolsearch-capture", Version: "1"}, &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Content: &mcp.TextContent{}}, nil
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	})
	client.AddRoots(&mcp.Root{URI: "file:///tmp"})
	var tr mcp.Transport
	if c.npm == "" {
		st, ct := mcp.NewInMemoryTransports()
		ss, err := demo.NewServer("", nil).Connect(ctx, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ss.Close()
		tr = ct
	} else {
		js := filepath.Join(testServers(t), "@modelcontextprotocol", c.npm, "dist", "index.js")
		cmd := exec.Command("node", append([]string{js}, c.args...)...)
		cmd.Env = append(os.Environ(), "MEMORY_FILE_PATH="+filepath.Join(t.TempDir(), "memory.jsonl"))
		tr = &mcp.CommandTransport{Command: cmd}
	}
	cs, err := client.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("%s: %v", c.server, err)
	}
	defer cs.Close()
	var tools []*mcp.Tool
	for tl, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("%s: tools/list: %v", c.server, err)
		}
		tools = append(tools, tl)
	}
	return tools
}

// testServers is where npm installed the test servers; without them the
// test skips, and fails under CI.
func testServers(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("MCPTRAY_TEST_SERVERS")
	if dir == "" {
		_, file, _, _ := runtime.Caller(0)
		dir = filepath.Join(filepath.Dir(file), "..", "..", ".testservers", "node_modules")
	}
	_, err := os.Stat(filepath.Join(dir, "@modelcontextprotocol", "server-everything", "dist", "index.js"))
	if err == nil {
		_, err = exec.LookPath("node")
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the npm test servers are needed (./packaging/ensure-deps.sh npm): %v", err)
		}
		t.Skipf("the npm test servers are not installed (./packaging/ensure-deps.sh npm): %v", err)
	}
	return dir
}

func encodeTools(t *testing.T, tools []*mcp.Tool) []byte {
	t.Helper()
	b, err := json.MarshalIndent(tools, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// TestCatalogues checks each capture in testdata/tools is what its server
// lists today (and rewrites it with -update).
func TestCatalogues(t *testing.T) {
	wine.Skip(t, "runs no Node.js here (the npm servers are node programs)")
	for _, c := range catalogues {
		t.Run(c.server, func(t *testing.T) {
			got := encodeTools(t, listTools(t, c))
			if *update {
				if err := os.MkdirAll(filepath.Dir(capturePath(c.server)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(capturePath(c.server), got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(capturePath(c.server))
			if err != nil {
				t.Fatal(err)
			}
			// Compared as decoded JSON: the capture's bytes are its own.
			var g, w any
			_ = json.Unmarshal(got, &g)
			if err := json.Unmarshal(want, &w); err != nil {
				t.Fatalf("%s: %v", capturePath(c.server), err)
			}
			gb, _ := json.Marshal(g)
			wb, _ := json.Marshal(w)
			if !bytes.Equal(gb, wb) {
				t.Errorf("%s lists other tools than %s holds: regenerate it with\n\tgo test ./gateway/toolsearch -run TestCatalogues -update\nnow:\n%s", c.server, capturePath(c.server), got)
			}
		})
	}
}
