package realclients

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/tailscale/hujson"
)

// copilotEnv keeps GitHub Copilot CLI off the network and away from any
// account: offline mode needs a model provider, and one that listens
// nowhere is never asked (no prompt reaches a model).
var copilotEnv = []string{
	"COPILOT_OFFLINE=true",
	"COPILOT_PROVIDER_BASE_URL=http://127.0.0.1:9/v1",
	"COPILOT_MODEL=gpt-4o",
	"COPILOT_AUTO_UPDATE=false",
}

// copilotEntries reads ~/.copilot/mcp-config.json (every server's fields)
// and asks `copilot --acp` for their status: ACP's session/new connects
// every configured server, and the /mcp command, run as a prompt, lists
// each with its state without a model.
func copilotEntries(h *home) map[string]entry {
	data, err := os.ReadFile(filepath.Join(h.dir, ".copilot", "mcp-config.json"))
	if err != nil {
		h.t.Fatal(err)
	}
	var cfg struct {
		MCPServers map[string]struct {
			Type    string            `json:"type"`
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		h.t.Fatalf("mcp-config.json: %v\n%s", err, data)
	}
	got := map[string]entry{}
	for name, s := range cfg.MCPServers {
		tr := s.Type
		if tr == "local" || tr == "" && s.Command != "" {
			tr = "stdio"
		}
		got[name] = entry{transport: tr, command: s.Command, args: s.Args, env: s.Env, url: s.URL, headers: s.Headers}
	}
	status := copilotStatus(h)
	for name, e := range got {
		e.status = status[name]
		got[name] = e
	}
	return got
}

// mcpLine is one server in the answer to Copilot's /mcp command:
// "- name (connected)" or "- name (failed): error: …".
var mcpLine = regexp.MustCompile(`(?m)^- (\S+) \(([^)]*)\)(.*)$`)

// copilotStatus is each server's state as `copilot --acp` reports it once
// every server has finished connecting (asked again while one is still
// starting, at most for two minutes).
func copilotStatus(h *home) map[string]string {
	as := startRPC(h.t, filepath.Join(h.f.clients, ".bin", "copilot"), h.proj, h.env(true), "--acp")
	ctx := context.Background()
	if _, err := as.call(ctx, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}); err != nil {
		h.t.Fatalf("copilot --acp initialize: %v\n%s", err, as.Stderr())
	}
	res, err := as.call(ctx, "session/new", map[string]any{"cwd": h.proj, "mcpServers": []any{}})
	if err != nil {
		h.t.Fatalf("copilot --acp session/new: %v\n%s", err, as.Stderr())
	}
	var sess struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(res, &sess); err != nil || sess.SessionID == "" {
		h.t.Fatalf("copilot --acp session/new: %s (%v)", res, err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		before := len(as.Notes())
		if _, err := as.call(ctx, "session/prompt", map[string]any{"sessionId": sess.SessionID,
			"prompt": []any{map[string]any{"type": "text", "text": "/mcp"}}}); err != nil {
			h.t.Fatalf("copilot --acp /mcp: %v\n%s", err, as.Stderr())
		}
		var text strings.Builder
		for _, n := range as.Notes()[before:] {
			method, params, _ := strings.Cut(n, " ")
			var p struct {
				Update struct {
					Kind    string `json:"sessionUpdate"`
					Content struct {
						Text string `json:"text"`
					} `json:"content"`
				} `json:"update"`
			}
			if method == "session/update" && json.Unmarshal([]byte(params), &p) == nil && p.Update.Kind == "agent_message_chunk" {
				text.WriteString(p.Update.Content.Text)
			}
		}
		out := map[string]string{}
		settled := true
		for _, m := range mcpLine.FindAllStringSubmatch(text.String(), -1) {
			out[m[1]] = m[2]
			if m[2] != "connected" && m[2] != "failed" && m[2] != "disabled" {
				settled = false
			}
			if m[2] == "failed" {
				out[m[1]] = "failed" + m[3]
			}
		}
		if settled || time.Now().After(deadline) {
			if len(out) == 0 {
				h.t.Logf("copilot /mcp answered:\n%s", text.String())
			}
			return out
		}
	}
}

// qwenEntries reads `qwen mcp list` (every server, its transport and
// whether Qwen Code connected, in the trusted project folder) and the
// fields from ~/.qwen/settings.json.
func qwenEntries(h *home) map[string]entry {
	return geminiLikeEntries(h, "qwen", filepath.Join(h.dir, ".qwen", "settings.json"))
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// geminiLikeEntries is Gemini CLI's way, shared by its fork Qwen Code:
// `mcp list` for the status, the settings file for the fields.
func geminiLikeEntries(h *home, id, settingsFile string) map[string]entry {
	out, errOut := h.client("mcp", "list")
	listed := ansi.ReplaceAllString(out+errOut, "")
	got := map[string]entry{}
	line := regexp.MustCompile(`^\S+ ([A-Za-z0-9_-]+): (.*) \((stdio|http|sse)\) - (.*)$`)
	shown := map[string]string{}
	for _, l := range strings.Split(listed, "\n") {
		if m := line.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			got[m[1]] = entry{transport: m[3], status: m[4]}
			shown[m[1]] = m[2]
		}
	}
	if len(got) == 0 {
		h.t.Logf("%s mcp list:\n%s", id, listed)
	}
	data, err := os.ReadFile(settingsFile)
	if err != nil {
		h.t.Fatal(err)
	}
	std, err := hujson.Standardize(data)
	if err != nil {
		h.t.Fatalf("%s: %v", settingsFile, err)
	}
	var settings struct {
		MCPServers map[string]struct {
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
			URL     string            `json:"url"`
			HTTPURL string            `json:"httpUrl"`
			Type    string            `json:"type"`
			Headers map[string]string `json:"headers"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(std, &settings); err != nil {
		h.t.Fatalf("%s: %v", settingsFile, err)
	}
	for name, s := range settings.MCPServers {
		e, ok := got[name]
		if !ok {
			h.t.Errorf("%s has %s but `%s mcp list` does not show it", settingsFile, name, id)
			continue
		}
		u := s.URL
		if s.HTTPURL != "" {
			u = s.HTTPURL
		}
		e.command, e.args, e.env, e.url, e.headers = s.Command, s.Args, s.Env, u, s.Headers
		if want := strings.TrimSpace(s.Command + " " + strings.Join(s.Args, " ") + u); shown[name] != want {
			h.t.Errorf("%s mcp list shows %s as %q, %s says %q", id, name, shown[name], filepath.Base(settingsFile), want)
		}
		got[name] = e
	}
	return got
}
