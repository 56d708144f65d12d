package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"mcptray/registry/clients"
)

// `export --direct` of a server whose env refers to the keyring writes
// that server through `mcptray connect` (the secret stays in mcptray),
// never with a stand-in value, and the other servers direct.
func TestDirectEntryWithAKeyringSecret(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "servers.toml")
	writeFile(t, cfg, clientsConfig+"\n[servers.vault]\ncommand = \"vault-mcp\"\nenv = { VAULT_TOKEN = \"${keyring:vault-token}\" }\n")
	out, errOut, code := runCLI(t, nil, "export", "--client", "cursor", "--config", cfg, "--direct")
	if code != 0 {
		t.Fatalf("export --direct: exit %d: %s", code, errOut)
	}
	c, _ := clients.Lookup("cursor")
	got := exported(t, c, out)
	vault := got["vault"]
	args, _ := vault["args"].([]any)
	if vault["command"] != testExe || len(args) == 0 || args[0] != "connect" || args[len(args)-1] != "vault" || vault["env"] != nil {
		t.Errorf("vault's entry %v; want `mcptray connect ... vault` with no env", vault)
	}
	if strings.Contains(out, "keyring") || strings.Contains(out, "VAULT_TOKEN") {
		t.Errorf("the keyring secret's variable or reference was written:\n%s", out)
	}
	if cmd := directProgram(got["files"]); !strings.HasSuffix(cmd, "npx") {
		t.Errorf("files is not direct: %v", got["files"])
	}
	if !strings.Contains(errOut, "servers.vault refers to ${keyring:vault-token}") || !strings.Contains(errOut, "goes through mcptray") {
		t.Errorf("stderr says nothing of the route:\n%s", errOut)
	}
}
