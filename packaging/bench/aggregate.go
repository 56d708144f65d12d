//go:build linux

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// aggregateBench measures the default profile's aggregate over 20 ready
// demo servers on the daemon's local endpoint: tools/list (p50 target
// ≤ 2 ms, answered from the supervised catalogues), and tools/call
// through the aggregate against the same call through the server's own
// URL, interleaved in the same run (target ≤ +0.1 ms p50). It reports
// whether a target was missed.
func aggregateBench(bin, dir string, env []string, calls int) (missed bool) {
	if h := filepath.Join(filepath.Dir(bin), "mcptray-headless"); exists(h) {
		bin = h
	}
	const servers = 20
	run := filepath.Join(dir, "run-aggregate")
	check(os.MkdirAll(run, 0o700))
	cfg := writeConfig(dir, "aggregate.toml", demoServers(bin, servers))
	env = append(slices.Clone(env), "XDG_RUNTIME_DIR="+run, "MCPTRAY_CONFIG="+cfg)
	daemon := exec.Command(bin, "daemon")
	daemon.Env = env
	check(daemon.Start())
	defer stopGUI(daemon)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	one := gatewayURL(bin, env, "demo1")
	profile := strings.Replace(one, "/mcp/demo1/", "/profile/default/", 1)
	if profile == one {
		fail("cannot make the profile's URL from %s", one)
	}
	perServer := session(ctx, &mcp.StreamableClientTransport{Endpoint: one})
	agg := session(ctx, &mcp.StreamableClientTransport{Endpoint: profile})
	defer perServer.Close()
	defer agg.Close()

	// Every server ready: the aggregate lists 3 tools of each.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		res, err := agg.ListTools(ctx, nil)
		if err == nil && len(res.Tools) == 3*servers {
			break
		}
		if time.Now().After(deadline) {
			n := 0
			if res != nil {
				n = len(res.Tools)
			}
			fail("the aggregate of %d demo servers lists %d tools (err %v), want %d", servers, n, err, 3*servers)
		}
		time.Sleep(100 * time.Millisecond)
	}

	listOnce := func(cs *mcp.ClientSession) time.Duration {
		start := time.Now()
		if _, err := cs.ListTools(ctx, nil); err != nil {
			fail("tools/list: %v", err)
		}
		return time.Since(start)
	}
	callOnce := func(cs *mcp.ClientSession, tool string) time.Duration {
		start := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"message": "bench"}})
		if err != nil || res.IsError {
			fail("tools/call %s: %v", tool, err)
		}
		return time.Since(start)
	}
	for range 50 { // warm-up
		listOnce(agg)
		callOnce(agg, "demo1__echo")
		callOnce(perServer, "echo")
	}
	raw := rawSession(ctx, profile)
	var lists, raws, one1, via []time.Duration
	for range calls {
		lists = append(lists, listOnce(agg))
		raws = append(raws, raw())
		one1 = append(one1, callOnce(perServer, "echo"))
		via = append(via, callOnce(agg, "demo1__echo"))
	}
	pl := median(lists)
	t := "≤ 2 ms"
	if pl > 2*time.Millisecond {
		t += " **missed**"
		missed = true
	}
	fmt.Printf("| tools/list through the aggregate of %d ready demo servers (%d tools; p50 of %d, local HTTP endpoint, a go-sdk client decoding it) | %s | – | – | %s |\n",
		servers, 3*servers, calls, us(pl), t)
	pr := median(raws)
	t = "≤ 2 ms"
	if pr > 2*time.Millisecond {
		t += " **missed**"
		missed = true
	}
	fmt.Printf("| the same tools/list, the answer read whole without decoding it (what the gateway takes) | %s | – | – | %s |\n", us(pr), t)
	pp, pa := median(one1), median(via)
	t = "≤ +0.1 ms"
	if pa-pp > 100*time.Microsecond {
		t += " **missed**"
		missed = true
	}
	fmt.Printf("| tools/call through the aggregate vs through the server's own URL (p50 of %d, same run) | %s | %s | +%s | %s |\n",
		calls, us(pa), us(pp), us(pa-pp), t)
	return missed
}

// rawSession opens an HTTP session of the endpoint url by hand and returns
// a tools/list round trip on it whose answer is read whole, not decoded:
// the gateway's share of a list, without a client's decoding.
func rawSession(ctx context.Context, url string) func() time.Duration {
	post := func(sid, body string) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		return http.DefaultClient.Do(req)
	}
	resp, err := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench-raw","version":"1"}}}`)
	if err != nil {
		fail("raw initialize: %v", err)
	}
	sid := resp.Header.Get("Mcp-Session-Id")
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if sid == "" {
		fail("raw initialize: no session id (status %d)", resp.StatusCode)
	}
	if resp, err = post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		fail("raw initialized: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	id := 1
	return func() time.Duration {
		id++
		start := time.Now()
		resp, err := post(sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, id))
		if err != nil {
			fail("raw tools/list: %v", err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "demo20__echo") {
			fail("raw tools/list: status %d, %d bytes", resp.StatusCode, len(b))
		}
		return time.Since(start)
	}
}
