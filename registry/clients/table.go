package clients

import (
	"fmt"
	"path"
)

// The clients, as data. Sources: the client's own documentation or source
// where it could be read (named in Doc); what could not be confirmed there is
// said in Unverified, which --help and every output repeat.
var all = []*Client{
	{
		ID: "claude-desktop", Name: "Claude Desktop", Format: FormatJSON, Key: []string{"mcpServers"},
		Bridge: true,
		Doc:    "modelcontextprotocol.io quickstart (claude_desktop_config.json)",
		Notes: []string{
			"Claude Desktop's file runs stdio servers only: remote servers are bridged with `npx -y mcp-remote URL`.",
			"Claude Desktop does not expand environment references: secrets must be written into the file.",
		},
		Unverified: "the Linux path (no official Linux build; community builds use ~/.config/Claude)",
		shape:      shape{command: "command", args: "args", env: "env"},
		scopes:     []Scope{ScopeUser},
		paths: func(os string, _ Scope, e *pathEnv) (string, error) {
			switch os {
			case "darwin":
				return join(os, e.home, "Library/Application Support/Claude/claude_desktop_config.json"), nil
			case "windows":
				// Current MSIX installs read a virtualised copy of %APPDATA%.
				if e.glob != nil {
					local := e.getenv("LOCALAPPDATA")
					if local == "" {
						local = e.home + "/AppData/Local"
					}
					if m, _ := e.glob(path.Join(local, "Packages/Claude_*/LocalCache/Roaming/Claude")); len(m) > 0 {
						return join(os, m[0], "claude_desktop_config.json"), nil
					}
				}
				return join(os, e.appData(), "Claude/claude_desktop_config.json"), nil
			}
			return join(os, e.xdgConfig(), "Claude/claude_desktop_config.json"), nil
		},
	},
	{
		ID: "claude-code", Name: "Claude Code", Format: FormatJSON, Key: []string{"mcpServers"},
		Ref:        func(n string) string { return "${" + n + "}" },
		RefDefault: func(n, d string) string { return "${" + n + ":-" + d + "}" },
		unref:      []refPattern{{prefix: "${", suffix: "}"}},
		Doc:        "docs.claude.com/en/docs/claude-code/mcp",
		Notes:      []string{"~/.claude.json holds much more than MCP servers: only the named entries are changed."},
		shape:      shape{command: "command", args: "args", env: "env", stdioType: "stdio", url: "url", httpType: "http", sseType: "sse", headers: []string{"headers"}},
		scopes:     []Scope{ScopeUser, ScopeProject, ScopeLocal},
		paths: func(os string, scope Scope, e *pathEnv) (string, error) {
			if scope == ScopeProject {
				return join(os, e.project, ".mcp.json"), nil
			}
			return join(os, e.home, ".claude.json"), nil
		},
		cli: claudeCLI,
	},
	{
		ID: "cursor", Name: "Cursor", Format: FormatJSON, Key: []string{"mcpServers"},
		Ref:    func(n string) string { return "${env:" + n + "}" },
		unref:  []refPattern{{prefix: "${env:", suffix: "}"}},
		Doc:    "cursor.com/docs/context/mcp",
		shape:  shape{command: "command", args: "args", env: "env", stdioType: "stdio", url: "url", headers: []string{"headers"}},
		scopes: []Scope{ScopeUser, ScopeProject},
		paths:  dotPaths(".cursor/mcp.json", ".cursor/mcp.json"),
		link:   cursorLink,
	},
	{
		ID: "vscode", Name: "VS Code", Format: FormatJSONC, Key: []string{"servers"},
		Ref:    func(n string) string { return "${env:" + n + "}" },
		unref:  []refPattern{{prefix: "${env:", suffix: "}"}},
		Doc:    "code.visualstudio.com/docs/copilot/customization/mcp-servers",
		Notes:  []string{"VS Code can also prompt for a secret once and store it: ${input:ID} with an \"inputs\" entry."},
		shape:  shape{command: "command", args: "args", env: "env", cwd: "cwd", stdioType: "stdio", url: "url", httpType: "http", sseType: "sse", headers: []string{"headers"}},
		scopes: []Scope{ScopeUser, ScopeProject},
		paths: func(os string, scope Scope, e *pathEnv) (string, error) {
			if scope == ScopeProject {
				return join(os, e.project, ".vscode/mcp.json"), nil
			}
			return join(os, e.vscodeUser(os), "mcp.json"), nil
		},
		cli:  vscodeCLI,
		link: vscodeLink,
	},
	{
		ID: "windsurf", Name: "Windsurf", Format: FormatJSON, Key: []string{"mcpServers"},
		Ref:        func(n string) string { return "${env:" + n + "}" },
		unref:      []refPattern{{prefix: "${env:", suffix: "}"}},
		Doc:        "docs.windsurf.com/windsurf/cascade/mcp",
		Unverified: "${env:VAR} interpolation (documented by server vendors, not on Windsurf's own page)",
		shape:      shape{command: "command", args: "args", env: "env", url: "serverUrl", headers: []string{"headers"}},
		scopes:     []Scope{ScopeUser},
		paths:      dotPaths(".codeium/windsurf/mcp_config.json", ""),
	},
	{
		ID: "cline", Name: "Cline", Format: FormatJSON, Key: []string{"mcpServers"},
		Ref:        func(n string) string { return "${env:" + n + "}" },
		unref:      []refPattern{{prefix: "${env:", suffix: "}"}},
		Doc:        "docs.cline.bot/mcp (and Cline's settings schema)",
		Unverified: "the file path (~/.cline/data/settings; older installs keep it in VS Code's globalStorage) and ${env:VAR} interpolation",
		Notes:      []string{"Cline treats a url without type as SSE, so every remote entry carries its type."},
		shape:      shape{command: "command", args: "args", env: "env", cwd: "cwd", stdioType: "stdio", url: "url", httpType: "streamableHttp", sseType: "sse", headers: []string{"headers"}},
		scopes:     []Scope{ScopeUser},
		paths:      dotPaths(".cline/data/settings/cline_mcp_settings.json", ""),
	},
	{
		ID: "roo", Name: "Roo Code", Format: FormatJSON, Key: []string{"mcpServers"},
		Ref:    func(n string) string { return "${env:" + n + "}" },
		unref:  []refPattern{{prefix: "${env:", suffix: "}"}},
		Doc:    "docs.roocode.com/features/mcp/using-mcp-in-roo",
		Notes:  []string{"Roo Code treats a url without type as SSE, so every remote entry carries its type."},
		shape:  shape{command: "command", args: "args", env: "env", cwd: "cwd", stdioType: "stdio", url: "url", httpType: "streamable-http", sseType: "sse", headers: []string{"headers"}},
		scopes: []Scope{ScopeUser, ScopeProject},
		paths: func(os string, scope Scope, e *pathEnv) (string, error) {
			if scope == ScopeProject {
				return join(os, e.project, ".roo/mcp.json"), nil
			}
			return join(os, e.vscodeUser(os), "globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json"), nil
		},
	},
	{
		ID: "continue", Name: "Continue", Format: FormatYAML, Key: []string{"mcpServers"}, List: true,
		Ref:     func(n string) string { return "${{ secrets." + n + " }}" },
		unref:   []refPattern{{prefix: "${{ secrets.", suffix: " }}"}, {prefix: "${{secrets.", suffix: "}}"}},
		Doc:     "docs.continue.dev/customize/deep-dives/mcp and the config.yaml reference",
		Notes:   []string{"Continue reads ${{ secrets.NAME }} from its own secret store or ~/.continue/.env, not from the process environment."},
		shape:   shape{command: "command", args: "args", env: "env", cwd: "cwd", stdioType: "stdio", url: "url", httpType: "streamable-http", sseType: "sse", headers: []string{"requestOptions", "headers"}, name: true},
		scopes:  []Scope{ScopeUser},
		newFile: "name: Local Assistant\nversion: 1.0.0\nschema: v1\n",
		paths:   dotPaths(".continue/config.yaml", ""),
	},
	{
		ID: "zed", Name: "Zed", Format: FormatJSONC, Key: []string{"context_servers"},
		Doc:        "zed.dev/docs/ai/mcp",
		Unverified: "remote entries over SSE (Zed documents url + headers without naming the transport)",
		Notes:      []string{"Zed does not expand environment references in settings.json: secrets must be written into the file."},
		shape:      shape{command: "command", args: "args", alwaysArgs: true, env: "env", url: "url", headers: []string{"headers"}, extra: obj{{"source", "custom"}}},
		scopes:     []Scope{ScopeUser, ScopeProject},
		paths: func(os string, scope Scope, e *pathEnv) (string, error) {
			switch {
			case scope == ScopeProject:
				return join(os, e.project, ".zed/settings.json"), nil
			case os == "windows":
				return join(os, e.appData(), "Zed/settings.json"), nil
			case os == "darwin":
				return join(os, e.home, ".config/zed/settings.json"), nil
			}
			return join(os, e.xdgConfig(), "zed/settings.json"), nil
		},
	},
	{
		ID: "codex", Name: "OpenAI Codex", Format: FormatTOML, Key: []string{"mcp_servers"},
		Doc:    "developers.openai.com/codex/mcp and codex-rs config types",
		Notes:  []string{"Codex speaks Streamable HTTP only: SSE servers are bridged with mcp-remote. Secrets are forwarded by name (env_vars, bearer_token_env_var, env_http_headers)."},
		shape:  shape{command: "command", args: "args", env: "env", cwd: "cwd", url: "url", noSSE: true, headers: []string{"http_headers"}, codex: true},
		scopes: []Scope{ScopeUser, ScopeProject},
		paths: func(os string, scope Scope, e *pathEnv) (string, error) {
			if scope == ScopeProject {
				return join(os, e.project, ".codex/config.toml"), nil
			}
			if h := e.getenv("CODEX_HOME"); h != "" {
				return join(os, h, "config.toml"), nil
			}
			return join(os, e.home, ".codex/config.toml"), nil
		},
		cli: codexCLI,
	},
	{
		ID: "gemini", Name: "Gemini CLI", Format: FormatJSONC, Key: []string{"mcpServers"}, noTrailingCommas: true,
		Ref:        func(n string) string { return "${" + n + "}" },
		RefDefault: func(n, d string) string { return "${" + n + ":-" + d + "}" },
		unref:      []refPattern{{prefix: "${", suffix: "}"}, {prefix: "$", bare: true}},
		Doc:        "github.com/google-gemini/gemini-cli docs/tools/mcp-server.md and `gemini mcp add` source",
		shape:      shape{command: "command", args: "args", env: "env", cwd: "cwd", url: "url", httpType: "http", sseType: "sse", headers: []string{"headers"}, description: true},
		scopes:     []Scope{ScopeUser, ScopeProject},
		paths:      dotPaths(".gemini/settings.json", ".gemini/settings.json"),
		cli:        geminiCLI,
	},
	{
		// Verified with Qwen Code 0.24.4 (`qwen mcp add`, `qwen mcp list`).
		ID: "qwen", Name: "Qwen Code", Format: FormatJSONC, Key: []string{"mcpServers"}, noTrailingCommas: true,
		Ref:    func(n string) string { return "${" + n + "}" },
		unref:  []refPattern{{prefix: "${", suffix: "}"}, {prefix: "$", bare: true}},
		Doc:    "github.com/QwenLM/qwen-code docs/tools/mcp-server.md, checked against `qwen mcp add` and `qwen mcp list` 0.24.4",
		Notes:  []string{"Qwen Code tells the transports apart by key: httpUrl is Streamable HTTP, url is SSE. It has no ${VAR:-default} form."},
		shape:  shape{command: "command", args: "args", env: "env", cwd: "cwd", url: "url", httpURL: "httpUrl", headers: []string{"headers"}, description: true},
		scopes: []Scope{ScopeUser, ScopeProject},
		paths: func(os string, scope Scope, e *pathEnv) (string, error) {
			if scope == ScopeProject {
				return join(os, e.project, ".qwen/settings.json"), nil
			}
			return join(os, e.home, ".qwen/settings.json"), nil
		},
		cli: qwenCLI,
	},
	{
		// Verified with GitHub Copilot CLI 1.0.102 (`copilot mcp add`, and
		// `copilot --acp`, which connects the servers of a new session).
		ID: "copilot", Name: "GitHub Copilot CLI", Format: FormatJSON, Key: []string{"mcpServers"},
		Ref:        func(n string) string { return "${" + n + "}" },
		RefDefault: func(n, d string) string { return "${" + n + ":-" + d + "}" },
		unref:      []refPattern{{prefix: "${", suffix: "}"}},
		Doc:        "docs.github.com/copilot/how-tos/copilot-cli (MCP servers), checked against `copilot mcp add` and `copilot --acp` 1.0.102",
		Notes:      []string{"Copilot CLI expands ${VAR} but passes ${env:VAR} to the server as written."},
		shape:      shape{command: "command", args: "args", env: "env", stdioType: "local", url: "url", httpType: "http", sseType: "sse", headers: []string{"headers"}},
		scopes:     []Scope{ScopeUser},
		paths: func(os string, _ Scope, e *pathEnv) (string, error) {
			if h := e.getenv("COPILOT_HOME"); h != "" {
				return join(os, h, "mcp-config.json"), nil
			}
			return join(os, e.home, ".copilot/mcp-config.json"), nil
		},
		cli: copilotCLI,
	},
	{
		ID: "goose", Name: "Goose", Format: FormatYAML, Key: []string{"extensions"},
		Doc:        "block.github.io/goose/docs/guides/config-files",
		Unverified: "the goose:// install link's parameters for remote and environment values",
		Notes:      []string{"Goose keeps secrets in its keyring, not in config.yaml: write values there or set them in Goose's UI.", "Goose speaks Streamable HTTP only: SSE servers are bridged with mcp-remote."},
		shape: shape{command: "cmd", args: "args", alwaysArgs: true, env: "envs", stdioType: "stdio", url: "uri", httpType: "streamable_http", noSSE: true, headers: []string{"headers"}, name: true, description: true,
			extra: obj{{"enabled", true}, {"timeout", 300}}},
		scopes: []Scope{ScopeUser},
		paths: func(os string, _ Scope, e *pathEnv) (string, error) {
			if os == "windows" {
				return join(os, e.appData(), "Block/goose/config/config.yaml"), nil
			}
			return join(os, e.xdgConfig(), "goose/config.yaml"), nil
		},
		link: gooseLink,
	},
	{
		ID: "lmstudio", Name: "LM Studio", Format: FormatJSON, Key: []string{"mcpServers"},
		Doc:        "lmstudio.ai/docs/app/mcp",
		Unverified: "the file path (~/.lmstudio/mcp.json) and whether environment references are expanded (assumed not)",
		shape:      shape{command: "command", args: "args", env: "env", url: "url", headers: []string{"headers"}},
		scopes:     []Scope{ScopeUser},
		paths:      dotPaths(".lmstudio/mcp.json", ""),
		link:       lmstudioLink,
	},
	{
		ID: "opencode", Name: "opencode", Format: FormatJSONC, Key: []string{"mcp"},
		Ref:   func(n string) string { return "{env:" + n + "}" },
		unref: []refPattern{{prefix: "{env:", suffix: "}"}},
		Doc:   "opencode.ai/docs/mcp-servers",
		shape: shape{command: "command", commandArray: true, env: "environment", stdioType: "local", url: "url", httpType: "remote", sseType: "remote", headers: []string{"headers"},
			extra: obj{{"enabled", true}}},
		scopes: []Scope{ScopeUser, ScopeProject},
		paths: func(os string, scope Scope, e *pathEnv) (string, error) {
			dir := join(os, e.xdgConfig(), "opencode")
			switch {
			case scope == ScopeProject:
				dir = join(os, e.project)
			case os == "windows":
				dir = join(os, e.home, ".config/opencode")
			}
			return opencodeFile(os, dir, e), nil
		},
	},
	{
		ID: "kiro", Name: "Kiro", Format: FormatJSON, Key: []string{"mcpServers"},
		Ref:        func(n string) string { return "${" + n + "}" },
		unref:      []refPattern{{prefix: "${", suffix: "}"}},
		Doc:        "kiro.dev/docs/mcp/configuration",
		Unverified: "${VAR} interpolation (Kiro expands only variables the user approved)",
		shape:      shape{command: "command", args: "args", env: "env", url: "url", headers: []string{"headers"}},
		scopes:     []Scope{ScopeUser, ScopeProject},
		paths:      dotPaths(".kiro/settings/mcp.json", ".kiro/settings/mcp.json"),
	},
	{
		ID: "generic", Name: "generic mcpServers JSON", Format: FormatJSON, Key: []string{"mcpServers"},
		Ref:    func(n string) string { return "${env:" + n + "}" },
		unref:  []refPattern{{prefix: "${env:", suffix: "}"}},
		Doc:    "the common mcpServers shape (Claude Desktop, Cursor and most others)",
		Notes:  []string{"References stay as ${env:VAR}: replace them if your client does not expand them."},
		shape:  shape{command: "command", args: "args", env: "env", cwd: "cwd", url: "url", httpType: "http", sseType: "sse", headers: []string{"headers"}},
		scopes: []Scope{ScopeUser},
	},
}

// opencodeFile is opencode's file in dir: opencode reads opencode.json and
// opencode.jsonc (the one its own `opencode mcp add` writes), the second
// winning where both set a key. The .jsonc one is used when it exists, else
// opencode.json (the documented name, and the one written when neither
// exists).
func opencodeFile(os, dir string, e *pathEnv) string {
	if jc := join(os, dir, "opencode.jsonc"); e.exists != nil && e.exists(jc) {
		return jc
	}
	return join(os, dir, "opencode.json")
}

// dotPaths is a client whose files sit under the home folder (user) and the
// project folder (project), the same on every OS.
func dotPaths(user, project string) func(string, Scope, *pathEnv) (string, error) {
	return func(os string, scope Scope, e *pathEnv) (string, error) {
		if scope == ScopeProject {
			if project == "" {
				return "", fmt.Errorf("no project file")
			}
			return join(os, e.project, project), nil
		}
		return join(os, e.home, user), nil
	}
}
