package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// `mcptray install --client X` writes the one entry mcptray in place of the
// per-server entries mcptray wrote before, saying so; `uninstall mcptray`
// restores the file byte for byte; --per-server keeps the entries per
// server; --profile writes mcptray-PROFILE.
func TestInstallOneEntry(t *testing.T) {
	home := scratchHome(t)
	cfg := writeConfig(t, clientsConfig+"\n[profiles.work]\nservers = [\"files\"]\n")
	path := filepath.Join(home, ".cursor", "mcp.json")
	writeFile(t, path, "{\n  \"mcpServers\": {\n    \"mine\": {\"command\": \"uvx\", \"args\": [\"mine\"]}\n  }\n}\n")
	if _, errOut, code := runCLI(t, nil, "install", "--per-server", "--client", "cursor", "--config", cfg); code != 0 {
		t.Fatalf("install --per-server: exit %d: %s", code, errOut)
	}
	perServer, _ := os.ReadFile(path)
	entries := func() map[string][]string {
		var v struct{ MCPServers map[string]map[string]any }
		b, _ := os.ReadFile(path)
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		out := map[string][]string{}
		for n, e := range v.MCPServers {
			out[n] = commandOf(e)
		}
		return out
	}
	if e := entries(); len(e) != 5 || e["files"] == nil {
		t.Fatalf("per-server entries: %v", e)
	}

	out, errOut, code := runCLI(t, nil, "install", "--client", "cursor", "--config", cfg)
	if code != 0 {
		t.Fatalf("install: exit %d: %s", code, errOut)
	}
	e := entries()
	if len(e) != 2 || e["mine"] == nil || !slices.Equal(e["mcptray"], []string{testExe, "connect", "--config", cfg}) {
		t.Errorf("after install: %v", e)
	}
	for _, want := range []string{`-    "files": {`, `+    "mcptray": {`, "added mcptray; removed files, github, remote, legacy"} {
		if !strings.Contains(out, want) {
			t.Errorf("install does not say %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "mcptray replaces the per-server entries mcptray wrote (files, github, remote, legacy)") {
		t.Errorf("the note:\n%s", errOut)
	}

	out, errOut, code = runCLI(t, nil, "install", "--client", "cursor", "--config", cfg, "--profile", "work")
	if code != 0 {
		t.Fatalf("install --profile work: exit %d: %s", code, errOut)
	}
	if e := entries(); !slices.Equal(e["mcptray-work"], []string{testExe, "connect", "--config", cfg, "--profile", "work"}) || e["mcptray"] == nil {
		t.Errorf("after install --profile work: %v\n%s", e, out)
	}
	if _, errOut, code := runCLI(t, nil, "uninstall", "--client", "cursor", "mcptray-work"); code != 0 {
		t.Fatalf("uninstall mcptray-work: exit %d: %s", code, errOut)
	}
	out, errOut, code = runCLI(t, nil, "uninstall", "--client", "cursor", "mcptray")
	if code != 0 {
		t.Fatalf("uninstall mcptray: exit %d: %s", code, errOut)
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, perServer) {
		t.Errorf("uninstall did not restore the file byte for byte:\n--- was\n%s\n--- now\n%s\n%s", perServer, now, out)
	}
	if !strings.Contains(errOut, "restored mcp.json.mcptray-backup-") {
		t.Errorf("uninstall does not say it restored the backup:\n%s%s", out, errOut)
	}

	// Bad input: a profile that is not there, --profile with a NAME.
	if _, errOut, code := runCLI(t, nil, "install", "--client", "cursor", "--config", cfg, "--profile", "wrok"); code == 0 || !strings.Contains(errOut, `no profile named "wrok" is configured`) || !strings.Contains(errOut, `did you mean "work"?`) {
		t.Errorf("install --profile wrok: exit %d: %s", code, errOut)
	}
	if _, errOut, code := runCLI(t, nil, "install", "--client", "cursor", "--config", cfg, "--profile", "work", "files"); code != 2 || !strings.Contains(errOut, "--profile writes the one entry mcptray-work") {
		t.Errorf("install --profile work files: exit %d: %s", code, errOut)
	}
}
