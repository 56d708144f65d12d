package clients

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mcptray/registry"
)

// TestOpencodeJSONC: opencode's own `opencode mcp add` writes opencode.jsonc;
// where that file exists, mcptray imports from it and installs into it, and
// creates no opencode.json beside it. Without it, opencode.json is used.
func TestOpencodeJSONC(t *testing.T) {
	for _, scope := range []Scope{ScopeUser, ScopeProject} {
		t.Run(string(scope), func(t *testing.T) {
			home := t.TempDir()
			proj := filepath.Join(home, "project")
			o := &Options{Home: home, ProjectDir: proj, Scope: scope, Getenv: func(string) string { return "" }}
			dir := filepath.Join(home, ".config", "opencode")
			if scope == ScopeProject {
				dir = proj
			}
			c, _ := Lookup("opencode")
			if p, err := c.Path(o); err != nil || p != filepath.Join(dir, "opencode.json") {
				t.Fatalf("no file yet: path %q, %v; want opencode.json", p, err)
			}
			jsonc := filepath.Join(dir, "opencode.jsonc")
			own := `{
  "$schema": "https://opencode.ai/config.json",
  // added by opencode mcp add
  "mcp": {
    "own": {
      "type": "local",
      "command": ["npx", "-y", "own-server"],
      "enabled": true,
    },
  },
}
`
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(jsonc, []byte(own), 0o600); err != nil {
				t.Fatal(err)
			}
			p, err := c.Path(o)
			if err != nil || p != jsonc {
				t.Fatalf("path %q, %v; want %s", p, err, jsonc)
			}
			im, err := c.Import(p, []byte(own), o)
			if err != nil || len(im.Servers) != 1 || im.Servers[0].Name != "own" || im.Servers[0].Command != "npx" {
				t.Fatalf("import from opencode.jsonc: %+v, %v", im, err)
			}
			srv := &registry.Server{Name: "files", Autostart: true, Command: "/usr/bin/files-server"}
			ch, err := c.Install([]*registry.Server{srv}, o, nil)
			if err != nil {
				t.Fatal(err)
			}
			if ch.Path != jsonc {
				t.Errorf("installed into %s, want %s", ch.Path, jsonc)
			}
			if _, err := os.Stat(filepath.Join(dir, "opencode.json")); !os.IsNotExist(err) {
				t.Errorf("install created a second file opencode.json beside opencode.jsonc (%v)", err)
			}
			got, _ := os.ReadFile(jsonc)
			if !strings.Contains(string(got), "// added by opencode mcp add") || !strings.Contains(string(got), `"files"`) {
				t.Errorf("opencode.jsonc after install:\n%s", got)
			}
		})
	}
	// Another OS than this one: nothing can be looked at, opencode.json.
	c, _ := Lookup("opencode")
	o := &Options{OS: "windows", HostOS: "linux", Home: `C:\Users\me`, Exists: nil}
	if p, _ := c.Path(o); p != `C:\Users\me\.config\opencode\opencode.json` {
		t.Errorf("windows path %q", p)
	}
}

// TestDescriptionRoundTrip: a description is imported and written back for
// the clients that have one (Gemini CLI, Qwen Code, Goose); one the client's
// file holds is kept when servers.toml has none, never duplicated.
func TestDescriptionRoundTrip(t *testing.T) {
	for _, tt := range []struct{ id, file string }{
		{"gemini", `{
  "mcpServers": {
    "docs": { "command": "docs-server", "description": "the team's docs" },
    "keep": { "command": "keep-server", "description": "set in the client" }
  }
}
`},
		{"qwen", `{
  "mcpServers": {
    "docs": { "command": "docs-server", "description": "the team's docs" },
    "keep": { "command": "keep-server", "description": "set in the client" }
  }
}
`},
		{"goose", `extensions:
  docs:
    name: docs
    type: stdio
    cmd: docs-server
    args: []
    description: the team's docs
    enabled: true
    timeout: 300
  keep:
    name: keep
    type: stdio
    cmd: keep-server
    args: []
    description: set in the client
    enabled: true
    timeout: 300
`},
	} {
		t.Run(tt.id, func(t *testing.T) {
			c, _ := Lookup(tt.id)
			o := &Options{Home: "/home/me", Getenv: func(string) string { return "" }}
			im, err := c.Import("f", []byte(tt.file), o)
			if err != nil {
				t.Fatal(err)
			}
			var docs *registry.Server
			for _, s := range im.Servers {
				if s.Name == "docs" {
					docs = s
				}
			}
			if docs == nil || docs.Description != "the team's docs" {
				t.Fatalf("imported %+v", im.Servers)
			}
			// Written back into a new file: the description is there.
			ch, err := c.Merge("f", nil, []*registry.Server{docs}, o)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(ch.New), "the team's docs") {
				t.Errorf("the description is not written back:\n%s", ch.New)
			}
			// Changed in servers.toml: the new one replaces it, once.
			docs.Description = "new words"
			keep := &registry.Server{Name: "keep", Autostart: true, Command: "keep-server", Args: []string{"--v2"}}
			ch, err = c.Merge("f", []byte(tt.file), []*registry.Server{docs, keep}, o)
			if err != nil {
				t.Fatal(err)
			}
			out := string(ch.New)
			if strings.Count(out, "description") != 2 || !strings.Contains(out, "new words") || !strings.Contains(out, "set in the client") {
				t.Errorf("after install, want the new description and the client's own kept, each once:\n%s", out)
			}
			again, err := c.Import("f", ch.New, o)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range again.Servers {
				want := map[string]string{"docs": "new words", "keep": "set in the client"}[s.Name]
				if s.Description != want {
					t.Errorf("re-imported %s description %q, want %q", s.Name, s.Description, want)
				}
			}
		})
	}
}

// TestQwenTransports: Qwen Code reads httpUrl as Streamable HTTP and url as
// SSE; export writes each key, import reads each back as its transport.
func TestQwenTransports(t *testing.T) {
	c, _ := Lookup("qwen")
	o := &Options{Home: "/home/me", Getenv: func(string) string { return "" }}
	servers := []*registry.Server{
		{Name: "web", Autostart: true, URL: "https://web.example/mcp", Headers: map[string]string{"Authorization": "Bearer ${env:TOKEN}"}},
		{Name: "old", Autostart: true, URL: "https://old.example/sse", TransportName: registry.TransportSSE},
	}
	res, err := c.Snippet(servers, o)
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.Data)
	for _, want := range []string{`"httpUrl": "https://web.example/mcp"`, `"url": "https://old.example/sse"`, `"Authorization": "Bearer ${TOKEN}"`} {
		if !strings.Contains(out, want) {
			t.Errorf("snippet lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, `"type"`) {
		t.Errorf("Qwen entries carry no type:\n%s", out)
	}
	im, err := c.Import("settings.json", res.Data, o)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]registry.Transport{}
	for _, s := range im.Servers {
		got[s.Name] = s.Transport()
		if s.Name == "web" && s.Headers["Authorization"] != "Bearer ${env:TOKEN}" {
			t.Errorf("web headers %v", s.Headers)
		}
	}
	if got["web"] != registry.TransportHTTP || got["old"] != registry.TransportSSE {
		t.Errorf("imported transports %v, want web http, old sse", got)
	}
}

// TestCopilotLookup: "copilot" is GitHub Copilot CLI; VS Code keeps its own
// names.
func TestCopilotLookup(t *testing.T) {
	for name, want := range map[string]string{"copilot": "copilot", "copilot-cli": "copilot", "GitHub Copilot CLI": "copilot", "vscode": "vscode", "qwen-code": "qwen", "Qwen Code": "qwen"} {
		if c, err := Lookup(name); err != nil || c.ID != want {
			t.Errorf("Lookup(%q) = %v, %v; want %s", name, c, err, want)
		}
	}
}
