package clients

import (
	"strings"
	"testing"
)

// TestUserPathsPerOS: every client's user file on Windows and macOS, as
// /work/shared/reference/clients.md gives them. On Windows the roaming
// folder is %APPDATA% (wherever it points), the home folder %USERPROFILE%.
func TestUserPathsPerOS(t *testing.T) {
	want := map[string]map[string]string{
		"windows": {
			"claude-desktop": `D:\Roaming\Claude\claude_desktop_config.json`,
			"claude-code":    `C:\Users\me\.claude.json`,
			"cursor":         `C:\Users\me\.cursor\mcp.json`,
			"vscode":         `D:\Roaming\Code\User\mcp.json`,
			"windsurf":       `C:\Users\me\.codeium\windsurf\mcp_config.json`,
			"cline":          `C:\Users\me\.cline\data\settings\cline_mcp_settings.json`,
			"roo":            `D:\Roaming\Code\User\globalStorage\rooveterinaryinc.roo-cline\settings\mcp_settings.json`,
			"continue":       `C:\Users\me\.continue\config.yaml`,
			"zed":            `D:\Roaming\Zed\settings.json`,
			"codex":          `C:\Users\me\.codex\config.toml`,
			"gemini":         `C:\Users\me\.gemini\settings.json`,
			"goose":          `D:\Roaming\Block\goose\config\config.yaml`,
			"lmstudio":       `C:\Users\me\.lmstudio\mcp.json`,
			"opencode":       `C:\Users\me\.config\opencode\opencode.json`,
			"kiro":           `C:\Users\me\.kiro\settings\mcp.json`,
			"qwen":           `C:\Users\me\.qwen\settings.json`,
			"copilot":        `C:\Users\me\.copilot\mcp-config.json`,
		},
		"darwin": {
			"claude-desktop": "/Users/me/Library/Application Support/Claude/claude_desktop_config.json",
			"claude-code":    "/Users/me/.claude.json",
			"cursor":         "/Users/me/.cursor/mcp.json",
			"vscode":         "/Users/me/Library/Application Support/Code/User/mcp.json",
			"roo":            "/Users/me/Library/Application Support/Code/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json",
			"zed":            "/Users/me/.config/zed/settings.json",
			"goose":          "/Users/me/.config/goose/config.yaml",
			"opencode":       "/Users/me/.config/opencode/opencode.json",
			"copilot":        "/Users/me/.copilot/mcp-config.json",
		},
	}
	for goos, paths := range want {
		for id, p := range paths {
			t.Run(goos+"/"+id, func(t *testing.T) {
				c, err := Lookup(id)
				if err != nil {
					t.Fatal(err)
				}
				o := goldenOpts(goos)
				o.Home = "/Users/me"
				if goos == "windows" {
					o.Home = `C:\Users\me`
					o.Getenv = func(k string) string {
						return map[string]string{"APPDATA": `D:\Roaming`, "LOCALAPPDATA": `D:\Local`}[k]
					}
				}
				got, err := c.Path(o)
				if err != nil || got != p {
					t.Errorf("got %q, %v; want %q", got, err, p)
				}
			})
		}
	}
	// Every client with a user file is listed for Windows.
	for _, c := range all {
		if _, ok := want["windows"][c.ID]; !ok && c.paths != nil {
			t.Errorf("%s: no Windows path checked", c.ID)
		}
	}
}

// TestClaudeDesktopMSIX: the Microsoft Store build reads a virtualised
// %APPDATA% under %LOCALAPPDATA%\Packages; when it is installed, that file.
func TestClaudeDesktopMSIX(t *testing.T) {
	c, _ := Lookup("claude-desktop")
	o := goldenOpts("windows")
	o.Home = `C:\Users\me`
	o.Getenv = func(k string) string { return map[string]string{"APPDATA": `C:\Users\me\AppData\Roaming`}[k] }
	var asked string
	o.Glob = func(pattern string) ([]string, error) {
		asked = pattern
		return []string{strings.ReplaceAll(pattern, "Claude_*", "Claude_pzs8sxrjxfjjc")}, nil
	}
	got, err := c.Path(o)
	want := `C:\Users\me\AppData\Local\Packages\Claude_pzs8sxrjxfjjc\LocalCache\Roaming\Claude\claude_desktop_config.json`
	if err != nil || got != want {
		t.Errorf("got %q, %v (glob %q); want %q", got, err, asked, want)
	}
}
