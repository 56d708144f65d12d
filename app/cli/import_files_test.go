package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mcptray/internal/filemode"
	"mcptray/internal/wine"
	"mcptray/registry"
)

const cursorWithSecret = `{"mcpServers": {"gh": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
  "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_literal123"}}}}`

// import --dry-run says nothing is written: it writes nothing, not even the
// default config.
func TestImportDryRunWritesNothing(t *testing.T) {
	home := scratchHome(t)
	writeFile(t, filepath.Join(home, ".cursor", "mcp.json"), cursorWithSecret)
	out, errOut, code := runCLI(t, nil, "import", "--client", "cursor", "--dry-run")
	if code != 0 || !strings.Contains(out, "nothing written") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(userConfigDir(home), "mcptray")); !os.IsNotExist(err) {
		t.Errorf("the dry run created the config folder or file: %v", err)
	}
	if strings.Contains(out+errOut, "ghp_literal123") {
		t.Errorf("the secret was printed:\n%s", out)
	}
}

// Importing into a --config that does not exist yet creates it with the
// default config's comments, as first run does; the literal secret the
// import keeps makes it 0600.
func TestImportCreatesMissingConfig(t *testing.T) {
	home := scratchHome(t)
	writeFile(t, filepath.Join(home, ".cursor", "mcp.json"), cursorWithSecret)
	cfgPath := filepath.Join(home, "new", "servers.toml")
	out, errOut, code := runCLI(t, nil, "import", "--client", "cursor", "--config", cfgPath)
	if code != 0 || !strings.Contains(out, "created") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	got, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(got), "# mcptray: the MCP servers") || !strings.Contains(string(got), "[servers.gh]") {
		t.Errorf("servers.toml:\n%s", got)
	}
	if fi, _ := os.Stat(cfgPath); !filemode.Matches(fi.Mode(), 0o600) {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
}

// An existing servers.toml at 0644, linked from a dotfiles folder: import
// writes the linked file, keeps the link, and narrows the file to 0600 as
// it now holds a literal secret.
func TestImportIntoLinkedWorldReadableConfig(t *testing.T) {
	home := scratchHome(t)
	writeFile(t, filepath.Join(home, ".cursor", "mcp.json"), cursorWithSecret)
	real := filepath.Join(home, "dotfiles", "servers.toml")
	writeFile(t, real, "# my servers\n[servers.mine]\ncommand = \"x\"\n")
	os.Chmod(real, 0o644)
	link := filepath.Join(userConfigDir(home), "mcptray", "servers.toml")
	os.MkdirAll(filepath.Dir(link), 0o700)
	wine.Symlink(t, real, link)
	out, errOut, code := runCLI(t, nil, "import", "--client", "cursor")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("servers.toml is no longer a link: %v", err)
	}
	cfg, err := registry.Load(real)
	if err != nil || cfg.Server("mine") == nil || cfg.Server("gh") == nil {
		t.Fatalf("linked file: %v\n%s", err, registry.Encode(cfg))
	}
	if fi, _ := os.Stat(real); !filemode.Matches(fi.Mode(), 0o600) {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
}
