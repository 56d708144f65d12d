package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/tailscale/hujson"
	"go.yaml.in/yaml/v3"

	"mcptray/app"
	"mcptray/registry"
	"mcptray/registry/clients"
)

// scratchHome points the home (and the config folders) at a new folder, as
// a new user's machine would look, and returns it.
func scratchHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	setHome(t, home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("CODEX_HOME", "")
	t.Setenv(registry.EnvConfig, "")
	return home
}

// zedConfigDir is Zed's settings folder: ~/.config/zed, except on Windows
// (%APPDATA%\Zed).
func zedConfigDir(home string) string {
	if runtime.GOOS == "windows" {
		return filepath.Join(userConfigDir(home), "Zed")
	}
	return filepath.Join(home, ".config", "zed")
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

const clientsConfig = `[servers.files]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]

[servers.github]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-github"]
env = { GITHUB_PERSONAL_ACCESS_TOKEN = "${env:GITHUB_TOKEN}", DEBUG = "s3cr3t-value" }

[servers.remote]
url = "https://mcp.example.com/mcp"
headers = { Authorization = "Bearer ${env:EXAMPLE_TOKEN}" }

[servers.legacy]
url = "https://sse.example.com/sse"
transport = "sse"
`

func parses(t *testing.T, f clients.Format, data []byte) map[string]any {
	t.Helper()
	var v map[string]any
	var err error
	switch f {
	case clients.FormatJSON:
		err = json.Unmarshal(data, &v)
	case clients.FormatJSONC:
		var std []byte
		if std, err = hujson.Standardize(data); err == nil {
			err = json.Unmarshal(std, &v)
		}
	case clients.FormatYAML:
		err = yaml.Unmarshal(data, &v)
	case clients.FormatTOML:
		_, err = toml.Decode(string(data), &v)
	}
	if err != nil {
		t.Fatalf("output does not parse as %s: %v\n%s", f, err, data)
	}
	return v
}

func TestExportEveryClient(t *testing.T) {
	scratchHome(t)
	cfg := writeConfig(t, clientsConfig)
	for _, c := range clients.All() {
		t.Run(c.ID, func(t *testing.T) {
			out, errOut, code := runCLI(t, nil, "export", "--direct", "--client", c.ID, "--config", cfg, "--no-resolve")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			v := parses(t, c.Format, []byte(out))
			if _, ok := v[c.Key[0]]; !ok {
				t.Errorf("no %q key:\n%s", c.Key[0], out)
			}
			if strings.Contains(out, "s3cr3t-value") {
				t.Errorf("literal secret in output:\n%s", out)
			}
			if c.Unverified != "" && !strings.Contains(errOut, "unverified: ") {
				t.Errorf("unverified format not said:\n%s", errOut)
			}
			if c.Ref == nil && !strings.Contains(errOut, "placeholder <GITHUB_TOKEN>") && c.ID != "codex" {
				t.Errorf("no placeholder warning:\n%s", errOut)
			}
		})
	}
	// Revealed: the literal, and for Claude Desktop the variable's value.
	out, _, code := runCLI(t, map[string]string{"GITHUB_TOKEN": "ghp_value"}, "export", "--direct", "--client", "claude-desktop", "--config", cfg, "--no-resolve", "--reveal-secrets", "github")
	if code != 0 || !strings.Contains(out, "s3cr3t-value") || !strings.Contains(out, "ghp_value") {
		t.Errorf("reveal: exit %d\n%s", code, out)
	}
	// Windows: npx through cmd /c.
	out, _, _ = runCLI(t, nil, "export", "--direct", "--client", "cursor", "--config", cfg, "--os", "windows", "files")
	if !strings.Contains(out, `"command": "cmd"`) || !strings.Contains(out, `"args": ["/c", "npx", "-y"`) {
		t.Errorf("windows export:\n%s", out)
	}
	// cli, deeplink, file.
	out, _, _ = runCLI(t, nil, "export", "--direct", "--client", "claude-code", "--format", "cli", "--config", cfg, "--no-resolve", "remote")
	if want := "claude mcp add remote https://mcp.example.com/mcp --transport http --scope user --header 'Authorization: Bearer ${EXAMPLE_TOKEN}'\n"; out != want {
		t.Errorf("cli:\n%s\nwant\n%s", out, want)
	}
	out, _, _ = runCLI(t, nil, "export", "--direct", "--client", "cursor", "--format", "deeplink", "--config", cfg, "--no-resolve", "files")
	if !strings.HasPrefix(out, "cursor://anysphere.cursor-deeplink/mcp/install?name=files&config=") {
		t.Errorf("deeplink: %s", out)
	}
	out, _, _ = runCLI(t, nil, "export", "--direct", "--client", "codex", "--format", "file")
	if !strings.HasSuffix(out, filepath.FromSlash("/.codex/config.toml\n")) {
		t.Errorf("file: %s", out)
	}
	_, errOut, code := runCLI(t, nil, "export", "--direct", "--client", "windsurf", "--format", "cli", "--config", cfg)
	if code != 2 || !strings.Contains(errOut, "not supported") {
		t.Errorf("unsupported cli: %d %s", code, errOut)
	}
	_, errOut, code = runCLI(t, nil, "export", "--direct", "--client", "nope", "--config", cfg)
	if code != 2 || !strings.Contains(errOut, "unknown client") {
		t.Errorf("unknown client: %d %s", code, errOut)
	}
	// The names people type.
	for _, id := range []string{"claude", "gemini-cli"} {
		if _, errOut, code := runCLI(t, nil, "export", "--direct", "--client", id, "--format", "cli", "--config", cfg, "--no-resolve", "files"); code != 0 {
			t.Errorf("--client %s: exit %d: %s", id, code, errOut)
		}
	}
	_, errOut, code = runCLI(t, nil, "export", "--direct", "--client", "gemnii", "--config", cfg)
	if code != 2 || !strings.Contains(errOut, "did you mean gemini?") {
		t.Errorf("typo: %d %s", code, errOut)
	}
	// A literal secret is printed as <hidden>, said on stderr, never as the mask.
	out, errOut, _ = runCLI(t, nil, "export", "--direct", "--client", "claude-code", "--format", "cli", "--config", cfg, "--no-resolve", "github")
	if !strings.Contains(out, "DEBUG=<hidden>") || strings.Contains(out, app.Masked) || !strings.Contains(errOut, "not a working value") {
		t.Errorf("hidden literal:\n%s\n%s", out, errOut)
	}
	out, _, _ = runCLI(t, nil, "export", "--help")
	if !strings.Contains(out, "unverified:") || !strings.Contains(out, "claude-desktop") {
		t.Errorf("help does not list clients and what is unverified:\n%s", out)
	}
}

func TestInstallAsNewUser(t *testing.T) {
	home := scratchHome(t)
	cfg := writeConfig(t, clientsConfig)
	files := map[string]string{
		"cursor":      filepath.Join(home, ".cursor", "mcp.json"),
		"claude-code": filepath.Join(home, ".claude.json"),
		"vscode":      filepath.Join(userConfigDir(home), "Code", "User", "mcp.json"),
		"zed":         filepath.Join(zedConfigDir(home), "settings.json"),
		"codex":       filepath.Join(home, ".codex", "config.toml"),
	}
	orig := map[string]string{
		"cursor":      "{\n  \"mcpServers\": {\n    \"other\": {\"command\": \"uvx\", \"args\": [\"x\"], \"env\": {\"K\": \"neighbour-secret-1\"}}\n  },\n  \"keep\": 1\n}\n",
		"claude-code": "{\n  \"numStartups\": 3,\n  \"mcpServers\": {},\n  \"tipsHistory\": {\"a\": 1}\n}\n",
		"vscode":      "// mine\n{\n  \"servers\": {\n    \"other\": {\"type\": \"http\", \"url\": \"https://o.example/mcp\"}, // team\n  },\n}\n",
		"zed":         "// Zed settings\n{\n  \"theme\": \"One Dark\", // theme\n  \"context_servers\": {}\n}\n",
		"codex":       "# codex\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"x\"\n\n[profiles.fast]\nmodel = \"gpt-5\"\n",
	}
	for id, path := range files {
		t.Run(id, func(t *testing.T) {
			writeFile(t, path, orig[id])
			out, errOut, code := runCLI(t, nil, "install", "--direct", "--client", id, "--config", cfg, "--no-resolve")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if !strings.Contains(out, "+++ "+path) || !strings.Contains(out, "backup: ") {
				t.Errorf("no diff or backup:\n%s", out)
			}
			if strings.Contains(out, "s3cr3t-value") || strings.Contains(out, "neighbour-secret-1") {
				t.Errorf("diff shows a secret:\n%s", out)
			}
			if id == "cursor" && !strings.Contains(out, `"K": "`+app.Masked+`"`) {
				t.Errorf("the neighbour is not in the diff's context, so this test proves nothing:\n%s", out)
			}
			got, _ := os.ReadFile(path)
			c, _ := clients.Lookup(id)
			parses(t, c.Format, got)
			if !strings.Contains(string(got), "s3cr3t-value") {
				t.Errorf("literal value not written into the file:\n%s", got)
			}
			out, _, _ = runCLI(t, nil, "install", "--direct", "--client", id, "--config", cfg, "--no-resolve")
			if !strings.Contains(out, "nothing to change") {
				t.Errorf("second install:\n%s", out)
			}
			out, errOut, code = runCLI(t, nil, "uninstall", "--client", id, "files", "github", "remote", "legacy")
			if code != 0 {
				t.Fatalf("uninstall exit %d: %s\n%s", code, errOut, out)
			}
			if strings.Contains(out, "s3cr3t-value") || strings.Contains(out, "neighbour-secret-1") || !strings.Contains(out, app.Masked) {
				t.Errorf("uninstall diff shows a secret:\n%s", out)
			}
			back, _ := os.ReadFile(path)
			if string(back) != orig[id] && id != "claude-code" {
				t.Errorf("uninstall did not restore the file:\n%s", back)
			}
			backups, _ := filepath.Glob(path + ".mcptray-backup-*")
			if len(backups) < 2 {
				t.Errorf("backups: %v", backups)
			}
		})
	}
	// Dry run writes nothing; a broken file is refused untouched.
	p := files["cursor"]
	writeFile(t, p, "{ broken")
	_, errOut, code := runCLI(t, nil, "install", "--direct", "--client", "cursor", "--config", cfg, "--no-resolve")
	if code != 1 || !strings.Contains(errOut, p+":1:") || !strings.Contains(errOut, "left untouched") {
		t.Errorf("broken file: exit %d: %s", code, errOut)
	}
	if b, _ := os.ReadFile(p); string(b) != "{ broken" {
		t.Errorf("broken file changed: %q", b)
	}
	os.Remove(p)
	out, _, _ := runCLI(t, nil, "install", "--direct", "--client", "cursor", "--config", cfg, "--no-resolve", "--dry-run", "files")
	if !strings.Contains(out, "dry run") {
		t.Errorf("dry run:\n%s", out)
	}
	if _, err := os.Stat(p); err == nil {
		t.Error("dry run wrote the file")
	}
}

func TestImportClaudeDesktopAsNewUser(t *testing.T) {
	home := scratchHome(t)
	desk := filepath.Join(userConfigDir(home), "Claude", "claude_desktop_config.json")
	writeFile(t, desk, `{
  "mcpServers": {
    "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/me"]},
    "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_literal123"}},
    "demo": {"command": "other"}
  },
  "globalShortcut": "Ctrl+Space"
}`)
	cfgPath := filepath.Join(userConfigDir(home), "mcptray", "servers.toml")
	out, errOut, code := runCLI(t, nil, "import", "--client", "claude-desktop", "--dry-run")
	if code != 0 || !strings.Contains(out, "dry run") {
		t.Fatalf("dry run: exit %d\n%s\n%s", code, out, errOut)
	}
	if strings.Contains(out, "ghp_literal123") {
		t.Errorf("dry-run diff shows a secret:\n%s", out)
	}
	out, errOut, code = runCLI(t, nil, "import", "--client", "claude-desktop")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{`conflict: servers.toml already has "demo"`, "literal secret"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	cfg, err := registry.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Server("filesystem") == nil || cfg.Server("github") == nil || cfg.Server("github").Env["GITHUB_PERSONAL_ACCESS_TOKEN"] != "ghp_literal123" {
		t.Errorf("servers.toml:\n%s", registry.Encode(cfg))
	}
	if cfg.Server("demo").Command == "other" {
		t.Error("conflict replaced without --replace")
	}
	runCLI(t, nil, "import", "--client", "claude-desktop", "--replace")
	if _, err := os.Stat(cfgPath + ".bak"); err != nil {
		t.Errorf("no .bak: %v", err)
	}
	cfg, _ = registry.Load(cfgPath)
	if cfg.Server("demo").Command != "other" {
		t.Error("--replace did not replace")
	}
}

// TestImportMasksEveryServer: import's diff of servers.toml hides the
// secrets of the servers already there, not only the imported ones, and a
// reference's default comes in as ${env:VAR:-default}.
func TestImportMasksEveryServer(t *testing.T) {
	home := scratchHome(t)
	cfg := writeConfig(t, "[servers.keep]\ncommand = \"k\"\nenv = { K = \"toml-neighbour-secret\" }\n")
	writeFile(t, filepath.Join(home, ".claude.json"), `{"mcpServers": {
  "withdefault": {"type": "stdio", "command": "srv", "env": {"LEVEL": "${LOG_LEVEL:-info}", "API_KEY": "sk-imported-1"}}
}}`)
	out, errOut, code := runCLI(t, nil, "import", "--client", "claude", "--config", cfg)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, out, errOut)
	}
	for _, leak := range []string{"toml-neighbour-secret", "sk-imported-1"} {
		if strings.Contains(out, leak) {
			t.Errorf("import diff shows %q:\n%s", leak, out)
		}
	}
	if !strings.Contains(out, `K = "`+app.Masked+`"`) {
		t.Errorf("the neighbour is not in the diff's context:\n%s", out)
	}
	c, err := registry.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Server("withdefault").Env["LEVEL"]; got != "${env:LOG_LEVEL:-info}" {
		t.Errorf("LEVEL = %q", got)
	}
}

// TestConfigListMasksURLCredentials: config list hides credentials in URLs
// and in an mcp-remote bridge's arguments.
func TestConfigListMasksURLCredentials(t *testing.T) {
	scratchHome(t)
	cfg := writeConfig(t, `[servers.q]
url = "https://h.example/mcp?api_key=qs-secret-1&region=eu"
[servers.u]
url = "https://me:pw-secret-2@h.example/mcp"
[servers.b]
command = "npx"
args = ["-y", "mcp-remote", "https://h.example/mcp?token=qs-secret-3", "--header", "Authorization: Bearer hdr-secret-4"]
`)
	for _, args := range [][]string{{"config", "list", "--config", cfg}, {"config", "list", "--json", "--config", cfg}} {
		out, errOut, code := runCLI(t, nil, args...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		for _, leak := range []string{"qs-secret-1", "pw-secret-2", "qs-secret-3", "hdr-secret-4"} {
			if strings.Contains(out, leak) {
				t.Errorf("%v shows %q:\n%s", args, leak, out)
			}
		}
		if !strings.Contains(out, "region=eu") {
			t.Errorf("%v masked too much:\n%s", args, out)
		}
	}
}
