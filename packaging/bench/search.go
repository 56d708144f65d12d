//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/gateway/toolsearch"
)

// searchBench is search exposure's index over 1,000 tools (the captured
// tools of server-everything, -filesystem, -memory and the demo, repeated
// under 24 server names) answering the quality test's queries in turn:
// the p50 of one search, target ≤ 1 ms. It reads the captures from the
// source tree (`make bench` runs from its root).
func searchBench() (missed bool) {
	dir := filepath.Join("gateway", "toolsearch", "testdata")
	var base []toolsearch.Entry
	for _, srv := range []string{"everything", "filesystem", "memory", "demo"} {
		b, err := os.ReadFile(filepath.Join(dir, "tools", srv+".json"))
		check(err)
		var tools []*mcp.Tool
		check(json.Unmarshal(b, &tools))
		for _, t := range tools {
			base = append(base, toolsearch.Entry{Server: srv, Tool: t})
		}
	}
	var entries []toolsearch.Entry
	for i := 0; len(entries) < 1000; i++ {
		for _, e := range base {
			s := fmt.Sprintf("%s%d", e.Server, i)
			entries = append(entries, toolsearch.Entry{Name: s + "__" + e.Tool.Name, Server: s, Tool: e.Tool})
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "queries.json"))
	check(err)
	var qs []struct{ Query string }
	check(json.Unmarshal(b, &qs))

	start := time.Now()
	ix := toolsearch.New(entries)
	build := time.Since(start)
	var ds []time.Duration
	for range 50 {
		for _, q := range qs {
			t0 := time.Now()
			ix.Search(q.Query, 5)
			ds = append(ds, time.Since(t0))
		}
	}
	slices.Sort(ds)
	p50, p99 := ds[len(ds)/2], ds[len(ds)*99/100]
	t := "≤ 1 ms"
	if p50 > time.Millisecond {
		t += " **missed**"
		missed = true
	}
	fmt.Printf("| tool search over %d tools, p50 (p99 %s; index built in %s) | %s | – | – | %s |\n", ix.Len(), us(p99), us(build), us(p50), t)
	return missed
}
