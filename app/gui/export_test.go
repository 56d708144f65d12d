package gui

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"mcptray/registry"
	"mcptray/registry/clients"
)

// TestExportDialog: the dialog offers what the command line would export,
// renders every output of a client through one Render, never shows or
// copies the mask, and copies secret values only when asked.
func TestExportDialog(t *testing.T) {
	cfgPath := filepath.Join(t.TempDir(), "servers.toml")
	if err := os.WriteFile(cfgPath, []byte(`[servers.gh]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-github"]
env = { GITHUB_PERSONAL_ACCESS_TOKEN = "ghp_literal_1" }

[servers.off]
command = "x"
disabled = true

[servers.bad]
command = "y"
restart = "sometimes"
`), 0o600); err != nil {
		t.Fatal(err)
	}
	c := newTestController(t, newFakeEngine(sampleSnapshot()), cfgPath)
	offered, ticked, err := c.exportChoices()
	if err != nil || !slices.Equal(offered, []string{"gh", "off"}) || !slices.Equal(ticked, []string{"gh"}) {
		t.Fatalf("choices %v %v %v", offered, ticked, err)
	}
	e := c.newExportDialog(offered, ticked)
	e.client.SetSelected("Claude Code")
	if !slices.Equal(e.output.Options, []string{"Config snippet", "Add command"}) {
		t.Errorf("outputs %v", e.output.Options)
	}
	if got := e.snippet.Text; !strings.Contains(got, `"GITHUB_PERSONAL_ACCESS_TOKEN": "<hidden>"`) || strings.Contains(got, registry.Masked) {
		t.Errorf("snippet:\n%s", got)
	}
	if !strings.Contains(e.notes.Text, "not a working value") {
		t.Errorf("notes: %s", e.notes.Text)
	}
	e.output.SetSelected("Add command")
	if got := e.snippet.Text; !strings.HasPrefix(got, "claude mcp add gh --transport stdio") {
		t.Errorf("add command:\n%s", got)
	}
	test.Tap(e.copyBtn)
	if got := c.app.Clipboard().Content(); strings.Contains(got, "ghp_literal_1") || !strings.Contains(got, clients.Hidden) {
		t.Errorf("copied without asking for secrets:\n%s", got)
	}
	e.reveal.SetChecked(true)
	test.Tap(e.copyBtn)
	if got := c.app.Clipboard().Content(); !strings.Contains(got, "GITHUB_PERSONAL_ACCESS_TOKEN=ghp_literal_1") {
		t.Errorf("copied with secrets:\n%s", got)
	}
	if strings.Contains(e.snippet.Text, "ghp_literal_1") {
		t.Error("the dialog shows the secret")
	}
	// Ticking the disabled server names it, as on the command line.
	e.servers.SetSelected([]string{"off"})
	if !strings.Contains(e.snippet.Text, "claude mcp add off") {
		t.Errorf("named disabled server:\n%s", e.snippet.Text)
	}
}
