package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mcptray/app"
	"mcptray/registry/clients"
)

// runCLI runs mcptray's command line in-process.
func runCLI(t *testing.T, env map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &app.Env{Stdout: &out, Stderr: &errb, Exe: testExe, LookupEnv: func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}}
	code = run(context.Background(), args, e)
	return out.String(), errb.String(), code
}

func writeConfig(t *testing.T, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "servers.toml")
	if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConfigValidate(t *testing.T) {
	broken := writeConfig(t, `[servers.github]
command = "npx"
url = "https://example.com/mcp"

[servers.ok]
command = "x"
env = { TOKEN = "${env:NOT_SET_HERE}" }
colour = "red"
`)
	out, _, code := runCLI(t, nil, "config", "validate", "--config", broken)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	for _, want := range []string{
		broken + ":1:1: servers.github: set either command or url, not both",
		broken + ":8:1: warning: unknown key \"servers.ok.colour\"",
		"NOT_SET_HERE is not set",
		"2 error(s), 1 warning(s)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	syntax := writeConfig(t, "[servers.a]\ncommand = \"x\"\nargs = [1,\n")
	out, _, code = runCLI(t, nil, "config", "validate", "--config", syntax)
	if code != 1 || !strings.Contains(out, syntax+":") || !strings.Contains(out, "^") {
		t.Errorf("syntax error: exit %d\n%s", code, out)
	}

	good := writeConfig(t, "[servers.a]\ncommand = \"x\"\nenv = { T = \"${env:SET}\" }\n")
	out, _, code = runCLI(t, map[string]string{"SET": "1"}, "config", "validate", "--config", good, "--json")
	var res struct {
		Valid       bool
		Servers     int
		Diagnostics []any
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 || !res.Valid || res.Servers != 1 || res.Diagnostics == nil {
		t.Errorf("valid config: exit %d, %+v, %v\n%s", code, res, err, out)
	}

	_, errOut, code := runCLI(t, nil, "config", "validate", "--config", filepath.Join(t.TempDir(), "missing.toml"))
	if code != 2 || !strings.Contains(errOut, "missing.toml") || !strings.Contains(errOut, "does not exist") {
		t.Errorf("missing explicit config: exit %d: %s", code, errOut)
	}
}

func TestConfigListMasksSecrets(t *testing.T) {
	p := writeConfig(t, `[servers.gh]
command = "npx"
args = ["-y", "server-github"]
env = { TOKEN = "ghp_literal", REF = "${env:GH}" }

[servers.remote]
url = "https://example.com/mcp"
headers = { Authorization = "Bearer sk-live-123", X-Ref = "Bearer ${env:T}" }

[servers.bad]
command = "x"
restart = "sometimes"
`)
	out, errOut, code := runCLI(t, nil, "config", "list", "--config", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Contains(out, "ghp_literal") || strings.Contains(out, "sk-live-123") {
		t.Errorf("secret shown:\n%s", out)
	}
	for _, want := range []string{"REF='${env:GH}'", "Bearer " + app.Masked, "[X-Ref: Bearer ${env:T}]", "invalid: servers.bad.restart", "gh ", "remote", "https://example.com/mcp (http)"} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q:\n%s", want, out)
		}
	}
	if gi, ri := strings.Index(out, "gh "), strings.Index(out, "remote"); gi > ri {
		t.Error("not in file order")
	}
	out, _, _ = runCLI(t, nil, "config", "list", "--config", p, "--json", "--show-secrets")
	var entries []map[string]any
	if err := json.Unmarshal([]byte(out), &entries); err != nil || len(entries) != 3 {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if entries[0]["env"].(map[string]any)["TOKEN"] != "ghp_literal" || entries[2]["valid"] != false {
		t.Errorf("json entries = %v", entries)
	}
}

func TestConfigFirstRun(t *testing.T) {
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	t.Setenv("APPDATA", xdg) // the config folder's variable on Windows
	t.Setenv("MCPTRAY_CONFIG", "")
	out, errOut, code := runCLI(t, nil, "config", "list")
	if code != 0 || !strings.Contains(errOut, "wrote a default config") || !strings.Contains(out, clients.ShellQuote(testExe)+" serve-demo") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(xdg, "mcptray", "servers.toml")); err != nil {
		t.Error(err)
	}
	out, _, _ = runCLI(t, nil, "config", "path")
	if strings.TrimSpace(out) != filepath.Join(xdg, "mcptray", "servers.toml") {
		t.Errorf("config path = %q", out)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"frobnicate"}, {"config", "frob"}, {"config", "list", "--nope"}, {"config"}, {"version", "extra"}} {
		_, errOut, code := runCLI(t, nil, args...)
		if code != 2 || !strings.Contains(errOut, "Usage: mcptray") {
			t.Errorf("%v: exit %d\n%s", args, code, errOut)
		}
	}
	for _, args := range [][]string{{"--help"}, {"config", "--help"}, {"config", "validate", "--help"}, {"help", "config"}, {"serve-demo", "-h"}} {
		out, _, code := runCLI(t, nil, args...)
		if code != 0 || !strings.Contains(out, "Usage: mcptray") {
			t.Errorf("%v: exit %d\n%s", args, code, out)
		}
	}
	out, _, code := runCLI(t, nil, "version")
	if code != 0 || !strings.HasPrefix(out, "mcptray ") {
		t.Errorf("version: %d %q", code, out)
	}
}

func TestMaskSecret(t *testing.T) {
	for in, want := range map[string]string{
		"":                    "",
		"abc":                 app.Masked,
		"${env:T}":            "${env:T}",
		"Bearer ${env:T}":     "Bearer ${env:T}",
		"Bearer abc":          "Bearer " + app.Masked,
		"x-${env:T}-y":        app.Masked,
		"basic dXNlcjpwYXNz":  "basic " + app.Masked,
		"token ${env:T} junk": "token " + app.Masked,
	} {
		if got := app.MaskSecret(in); got != want {
			t.Errorf("MaskSecret(%q) = %q, want %q", in, got, want)
		}
	}
}
