package clients

import (
	"bytes"
	"errors"
	"mcptray/internal/filemode"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"mcptray/registry"
)

// fixtures are real-looking client files holding other servers, other keys
// and comments.
var fixtures = map[string]string{
	"cursor": `{
  "mcpServers": {
    "other": {
      "command": "uvx",
      "args": ["other-server"]
    }
  },
  "someOtherKey": true
}
`,
	"claude-code": `{
  "numStartups": 42,
  "projects": {
    "/home/me/project": {
      "allowedTools": [],
      "mcpServers": {}
    }
  },
  "mcpServers": {
    "other": {
      "type": "stdio",
      "command": "uvx",
      "args": ["other-server"],
      "env": {}
    }
  },
  "userID": "abc"
}
`,
	"vscode": `// VS Code MCP servers
{
	"inputs": [
		{ "id": "key", "type": "promptString", "password": true }, // prompted once
	],
	"servers": {
		/* the team's server */
		"other": { "type": "http", "url": "https://other.example/mcp" },
	},
}
`,
	"zed": `// Zed settings
{
  "theme": "One Dark", // my theme
  /* fonts */
  "buffer_font_size": 15,
  "context_servers": {
    // keep me
    "mine": { "source": "custom", "command": "foo", "args": [] },
  },
}
`,
	"gemini": `{
  // Gemini settings
  "theme": "Default",
  "mcpServers": {
    "other": { "httpUrl": "https://other.example/mcp" }
  }
}
`,
	"codex": `# Codex config
model = "o3"

[mcp_servers.other]
command = "x"  # note
args = ["a"]

[mcp_servers.other.env]
A = "b"

# profiles below
[profiles.fast]
model = "gpt-5"
`,
	"goose": `GOOSE_PROVIDER: anthropic
extensions:
  developer:
    bundled: true
    enabled: true
    name: developer
    type: builtin
# my comment
GOOSE_MODEL: claude
`,
	"continue": `name: Local Assistant
version: 1.0.0
schema: v1
models:
  - name: m
    provider: anthropic
mcpServers:
  - name: other
    command: uvx
`,
}

// checkLinesKept: every line of a text-format fixture is still in got.
func checkLinesKept(t *testing.T, fixture string, got []byte) {
	t.Helper()
	for _, line := range strings.Split(fixture, "\n") {
		if !strings.Contains(string(got), line) {
			t.Errorf("line %q lost:\n%s", line, got)
		}
	}
}

func installOpts() *Options {
	o := goldenOpts("linux")
	return o
}

func testServers() []*registry.Server {
	cs := cases()
	var out []*registry.Server
	for _, n := range caseNames {
		out = append(out, cs[n])
	}
	return out
}

func TestInstallKeepsEverythingElse(t *testing.T) {
	for id, fixture := range fixtures {
		t.Run(id, func(t *testing.T) {
			c, err := Lookup(id)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			path := filepath.Join(dir, "config")
			if err := os.WriteFile(path, []byte(fixture), 0o640); err != nil {
				t.Fatal(err)
			}
			now := func() time.Time { return time.Date(2026, 11, 30, 10, 15, 0, 0, time.UTC) }
			fo := &FileOptions{Path: path, Now: now}
			ch, err := c.Install(testServers(), installOpts(), fo)
			if err != nil {
				t.Fatal(err)
			}
			if len(ch.Added) != 4 || ch.Backup == "" {
				t.Fatalf("added %v, backup %q", ch.Added, ch.Backup)
			}
			if b, _ := os.ReadFile(ch.Backup); string(b) != fixture {
				t.Errorf("backup holds %q", b)
			}
			if fi, _ := os.Stat(path); !filemode.Matches(fi.Mode(), 0o640) {
				t.Errorf("mode %v, want the file's own 0640", fi.Mode().Perm())
			}
			got, _ := os.ReadFile(path)
			parseReal(t, c.Format, got)
			if strings.Contains(string(got), registry.Masked) {
				t.Errorf("a masked value was written into the file:\n%s", got)
			}
			if strings.Contains(ch.Diff(), "acme") {
				t.Errorf("diff shows a literal secret:\n%s", ch.Diff())
			}
			if c.Format != FormatYAML {
				checkLinesKept(t, fixture, got)
			} else if id == "goose" && !strings.Contains(string(got), "# my comment") || id == "continue" && !strings.Contains(string(got), "provider: anthropic") {
				t.Errorf("comment or key lost:\n%s", got)
			}

			// Idempotent: a second install changes nothing.
			ch2, err := c.Install(testServers(), installOpts(), fo)
			if err != nil {
				t.Fatal(err)
			}
			if ch2.Changed() || len(ch2.Unchanged) != 4 {
				t.Errorf("second install changed the file: %s", ch2.Diff())
			}

			// Uninstall gives back the fixture (byte for byte, except YAML,
			// whose encoder sets its own layout).
			ch3, err := c.Uninstall([]string{"files", "github", "remote", "legacy", "missing"}, installOpts(), fo)
			if err != nil {
				t.Fatal(err)
			}
			if len(ch3.Removed) != 4 || !slices.Equal(ch3.Unchanged, []string{"missing"}) {
				t.Errorf("removed %v, unchanged %v", ch3.Removed, ch3.Unchanged)
			}
			back, _ := os.ReadFile(path)
			if c.Format != FormatYAML && string(back) != fixture {
				t.Errorf("uninstall did not restore the file:\n%s", UnifiedDiff("want", "got", []byte(fixture), back))
			}
			if c.Format == FormatYAML {
				if !reflect.DeepEqual(parseReal(t, c.Format, back), parseReal(t, c.Format, []byte(fixture))) {
					t.Errorf("uninstall changed other values:\n%s", back)
				}
			}
			// Removing again is not an error and writes nothing.
			ch4, err := c.Uninstall([]string{"files"}, installOpts(), fo)
			if err != nil || ch4.Changed() {
				t.Errorf("second uninstall: %v, changed %v", err, ch4.Changed())
			}
		})
	}
}

func TestInstallUpdateKeepsUnmanagedFields(t *testing.T) {
	c, _ := Lookup("cursor")
	src := []byte(`{"mcpServers": {"files": {"command": "old", "autoApprove": ["read"], "timeout": 30}}}`)
	ch, err := c.Merge("mcp.json", src, []*registry.Server{cases()["stdio"]}, installOpts())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ch.Updated, []string{"files"}) {
		t.Fatalf("updated %v", ch.Updated)
	}
	v := parseReal(t, FormatJSON, ch.New)
	e := v["mcpServers"].(map[string]any)["files"].(map[string]any)
	if e["command"] != "/usr/local/bin/npx" || e["timeout"] != float64(30) || e["autoApprove"] == nil {
		t.Errorf("entry = %v", e)
	}
}

func TestInstallRefusesBrokenFile(t *testing.T) {
	broken := map[string]string{
		"cursor":   "{\n  \"mcpServers\": {\n    \"x\": {,\n  }\n}\n",
		"vscode":   "{\n  \"servers\": [1, 2\n}\n",
		"codex":    "model = \"o3\"\n[mcp_servers.x\ncommand = 1\n",
		"goose":    "extensions:\n  a: [\n",
		"continue": "mcpServers: {\n",
		// Gemini CLI reads comments but refuses trailing commas.
		"gemini": "{\n  // mine\n  \"mcpServers\": {\n    \"x\": {\"command\": \"a,}\"}, // c, ]\n  },\n}\n",
	}
	for id, text := range broken {
		t.Run(id, func(t *testing.T) {
			c, _ := Lookup(id)
			path := filepath.Join(t.TempDir(), "config")
			if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := c.Install(testServers(), installOpts(), &FileOptions{Path: path})
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line == 0 || pe.File != path {
				t.Fatalf("err = %v, want a *ParseError with a line", err)
			}
			got, _ := os.ReadFile(path)
			if string(got) != text {
				t.Errorf("file changed")
			}
			entries, _ := os.ReadDir(filepath.Dir(path))
			if len(entries) != 1 {
				t.Errorf("files left beside it: %v", entries)
			}
		})
	}
	// The trailing comma is named where it is; Gemini takes comments alone,
	// and VS Code trailing commas too.
	g, _ := Lookup("gemini")
	_, err := g.Merge("settings.json", []byte(broken["gemini"]), testServers(), installOpts())
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 4 || pe.Col != 28 || !strings.Contains(err.Error(), "trailing comma") {
		t.Errorf("gemini: %v", err)
	}
	if _, err := g.Remove("settings.json", []byte(broken["gemini"]), []string{"x"}, installOpts()); !errors.As(err, &pe) {
		t.Errorf("gemini uninstall: %v", err)
	}
	if _, err := g.Merge("settings.json", []byte("// mine\n{\"a\": \"x,}\", /* ,] */ \"b\": [1]}\n"), testServers(), installOpts()); err != nil {
		t.Errorf("gemini with comments: %v", err)
	}
	vs, _ := Lookup("vscode")
	if _, err := vs.Merge("mcp.json", []byte("{\"servers\": {},}\n"), testServers(), installOpts()); err != nil {
		t.Errorf("vscode with a trailing comma: %v", err)
	}
	// A strict-JSON client's file with comments is refused too.
	c, _ := Lookup("cursor")
	if _, err := c.Merge("mcp.json", []byte("// hi\n{}"), testServers(), installOpts()); err == nil {
		t.Error("comments in a strict JSON file were accepted")
	}
}

func TestInstallNewFileAndLocalScope(t *testing.T) {
	c, _ := Lookup("claude-code")
	o := installOpts()
	o.Scope = ScopeLocal
	ch, err := c.Merge("~/.claude.json", []byte(fixtures["claude-code"]), []*registry.Server{cases()["stdio"]}, o)
	if err != nil {
		t.Fatal(err)
	}
	v := parseReal(t, FormatJSON, ch.New)
	p := v["projects"].(map[string]any)["/home/me/project"].(map[string]any)
	if _, ok := p["mcpServers"].(map[string]any)["files"]; !ok {
		t.Errorf("not under projects[dir].mcpServers:\n%s", ch.New)
	}
	// A new file in a new folder, mode 0600.
	path := filepath.Join(t.TempDir(), "a", "b", "mcp.json")
	ch, err = c.Install([]*registry.Server{cases()["stdio"]}, installOpts(), &FileOptions{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || !filemode.Matches(fi.Mode(), 0o600) || ch.Backup != "" {
		t.Errorf("new file: %v %v backup %q", fi, err, ch.Backup)
	}
	// Dry run writes nothing.
	dry := filepath.Join(t.TempDir(), "dry.json")
	ch, err = c.Install([]*registry.Server{cases()["stdio"]}, installOpts(), &FileOptions{Path: dry, DryRun: true})
	if err != nil || !ch.Changed() || !strings.Contains(ch.Diff(), "+++ "+dry) {
		t.Errorf("dry run: %v %v\n%s", err, ch.Changed(), ch.Diff())
	}
	if _, err := os.Stat(dry); err == nil {
		t.Error("dry run wrote the file")
	}
}

func TestCodexDottedKeysRefused(t *testing.T) {
	c, _ := Lookup("codex")
	src := []byte("mcp_servers.files = { command = \"x\" }\n")
	if _, err := c.Merge("config.toml", src, []*registry.Server{cases()["stdio"]}, installOpts()); err == nil || !strings.Contains(err.Error(), "by hand") {
		t.Errorf("err = %v", err)
	}
}

// TestImportExportRoundTrip: a client's file, imported and exported again,
// gives the same entries, for every client.
func TestImportExportRoundTrip(t *testing.T) {
	for _, c := range All() {
		t.Run(c.ID, func(t *testing.T) {
			servers := testServers()
			if c.Ref == nil {
				// Without reference syntax a reference cannot survive.
				for _, s := range servers {
					for k, v := range s.Env {
						if registry.HasEnvRef(v) {
							s.Env[k] = "literal-" + k
						}
					}
					for k, v := range s.Headers {
						if registry.HasEnvRef(v) {
							s.Headers[k] = "Bearer literal"
						}
					}
				}
			}
			o := installOpts()
			first, err := c.Merge("f", nil, servers, o)
			if err != nil {
				t.Fatal(err)
			}
			im, err := c.Import("f", first.New, o)
			if err != nil {
				t.Fatal(err)
			}
			if len(im.Servers) != len(servers) {
				t.Fatalf("imported %d servers, want %d (%v)", len(im.Servers), len(servers), im.Warnings)
			}
			second, err := c.Merge("f", nil, im.Servers, o)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(first.New, second.New) {
				t.Errorf("export after import differs:\n%s", UnifiedDiff("first", "second", first.New, second.New))
			}
			if c.Ref != nil && !c.shape.codex {
				gh := im.Servers[1]
				if gh.Env["GITHUB_PERSONAL_ACCESS_TOKEN"] != "${env:GITHUB_PERSONAL_ACCESS_TOKEN}" {
					t.Errorf("reference not turned back: %v", gh.Env)
				}
			}
		})
	}
}

func TestImportClaudeDesktop(t *testing.T) {
	c, _ := Lookup("claude-desktop")
	src := []byte(`{
  "mcpServers": {
    "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me"]},
    "github": {"command": "npx", "args": ["-y", "x"], "env": {"GITHUB_TOKEN": "ghp_123"}, "alwaysAllow": ["a"]},
    "my.remote": {"command": "npx", "args": ["-y", "mcp-remote", "https://e.example/sse", "--transport", "sse-only", "--header", "X-Key: k"]}
  }
}`)
	im, err := c.Import("claude_desktop_config.json", src, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range im.Servers {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"filesystem", "github", "my-remote"}) {
		t.Fatalf("names %v", names)
	}
	r := im.Servers[2]
	if r.URL != "https://e.example/sse" || r.Transport() != registry.TransportSSE || r.Headers["X-Key"] != "k" {
		t.Errorf("bridge not undone: %+v", r)
	}
	w := strings.Join(im.Warnings, "\n")
	for _, want := range []string{"literal secret", "alwaysAllow", `imported as "my-remote"`} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings lack %q:\n%s", want, w)
		}
	}
}

func TestUnref(t *testing.T) {
	tests := []struct{ client, in, want string }{
		{"claude-code", "Bearer ${TOKEN}", "Bearer ${env:TOKEN}"},
		{"gemini", "$A and ${B}", "${env:A} and ${env:B}"},
		{"opencode", "{env:X}", "${env:X}"},
		{"opencode", "${env:X}", "${env:X}"},
		{"continue", "${{ secrets.K }}", "${env:K}"},
		{"cursor", "${env:K}", "${env:K}"},
	}
	for _, tt := range tests {
		t.Run(tt.client+" "+tt.in, func(t *testing.T) {
			c, _ := Lookup(tt.client)
			if got := c.unrefString(tt.in); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestUnifiedDiff(t *testing.T) {
	a := []byte("a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n")
	b := []byte("a\nb\nc\nD\ne\nf\ng\nh\ni\nj\nk\n")
	want := `--- x
+++ y
@@ -1,10 +1,11 @@
 a
 b
 c
-d
+D
 e
 f
 g
 h
 i
 j
+k
`
	if got := UnifiedDiff("x", "y", a, b); got != want {
		t.Errorf("got\n%s", got)
	}
	if UnifiedDiff("x", "y", a, a) != "" {
		t.Error("equal inputs gave a diff")
	}
	if got := UnifiedDiff("/dev/null", "y", nil, []byte("x")); !strings.Contains(got, "@@ -0,0 +1 @@\n+x\n\\ No newline") {
		t.Errorf("new file diff:\n%s", got)
	}
}

func TestPaths(t *testing.T) {
	tests := []struct {
		client, os string
		scope      Scope
		want       string
	}{
		{"claude-desktop", "darwin", "", "/home/me/Library/Application Support/Claude/claude_desktop_config.json"},
		{"claude-desktop", "windows", "", `C:\Users\me\AppData\Roaming\Claude\claude_desktop_config.json`},
		{"claude-code", "linux", ScopeProject, "/home/me/project/.mcp.json"},
		{"vscode", "linux", "", "/home/me/.config/Code/User/mcp.json"},
		{"vscode", "darwin", "", "/home/me/Library/Application Support/Code/User/mcp.json"},
		{"codex", "linux", "", "/home/me/.codex/config.toml"},
		{"goose", "windows", "", `C:\Users\me\AppData\Roaming\Block\goose\config\config.yaml`},
		{"zed", "linux", "", "/home/me/.config/zed/settings.json"},
	}
	for _, tt := range tests {
		t.Run(tt.client+"/"+tt.os, func(t *testing.T) {
			c, _ := Lookup(tt.client)
			o := goldenOpts(tt.os)
			o.Scope = tt.scope
			if tt.os == "windows" {
				o.Home = `C:\Users\me`
			}
			got, err := c.Path(o)
			if err != nil || got != tt.want {
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	c, _ := Lookup("windsurf")
	o := goldenOpts("linux")
	o.Scope = ScopeProject
	if _, err := c.Path(o); err == nil {
		t.Error("windsurf project scope accepted")
	}
}

// FuzzImport: no client file, however broken, makes import or install
// panic.
func FuzzImport(f *testing.F) {
	for _, fx := range fixtures {
		f.Add(uint8(0), []byte(fx))
	}
	f.Add(uint8(3), []byte(`{"servers":{"a":{"command":["x"],"args":{}}}}`))
	f.Add(uint8(9), []byte("[mcp_servers.a]\ncommand = 1\nenv_vars = [1]\n"))
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		c := all[int(which)%len(all)]
		_, _ = c.Import("f", data, nil)
		_, _ = c.Merge("f", data, []*registry.Server{cases()["stdio"]}, nil)
		_, _ = c.Remove("f", data, []string{"a", "other"}, nil)
	})
}
