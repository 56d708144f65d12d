//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bytesPerToken is the estimate of tokens a model's tokenizer makes of
// tool definitions' JSON: about four bytes a token, the usual rule for
// English text and JSON with today's tokenizers (an estimate, not a
// count: no tokenizer is run).
const bytesPerToken = 4

// exposureBench is the size of what a client's model reads on every turn:
// tools/list through an aggregate of the real npm servers (server-
// everything, -filesystem, -memory) and the demo, with full exposure (every
// tool, namespaced) against search exposure (search_tools, describe_tools,
// call_tool), the same servers in one daemon. Bytes are the result's JSON
// as the client gets it. Reported, no target: search exposure is to stay
// flat whatever the servers offer.
func exposureBench(bin, servers, dir string, env []string) {
	mods := filepath.Join(servers, "@modelcontextprotocol")
	everything := filepath.Join(mods, "server-everything", "dist", "index.js")
	filesystem := filepath.Join(mods, "server-filesystem", "dist", "index.js")
	memory := filepath.Join(mods, "server-memory", "dist", "index.js")
	for _, p := range []string{everything, filesystem, memory} {
		if !exists(p) {
			fmt.Println("| tools/list bytes, full vs search exposure | – | – | – | skipped: `make test` installs the npm servers |")
			return
		}
	}
	if h := filepath.Join(filepath.Dir(bin), "mcptray-headless"); exists(h) {
		bin = h
	}
	run := filepath.Join(dir, "run-exposure")
	check(os.MkdirAll(run, 0o700))
	files := filepath.Join(dir, "exposure-files")
	check(os.MkdirAll(files, 0o700))
	members := []string{"everything", "filesystem", "memory", "demo"}
	list := `["everything", "filesystem", "memory", "demo"]`
	cfg := writeConfig(dir, "exposure.toml", fmt.Sprintf(`[servers.everything]
command = "node"
args = [%q, "stdio"]

[servers.filesystem]
command = "node"
args = [%q, %q]

[servers.memory]
command = "node"
args = [%q]
env = { MEMORY_FILE_PATH = %q }

[servers.demo]
command = %q
args = ["serve-demo"]

[profiles.full]
servers = %s

[profiles.find]
servers = %s
exposure = "search"
`, everything, filesystem, files, memory, filepath.Join(dir, "memory.json"), bin, list, list))
	env = append(slices.Clone(env), "XDG_RUNTIME_DIR="+run, "MCPTRAY_CONFIG="+cfg)
	daemon := exec.Command(bin, "daemon")
	daemon.Env = env
	check(daemon.Start())
	defer stopGUI(daemon)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	connect := func(profile string) *mcp.ClientSession {
		cmd := exec.Command(bin, "connect", "--config", cfg, "--profile", profile)
		cmd.Env = env
		return session(ctx, &mcp.CommandTransport{Command: cmd})
	}
	full, find := connect("full"), connect("find")
	defer full.Close()
	defer find.Close()
	size := func(cs *mcp.ClientSession) (int, int) {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			fail("tools/list: %v", err)
		}
		b, err := json.Marshal(res)
		check(err)
		return len(b), len(res.Tools)
	}
	// Every server listed: the full profile offers tools of each.
	deadline := time.Now().Add(3 * time.Minute)
	for {
		res, err := full.ListTools(ctx, nil)
		have := 0
		if err == nil {
			for _, m := range members {
				if slices.ContainsFunc(res.Tools, func(t *mcp.Tool) bool { return strings.HasPrefix(t.Name, m+"__") }) {
					have++
				}
			}
		}
		if have == len(members) {
			break
		}
		if time.Now().After(deadline) {
			fail("the full profile lists tools of %d of its %d servers (err %v)", have, len(members), err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	fb, fn := size(full)
	sb, sn := size(find)
	tokens := func(b int) int { return (b + bytesPerToken - 1) / bytesPerToken }
	fmt.Printf("| tools/list through an aggregate of server-everything, -filesystem, -memory and the demo: full exposure (%d tools) vs search exposure (%d tools); bytes of the result's JSON, tokens estimated at %d bytes each | %d bytes, ~%d tokens | %d bytes, ~%d tokens | search is %.1f%% of full (%.0fx smaller) | reported |\n",
		fn, sn, bytesPerToken, fb, tokens(fb), sb, tokens(sb), 100*float64(sb)/float64(fb), float64(fb)/float64(sb))
}
