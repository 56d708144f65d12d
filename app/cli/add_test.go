//go:build unix

package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

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
	out, err := runMcptray(t, t.TempDir(), env, `{"mcpServers": {"pasted-demo": {"command": "`+bin+`", "args": ["serve-demo"]}}}`, "add", "--config", cfg, "--json")
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
