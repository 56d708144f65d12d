package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"mcptray/internal/wine"
	"mcptray/registry"
	"mcptray/registry/catalog/catalogtest"
)

// addEnv is the environment of an add run: its own keyring file, data and
// cache folders, and npm told not to reach the network.
func addEnv(t *testing.T) []string {
	dir := t.TempDir()
	return append(os.Environ(), "MCPTRAY_KEYRING=file", "XDG_DATA_HOME="+filepath.Join(dir, "data"),
		"XDG_CACHE_HOME="+filepath.Join(dir, "cache"), "npm_config_offline=true")
}

func runMcptray(t *testing.T, dir string, env []string, stdin string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(mcptrayBinary(t), args...)
	cmd.Dir, cmd.Env = dir, env
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestAddFromRegistryEndToEnd adds server-everything from a recorded
// registry answer served locally, as a person would: the entry is written
// with its source, its check is ready, and its echo tool answers.
//
// The recorded answer (modelcontextprotocol/servers src/everything/
// server.json) names version 2.0.0; the one installed for the tests is
// served instead, so that npx finds it in the project it runs from
// (.testservers) with npm offline: the test reaches no network.
func TestAddFromRegistryEndToEnd(t *testing.T) {
	everything := testServers(t) // …/node_modules/@modelcontextprotocol/server-everything/dist/index.js
	modules := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(everything))))
	project := filepath.Dir(modules)
	var pkg struct{ Version string }
	data, err := os.ReadFile(filepath.Join(modules, "@modelcontextprotocol", "server-everything", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &pkg); err != nil || pkg.Version == "" {
		t.Fatalf("server-everything's version: %v", err)
	}
	recorded, err := os.ReadFile(filepath.Join("..", "..", "registry", "catalog", "testdata", "registry", "servers", "server-everything.json"))
	if err != nil {
		t.Fatal(err)
	}
	answers := t.TempDir()
	served := strings.ReplaceAll(string(recorded), `"2.0.0"`, `"`+pkg.Version+`"`)
	if err := os.WriteFile(filepath.Join(answers, "server-everything.json"), []byte(served), 0o600); err != nil {
		t.Fatal(err)
	}
	reg := catalogtest.Serve(t, answers)

	cfg := filepath.Join(t.TempDir(), "servers.toml")
	if err := os.WriteFile(cfg, []byte("# mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := addEnv(t)
	name := "io.github.modelcontextprotocol/server-everything"

	out, err := runMcptray(t, project, env, "", "add", "--config", cfg, "--registry", reg.URL, "--dry-run", name)
	if err != nil {
		t.Fatalf("add --dry-run: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(cfg); string(b) != "# mine\n" || !strings.Contains(out, "dry run: nothing written") {
		t.Fatalf("a dry run wrote:\n%s\n%s", b, out)
	}

	out, err = runMcptray(t, project, env, "", "add", "--config", cfg, "--registry", reg.URL, "--name", "everything", "--timeout", "90s", name)
	if err != nil {
		t.Fatalf("add: %v\n%s", err, out)
	}
	if !strings.Contains(out, "ready") {
		t.Errorf("the check is not ready:\n%s", out)
	}
	c, err := registry.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := c.Server("everything")
	if s == nil {
		t.Fatalf("no entry written:\n%s", c.Saved())
	}
	if s.Command != "npx" || strings.Join(s.Args, " ") != "-y @modelcontextprotocol/server-everything@"+pkg.Version+" stdio" ||
		s.Source != "registry:"+name+"@"+pkg.Version {
		t.Errorf("entry: %s %q source %q", s.Command, s.Args, s.Source)
	}
	if !strings.HasPrefix(string(c.Saved()), "# mine\n") {
		t.Errorf("the file's own text was lost:\n%s", c.Saved())
	}

	out, err = runMcptray(t, project, env, "", "call", "--config", cfg, "everything", "echo", `{"message":"from the registry"}`)
	if err != nil || !strings.Contains(out, "from the registry") {
		t.Fatalf("call echo: %v\n%s", err, out)
	}

	out, err = runMcptray(t, project, env, "", "config", "show", "--config", cfg, "everything")
	if err != nil || !strings.Contains(out, `source = "registry:`+name+"@"+pkg.Version+`"`) || !strings.Contains(out, "added from the MCP Registry") {
		t.Errorf("config show: %v\n%s", err, out)
	}

	// Adding it again under the same name is refused, naming the way out.
	out, err = runMcptray(t, project, env, "", "add", "--config", cfg, "--registry", reg.URL, "--name", "everything", "--no-check", name)
	if err == nil || !strings.Contains(out, `already has "everything"`) {
		t.Errorf("a second add: %v\n%s", err, out)
	}
	// The latest is what it runs.
	out, err = runMcptray(t, project, env, "", "add", "--config", cfg, "--registry", reg.URL, "--update", "everything")
	if err != nil || !strings.Contains(out, "the latest in") {
		t.Errorf("add --update: %v\n%s", err, out)
	}
}

// TestAddSnippetFromStdin adds the built-in demo server from a pasted
// client entry (the config is created first, with its own demo server), and
// search lists a registry's servers.
func TestAddSnippetFromStdin(t *testing.T) {
	bin := mcptrayBinary(t)
	cfg := filepath.Join(t.TempDir(), "servers.toml")
	env := addEnv(t)
	out, err := runMcptray(t, t.TempDir(), env, `{"mcpServers": {"pasted-demo": {"command": `+strconv.Quote(bin)+`, "args": ["serve-demo"]}}}`, "add", "--config", cfg, "--json")
	if err != nil || !strings.Contains(out, "ready") {
		t.Fatalf("add --json: %v\n%s", err, out)
	}
	c, err := registry.Load(cfg)
	if err != nil || c.Server("pasted-demo") == nil {
		t.Fatalf("entry: %v\n%s", err, out)
	}

	reg := catalogtest.Serve(t, filepath.Join("..", "..", "registry", "catalog", "testdata", "registry", "servers"))
	out, err = runMcptray(t, t.TempDir(), env, "", "search", "--config", cfg, "--registry", reg.URL, "brave")
	if err != nil || !strings.Contains(out, "io.modelcontextprotocol.anonymous/brave-search") || !strings.Contains(out, "npm") {
		t.Fatalf("search: %v\n%s", err, out)
	}
}

// packEcho makes the echo bundle of registry/bundle's tests with the
// official tool (@anthropic-ai/mcpb, installed by make test).
func packEcho(t *testing.T) string {
	t.Helper()
	wine.Skip(t, "runs no Node.js here (the bundle is a node server, packed by a node tool)")
	dir := os.Getenv("MCPTRAY_TEST_TOOLS")
	if dir == "" {
		dir = filepath.Join("..", "..", ".testtools", "node_modules")
	}
	tool := filepath.Join(dir, ".bin", "mcpb")
	_, err := os.Stat(tool)
	if err == nil {
		_, err = exec.LookPath("node")
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the bundle tool (@anthropic-ai/mcpb) or node is missing (%v); `make test` installs it", err)
		}
		t.Skipf("the bundle tool (@anthropic-ai/mcpb) or node is missing (%v); `make test` installs it", err)
	}
	work := filepath.Join(t.TempDir(), "echo")
	if err := os.CopyFS(work, os.DirFS(filepath.Join("..", "..", "registry", "bundle", "testdata", "echo"))); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "echo.mcpb")
	if b, err := exec.Command(tool, "pack", work, out).CombinedOutput(); err != nil {
		t.Fatalf("mcpb pack: %v\n%s", err, b)
	}
	return out
}

// TestAddBundleEndToEnd adds a bundle made by the official tool: the
// required sensitive value is named when missing, kept in the keyring when
// given; the entry is ready and its tool answers with it.
func TestAddBundleEndToEnd(t *testing.T) {
	file := packEcho(t)
	cfg := filepath.Join(t.TempDir(), "servers.toml")
	env := addEnv(t)
	dir := t.TempDir()

	out, err := runMcptray(t, dir, env, "", "add", "--config", cfg, file)
	if err == nil || !strings.Contains(out, "user_config api_key") || !strings.Contains(out, "--set NAME=VALUE") {
		t.Fatalf("add without api_key: %v\n%s", err, out)
	}
	data := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "XDG_DATA_HOME="); ok {
			data = v
		}
	}
	if _, err := os.Stat(filepath.Join(data, "mcptray", "bundles")); err == nil {
		t.Errorf("a refused add unpacked the bundle")
	}

	out, err = runMcptray(t, dir, env, "", "add", "--config", cfg, "--set", "api_key=sk-bundle-7", file)
	if err != nil || !strings.Contains(out, "ready") {
		t.Fatalf("add: %v\n%s", err, out)
	}
	if strings.Contains(out, "sk-bundle-7") {
		t.Errorf("the secret is in the output:\n%s", out)
	}
	text, _ := os.ReadFile(cfg)
	if strings.Contains(string(text), "sk-bundle-7") || !strings.Contains(string(text), `ECHO_API_KEY = "${keyring:mcptray-echo.api_key}"`) ||
		!strings.Contains(string(text), `source = "mcpb:mcptray-echo@1.0.0"`) {
		t.Errorf("servers.toml:\n%s", text)
	}
	if _, err := os.Stat(filepath.Join(data, "mcptray", "bundles", "mcptray-echo", "1.0.0", "server", "index.js")); err != nil {
		t.Errorf("not unpacked: %v", err)
	}
	out, err = runMcptray(t, dir, env, "", "call", "--config", cfg, "mcptray-echo", "echo", `{"message":"from a bundle"}`)
	if err != nil || !strings.Contains(out, "hello: from a bundle (key set)") {
		t.Fatalf("call echo: %v\n%s", err, out)
	}
}

// TestAddUpdateKeepsValues adds an older registry version (not checked: it
// would download the package), then --update finds the newer one and
// replaces the entry, its secret still the keyring reference it was.
func TestAddUpdateKeepsValues(t *testing.T) {
	reg := catalogtest.Serve(t, filepath.Join("..", "..", "registry", "catalog", "testdata", "registry", "servers"))
	cfg := filepath.Join(t.TempDir(), "servers.toml")
	env := addEnv(t)
	dir := t.TempDir()
	name := "io.github.domdomegg/airtable-mcp-server"
	wine.Skip(t, "runs no Node.js here (add finds the npm package's runtime, npx, on PATH)")

	out, err := runMcptray(t, dir, env, "", "add", "--config", cfg, "--registry", reg.URL, "--no-check",
		"--set", "AIRTABLE_API_KEY=pat123.abc123", "--set", "AIRTABLE_KEY=typo", name+"@1.7.2")
	if err != nil {
		t.Fatalf("add: %v\n%s", err, out)
	}
	if !strings.Contains(out, "--set AIRTABLE_KEY: the server declares no value of that name (it has: AIRTABLE_API_KEY)") {
		t.Errorf("no warning for the typo:\n%s", out)
	}
	if strings.Contains(out, "pat123") {
		t.Errorf("the secret is in the output:\n%s", out)
	}
	out, err = runMcptray(t, dir, env, "", "secret", "get", "airtable-mcp-server.AIRTABLE_API_KEY")
	if err != nil || strings.TrimSpace(out) != "pat123.abc123" {
		t.Fatalf("the secret was not kept: %v\n%s", err, out)
	}

	out, err = runMcptray(t, dir, env, "", "add", "--config", cfg, "--registry", reg.URL, "--no-check", "--update", "airtable-mcp-server")
	if err == nil || !strings.Contains(out, "has 1.7.3") || !strings.Contains(out, "--yes") {
		t.Fatalf("--update without a terminal or --yes: %v\n%s", err, out)
	}
	out, err = runMcptray(t, dir, env, "", "add", "--config", cfg, "--registry", reg.URL, "--no-check", "--update", "airtable-mcp-server", "--yes")
	if err != nil {
		t.Fatalf("--update --yes: %v\n%s", err, out)
	}
	c, err := registry.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := c.Server("airtable-mcp-server")
	if s == nil || s.Source != "registry:"+name+"@1.7.3" || strings.Join(s.Args, " ") != "-y airtable-mcp-server@1.7.3" ||
		s.Env["AIRTABLE_API_KEY"] != "${keyring:airtable-mcp-server.AIRTABLE_API_KEY}" {
		t.Fatalf("updated entry: %+v\n%s", s, c.Saved())
	}
}
