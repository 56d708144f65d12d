package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"mcptray/app"
	"mcptray/gateway"
	"mcptray/internal/filemode"
	"mcptray/internal/wine"
	"mcptray/registry"
	"mcptray/registry/clients"
)

// serverValues are clientsConfig's values that no entry through mcptray may
// hold: env values and their references, headers, remote URLs, commands.
var serverValues = []string{"s3cr3t-value", "GITHUB_TOKEN", "GITHUB_PERSONAL_ACCESS_TOKEN", "EXAMPLE_TOKEN",
	"mcp.example.com", "sse.example.com", "npx", "server-filesystem"}

// exported is the entries of an exported snippet, as plain values.
func exported(t *testing.T, c *clients.Client, out string) map[string]map[string]any {
	t.Helper()
	v := parses(t, c.Format, []byte(out))
	got := map[string]map[string]any{}
	switch top := v[c.Key[0]].(type) {
	case map[string]any:
		for k, e := range top {
			got[k], _ = e.(map[string]any)
		}
	case []any:
		for _, e := range top {
			m, _ := e.(map[string]any)
			got[fmt.Sprint(m["name"])] = m
		}
	}
	return got
}

// commandOf is an entry's program and arguments, whichever field names the
// client uses.
func commandOf(e map[string]any) []string {
	var out []string
	for _, k := range []string{"command", "cmd"} {
		switch v := e[k].(type) {
		case string:
			out = append(out, v)
		case []any:
			for _, a := range v {
				out = append(out, fmt.Sprint(a))
			}
		}
	}
	if a, ok := e["args"].([]any); ok {
		for _, x := range a {
			out = append(out, fmt.Sprint(x))
		}
	}
	return out
}

func TestExportThroughMcptray(t *testing.T) {
	scratchHome(t)
	cfg := writeConfig(t, clientsConfig)
	for _, c := range clients.All() {
		t.Run(c.ID, func(t *testing.T) {
			// The default is the one entry, as install writes it.
			out, errOut, code := runCLI(t, nil, "export", "--client", c.ID, "--config", cfg)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			one := exported(t, c, out)
			if want := []string{testExe, "connect", "--config", cfg}; len(one) != 1 || !slices.Equal(commandOf(one["mcptray"]), want) {
				t.Errorf("default export: %d entries, mcptray runs %q, want %q:\n%s", len(one), commandOf(one["mcptray"]), want, out)
			}
			out, errOut, code = runCLI(t, nil, "export", "--client", c.ID, "--config", cfg, "--per-server")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			for _, v := range serverValues {
				if strings.Contains(out, v) {
					t.Errorf("the entries hold the server's %q:\n%s", v, out)
				}
			}
			got := exported(t, c, out)
			for _, name := range []string{"files", "github", "remote", "legacy"} {
				want := []string{testExe, "connect", "--config", cfg, name}
				if cmd := commandOf(got[name]); !slices.Equal(cmd, want) {
					t.Errorf("%s runs %q, want %q", name, cmd, want)
				}
			}
			if strings.Contains(errOut, "placeholder") || strings.Contains(errOut, "mcp-remote") {
				t.Errorf("advice about direct entries:\n%s", errOut)
			}
		})
	}
	keyPath := gateway.KeyPath(cfg)
	if _, err := os.Stat(keyPath); err == nil {
		t.Errorf("the bridge needs no key, yet %s was made", keyPath)
	}

	// --url: the local endpoint's URL, the key masked unless revealed.
	out, errOut, code := runCLI(t, nil, "export", "--client", "cursor", "--config", cfg, "--url", "remote")
	if code != 0 {
		t.Fatalf("--url: exit %d: %s", code, errOut)
	}
	key, err := gateway.ReadKey(keyPath)
	if err != nil {
		t.Fatalf("--url made no key: %v", err)
	}
	if fi, _ := os.Stat(keyPath); !filemode.Matches(fi.Mode(), 0o600) {
		t.Errorf("%s has mode %v", keyPath, fi.Mode().Perm())
	}
	c, _ := clients.Lookup("cursor")
	picked, err := gateway.EnsurePort(gateway.PortPath(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if u := exported(t, c, out)["remote"]["url"]; u != fmt.Sprintf("http://127.0.0.1:%d/mcp/remote/%s", picked, clients.Hidden) {
		t.Errorf("url %v\n%s", u, out)
	}
	if strings.Contains(out+errOut, key) || !strings.Contains(errOut, "--reveal-secrets") {
		t.Errorf("key shown, or hiding it not said:\n%s\n%s", out, errOut)
	}
	out, _, _ = runCLI(t, nil, "export", "--client", "cursor", "--config", cfg, "--url", "--reveal-secrets", "remote")
	want := gateway.URL(picked, key, "remote")
	if u := exported(t, c, out)["remote"]["url"]; u != want {
		t.Errorf("revealed url %v, want %s", u, want)
	}
	// The clients package knows the endpoint's URLs by the form gateway.URL
	// makes: for the switch lines, masking and import.
	if name, k, ok := registry.LocalEndpoint(want); !ok || name != "remote" || k != key {
		t.Errorf("registry.LocalEndpoint(%q) = %q, %q, %v", want, name, k, ok)
	}
	// [settings] gateway_port is the port the URL names.
	ported := filepath.Join(filepath.Dir(cfg), "ported.toml")
	writeFile(t, ported, "[settings]\ngateway_port = 40123\n\n"+clientsConfig)
	out, _, _ = runCLI(t, nil, "export", "--client", "cursor", "--config", ported, "--url", "remote")
	if u, _ := exported(t, c, out)["remote"]["url"].(string); !strings.HasPrefix(u, "http://127.0.0.1:40123/mcp/remote/") {
		t.Errorf("url %q does not use gateway_port 40123\n%s", u, out)
	}
	out, _, _ = runCLI(t, nil, "export", "--client", "claude-code", "--format", "cli", "--config", cfg, "files")
	if want := "claude mcp add files --transport stdio --scope user -- " + clients.ShellQuote(testExe) + " connect --config " + clients.ShellQuote(cfg) + " files\n"; out != want {
		t.Errorf("cli:\n%s\nwant\n%s", out, want)
	}
	_, errOut, code = runCLI(t, nil, "export", "--client", "cursor", "--config", cfg, "--url", "--direct")
	if code != 2 || !strings.Contains(errOut, "exclude each other") {
		t.Errorf("--url --direct: exit %d: %s", code, errOut)
	}
}

// TestExportDefaultConfig: with the default config the bridge is run
// without --config.
func TestExportDefaultConfig(t *testing.T) {
	home := scratchHome(t)
	writeFile(t, filepath.Join(userConfigDir(home), "mcptray", "servers.toml"), clientsConfig)
	out, errOut, code := runCLI(t, nil, "export", "--client", "claude-code", "files")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	c, _ := clients.Lookup("claude-code")
	if cmd := commandOf(exported(t, c, out)["files"]); !slices.Equal(cmd, []string{testExe, "connect", "files"}) {
		t.Errorf("runs %q\n%s", cmd, out)
	}
}

// TestExportInstalledBinary: the entry names the binary behind a symbolic
// link, and one in a go-build folder is said.
func TestExportInstalledBinary(t *testing.T) {
	scratchHome(t)
	cfg := writeConfig(t, clientsConfig)
	dir := t.TempDir()
	headless := filepath.Join(dir, "app", exeName(app.HeadlessName))
	writeFile(t, headless, "#!/bin/sh\n")
	if err := os.Chmod(headless, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		real, want string
		warn       bool
	}{
		{real: filepath.Join(dir, "opt", "mcptray-1.2", exeName("mcptray"))},
		{real: filepath.Join(dir, "go-build1234", "b001", "exe", exeName("mcptray")), warn: true},
		// The desktop build with the headless one beside it: entries run
		// the headless one.
		{real: filepath.Join(dir, "app", exeName("mcptray")), want: headless},
	} {
		writeFile(t, tt.real, "#!/bin/sh\n")
		if tt.want == "" {
			tt.want = tt.real
		}
		link := filepath.Join(t.TempDir(), exeName("mcptray"))
		wine.Symlink(t, tt.real, link)
		var out, errb bytes.Buffer
		env := &app.Env{Stdout: &out, Stderr: &errb, Exe: link, LookupEnv: func(string) (string, bool) { return "", false }}
		if code := run(context.Background(), []string{"export", "--client", "cursor", "--config", cfg, "files"}, env); code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		real, _ := filepath.EvalSymlinks(tt.want)
		var v struct {
			MCPServers map[string]struct{ Command string } `json:"mcpServers"`
		}
		if err := json.Unmarshal(out.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		if got := v.MCPServers["files"].Command; got != real {
			t.Errorf("command %q, want %q (behind the link %s)", got, real, link)
		}
		if said := strings.Contains(errb.String(), "temporary go-build folder"); said != tt.warn {
			t.Errorf("%s: go-build warning %v, want %v:\n%s", tt.real, said, tt.warn, errb.String())
		}
	}
}

// TestExportRunsTheHeadlessBesideIt: run as the desktop build, with the
// headless build beside it as every package installs them (no link in
// between), the entries run the headless build; with none beside it, the
// desktop build itself.
func TestExportRunsTheHeadlessBesideIt(t *testing.T) {
	scratchHome(t)
	cfg := writeConfig(t, clientsConfig)
	dir := t.TempDir()
	desktop := filepath.Join(dir, exeName("mcptray"))
	writeFile(t, desktop, "#!/bin/sh\n")
	os.Chmod(desktop, 0o755)
	command := func() string {
		t.Helper()
		var out, errb bytes.Buffer
		env := &app.Env{Stdout: &out, Stderr: &errb, Exe: desktop, LookupEnv: func(string) (string, bool) { return "", false }}
		if code := run(context.Background(), []string{"export", "--client", "cursor", "--config", cfg, "files"}, env); code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		var v struct {
			MCPServers map[string]struct{ Command string } `json:"mcpServers"`
		}
		if err := json.Unmarshal(out.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		return v.MCPServers["files"].Command
	}
	if got := command(); got != desktop {
		t.Errorf("alone: command %q, want the desktop build %q", got, desktop)
	}
	headless := filepath.Join(dir, exeName(app.HeadlessName))
	writeFile(t, headless, "#!/bin/sh\n")
	os.Chmod(headless, 0o755)
	if got := command(); got != headless {
		t.Errorf("with the headless build beside it: command %q, want %q", got, headless)
	}
}

// TestInstallSwitchesRoute: installing over a direct entry says what
// changes, a dry run writes nothing, the entry then goes through mcptray
// with the neighbours and other keys kept, and --direct switches back.
func TestInstallSwitchesRoute(t *testing.T) {
	home := scratchHome(t)
	cfg := writeConfig(t, clientsConfig)
	path := filepath.Join(home, ".claude.json")
	writeFile(t, path, "{\n  \"numStartups\": 3,\n  \"mcpServers\": {\n    \"other\": {\"type\": \"stdio\", \"command\": \"uvx\", \"args\": [\"x\"], \"env\": {\"K\": \"neighbour-secret-1\"}}\n  },\n  \"tipsHistory\": {\"a\": 1}\n}\n")
	if _, errOut, code := runCLI(t, nil, "install", "--direct", "--client", "claude-code", "--config", cfg, "--no-resolve"); code != 0 {
		t.Fatalf("direct install: exit %d: %s", code, errOut)
	}
	direct, _ := os.ReadFile(path)
	if !strings.Contains(string(direct), "s3cr3t-value") {
		t.Fatalf("the direct entry lacks its literal, so this test proves nothing:\n%s", direct)
	}

	out, errOut, code := runCLI(t, nil, "install", "--per-server", "--client", "claude-code", "--config", cfg, "--dry-run")
	if code != 0 {
		t.Fatalf("dry run: exit %d: %s", code, errOut)
	}
	// The lines name the program by its file name, and quote for a shell.
	bridge := filepath.Base(testExe) + " connect --config " + clients.ShellQuote(cfg)
	for _, want := range []string{
		"files: direct entry (" + viaCmd + "npx -y @modelcontextprotocol/server-filesystem /tmp) → through mcptray (" + bridge + " files)",
		"remote: direct entry (https://mcp.example.com/mcp) → through mcptray (" + bridge + " remote)",
		"would be changed", "dry run, nothing written",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run does not say %q:\n%s", want, out)
		}
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, direct) {
		t.Errorf("dry run changed the file")
	}

	out, errOut, code = runCLI(t, nil, "install", "--per-server", "--client", "claude-code", "--config", cfg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Contains(out, "neighbour-secret-1") || strings.Contains(out, "s3cr3t-value") {
		t.Errorf("the diff shows a secret:\n%s", out)
	}
	got, _ := os.ReadFile(path)
	var v struct {
		NumStartups int            `json:"numStartups"`
		Tips        map[string]int `json:"tipsHistory"`
		MCPServers  map[string]map[string]any
	}
	if err := json.Unmarshal(got, &v); err != nil {
		t.Fatal(err)
	}
	if v.NumStartups != 3 || v.Tips["a"] != 1 || commandOf(v.MCPServers["other"])[0] != "uvx" {
		t.Errorf("other keys or the neighbour lost:\n%s", got)
	}
	for _, name := range []string{"files", "github", "remote", "legacy"} {
		e := v.MCPServers[name]
		if cmd := commandOf(e); !slices.Equal(cmd, []string{testExe, "connect", "--config", cfg, name}) || e["env"] != nil || e["headers"] != nil || e["url"] != nil {
			t.Errorf("%s: %v", name, e)
		}
	}
	for _, s := range serverValues {
		if strings.Contains(string(got), s) {
			t.Errorf("the file still holds the server's %q:\n%s", s, got)
		}
	}

	out, _, _ = runCLI(t, nil, "install", "--direct", "--client", "claude-code", "--config", cfg, "--no-resolve", "files")
	if want := "files: through mcptray (" + bridge + " files) → direct entry (" + viaCmd + "npx -y @modelcontextprotocol/server-filesystem /tmp)"; !strings.Contains(out, want) {
		t.Errorf("--direct does not say %q:\n%s", want, out)
	}
}
