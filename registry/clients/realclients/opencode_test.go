package realclients

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/tailscale/hujson"
)

// opencodeEntries reads `opencode mcp list` (every server and whether
// opencode connected to it; opencode 1.18 draws a box: "●  ✓ NAME
// connected") and its config file for the fields. opencode has one kind of
// remote entry for Streamable HTTP and SSE (it tries the one, then the
// other): a remote entry with an SSE server's own URL reads as SSE.
func opencodeEntries(h *home) map[string]entry {
	out, errOut := h.client("mcp", "list")
	listed := ansi.ReplaceAllString(out+errOut, "")
	got := map[string]entry{}
	line := regexp.MustCompile(`^●\s+[✓✗!○]\s+([A-Za-z0-9_-]+)\s+(.*)$`)
	for _, l := range strings.Split(listed, "\n") {
		if m := line.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			got[m[1]] = entry{status: strings.TrimSpace(m[2])}
		}
	}
	if len(got) == 0 {
		h.t.Logf("opencode mcp list:\n%s", listed)
	}
	var file string
	for _, name := range []string{"opencode.jsonc", "opencode.json"} {
		if p := filepath.Join(h.dir, ".config", "opencode", name); fileExists(p) {
			file = p
			break
		}
	}
	if file == "" {
		h.t.Fatalf("no opencode config in %s", filepath.Join(h.dir, ".config", "opencode"))
	}
	std, err := hujson.Standardize(readFile(h.t, file))
	if err != nil {
		h.t.Fatalf("%s: %v", file, err)
	}
	var cfg struct {
		MCP map[string]struct {
			Type        string            `json:"type"`
			Command     []string          `json:"command"`
			Environment map[string]string `json:"environment"`
			URL         string            `json:"url"`
			Headers     map[string]string `json:"headers"`
		} `json:"mcp"`
	}
	if err := json.Unmarshal(std, &cfg); err != nil {
		h.t.Fatalf("%s: %v", file, err)
	}
	sse := map[string]bool{} // the SSE servers' own URLs
	for _, s := range h.servers {
		if s.transport == "sse" {
			sse[s.url] = true
		}
	}
	for name, s := range cfg.MCP {
		e, ok := got[name]
		if !ok {
			h.t.Errorf("%s has %s but `opencode mcp list` does not show it", file, name)
			continue
		}
		switch s.Type {
		case "local":
			e.transport, e.env = "stdio", s.Environment
			if len(s.Command) > 0 {
				e.command, e.args = s.Command[0], s.Command[1:]
			}
		case "remote":
			e.transport, e.url, e.headers = "http", s.URL, s.Headers
			if sse[s.URL] {
				e.transport = "sse"
			}
		default:
			h.t.Errorf("%s: %s has type %q", file, name, s.Type)
		}
		got[name] = e
	}
	return got
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
