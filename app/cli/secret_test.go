package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// secretsEnv runs mcptray with a file store in dir.
func secretsEnv(dir string) []string {
	return append(append(os.Environ(), "XDG_DATA_HOME="+filepath.Join(dir, "data"), "MCPTRAY_KEYRING=file"), homeEnv(dir)...)
}

func runWith(t *testing.T, env []string, stdin string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(mcptrayBinary(t), args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestSecretsEndToEnd: a secret stored with `secret set` reaches the server
// through ${keyring:NAME}; its value never appears in servers.toml, in
// `config list` or in `check --json`.
func TestSecretsEndToEnd(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the server is an sh script that compares its environment with a file")
	}
	dir := t.TempDir()
	env := secretsEnv(dir)
	cfg := filepath.Join(dir, "servers.toml")
	// The server fails unless it got the secret: it compares its
	// environment with the value kept in a file beside the config.
	expected := filepath.Join(dir, "expected")
	os.WriteFile(expected, []byte("s3cret-value"), 0o600)
	os.WriteFile(cfg, []byte(`[servers.needs]
command = "sh"
args = ["-c", "[ \"$TOKEN\" = \"$(cat `+expected+`)\" ] || { echo \"TOKEN is wrong\" >&2; exit 3; }; exec \"$MCPTRAY\" serve-demo"]
env = { TOKEN = "${keyring:needs-token}", MCPTRAY = "`+mcptrayBinary(t)+`" }
`), 0o600)
	out, err := runWith(t, env, "", "check", "--config", cfg, "--timeout", "10s")
	if err == nil || !strings.Contains(out, "${keyring:needs-token}, which is not stored") || !strings.Contains(out, "mcptray secret set needs-token") {
		t.Fatalf("check without the secret: %v\n%s", err, out)
	}
	if out, err := runWith(t, env, "s3cret-value\n", "secret", "set", "needs-token"); err != nil {
		t.Fatalf("secret set: %v\n%s", err, out)
	}
	out, err = runWith(t, env, "", "check", "--config", cfg, "--timeout", "10s", "--json")
	if err != nil || !strings.Contains(out, `"status": "ready"`) {
		t.Fatalf("check with the secret: %v\n%s", err, out)
	}
	if strings.Contains(out, "s3cret-value") {
		t.Fatalf("check --json shows the secret:\n%s", out)
	}
	out, _ = runWith(t, env, "", "config", "list", "--config", cfg)
	if strings.Contains(out, "s3cret-value") || !strings.Contains(out, "${keyring:needs-token}") {
		t.Fatalf("config list:\n%s", out)
	}
	if out, err := runWith(t, env, "", "secret", "list"); err != nil || !strings.Contains(out, "needs-token") || strings.Contains(out, "s3cret") {
		t.Fatalf("secret list: %v\n%s", err, out)
	}
	if out, err := runWith(t, env, "", "secret", "get", "needs-token"); err != nil || strings.TrimSpace(out) != "s3cret-value" {
		t.Fatalf("secret get: %v\n%s", err, out)
	}
	if out, err := runWith(t, env, "", "secret", "set", "x", "the-value"); err == nil || !strings.Contains(out, "never an argument") {
		t.Fatalf("secret set with the value as an argument: %v\n%s", err, out)
	}
	if out, err := runWith(t, env, "", "secret", "rm", "needs-token"); err != nil {
		t.Fatalf("secret rm: %v\n%s", err, out)
	}
	if out, err := runWith(t, env, "", "secret", "get", "needs-token"); err == nil || !strings.Contains(out, "no secret named needs-token") {
		t.Fatalf("secret get after rm: %v\n%s", err, out)
	}
}

// TestImportToKeyring: import --keyring keeps a client's literal secrets
// in the store and writes references; when the save fails, the stored
// secrets are taken back.
func TestImportToKeyring(t *testing.T) {
	dir := t.TempDir()
	env := secretsEnv(dir)
	client := filepath.Join(dir, "mcp.json")
	os.WriteFile(client, []byte(`{"mcpServers": {
  "gh": {"command": "gh-mcp", "env": {"GITHUB_TOKEN": "ghp_literal123", "LEVEL": "${env:LEVEL}"}},
  "remote": {"url": "https://r.example/mcp", "headers": {"Authorization": "Bearer tok-abc"}}
}}`), 0o600)
	cfg := filepath.Join(dir, "servers.toml")

	// A config that cannot be saved (read-only): nothing is kept anywhere.
	os.WriteFile(cfg, []byte("[servers.x]\ncommand = \"x\"\n"), 0o400)
	out, err := runWith(t, env, "", "import", "--client", "cursor", "--path", client, "--config", cfg, "--keyring")
	if err == nil {
		t.Fatalf("import into a read-only config succeeded:\n%s", out)
	}
	if out, _ := runWith(t, env, "", "secret", "list"); strings.Contains(out, "gh.") {
		t.Fatalf("secrets kept although the import failed:\n%s", out)
	}
	os.Remove(cfg)

	out, err = runWith(t, env, "", "import", "--client", "cursor", "--path", client, "--config", cfg, "--keyring")
	if err != nil {
		t.Fatalf("import --keyring: %v\n%s", err, out)
	}
	b, _ := os.ReadFile(cfg)
	toml := string(b)
	for _, want := range []string{`GITHUB_TOKEN = "${keyring:gh.GITHUB_TOKEN}"`, `LEVEL = "${env:LEVEL}"`, `Authorization = "Bearer ${keyring:remote.Authorization}"`} {
		if !strings.Contains(toml, want) {
			t.Errorf("servers.toml lacks %s:\n%s", want, toml)
		}
	}
	for _, leak := range []string{"ghp_literal123", "tok-abc"} {
		if strings.Contains(toml, leak) || strings.Contains(out, leak) {
			t.Errorf("%q in servers.toml or the output:\n%s\n%s", leak, toml, out)
		}
	}
	if strings.Contains(out, "holds a literal secret") {
		t.Errorf("warned about literal secrets that went to the keyring:\n%s", out)
	}
	if v, err := runWith(t, env, "", "secret", "get", "remote.Authorization"); err != nil || strings.TrimSpace(v) != "tok-abc" {
		t.Fatalf("secret get: %v %q", err, v)
	}

	// A second import of servers already there skips them, and leaves
	// their secrets as they are: a skipped server's would take their
	// keyring names.
	os.WriteFile(client, []byte(`{"mcpServers": {"gh": {"command": "gh-mcp", "env": {"GITHUB_TOKEN": "ghp_other999"}},
  "fresh": {"command": "fresh-mcp", "env": {"API_KEY": "sk-fresh-1"}}}}`), 0o600)
	if out, err := runWith(t, env, "", "import", "--client", "cursor", "--path", client, "--config", cfg, "--keyring"); err != nil || !strings.Contains(out, "skipped") {
		t.Fatalf("import of a server already there: %v\n%s", err, out)
	}
	if v, err := runWith(t, env, "", "secret", "get", "gh.GITHUB_TOKEN"); err != nil || strings.TrimSpace(v) != "ghp_literal123" {
		t.Fatalf("after a skipped import the keyring holds %q for gh.GITHUB_TOKEN (%v), want the first import's", strings.TrimSpace(v), err)
	}
	if v, err := runWith(t, env, "", "secret", "get", "fresh.API_KEY"); err != nil || strings.TrimSpace(v) != "sk-fresh-1" {
		t.Fatalf("the added server's secret: %q (%v)", strings.TrimSpace(v), err)
	}

	// Without --keyring and without a terminal, the literal stays, with a note.
	cfg2 := filepath.Join(dir, "other.toml")
	out, err = runWith(t, env, "", "import", "--client", "cursor", "--path", client, "--config", cfg2)
	if err != nil || !strings.Contains(out, "pass --keyring") {
		t.Fatalf("import without --keyring: %v\n%s", err, out)
	}
}
