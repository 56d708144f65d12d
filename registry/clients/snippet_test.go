package clients

import (
	"slices"
	"strings"
	"testing"
)

// TestParseSnippet reads every shape a person pastes, one entry or many.
func TestParseSnippet(t *testing.T) {
	type want struct {
		name, command string
		args          []string
		env           map[string]string
		url           string
	}
	tests := []struct {
		name string
		text string
		want []want
	}{
		{"claude desktop file", `{"mcpServers": {
			"github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}},
			"remote": {"type": "http", "url": "https://mcp.example.com/mcp"}}}`,
			[]want{{name: "github", command: "npx", args: []string{"-y", "@modelcontextprotocol/server-github"}, env: map[string]string{"GITHUB_TOKEN": "${env:GITHUB_TOKEN}"}},
				{name: "remote", url: "https://mcp.example.com/mcp"}}},
		{"vs code servers, with a comment", `{
			// from .vscode/mcp.json
			"servers": {"memory": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}}}`,
			[]want{{name: "memory", command: "npx", args: []string{"-y", "@modelcontextprotocol/server-memory"}}}},
		{"one entry", `{"command": "uvx", "args": ["mcp-server-time"]}`,
			[]want{{name: SnippetName, command: "uvx", args: []string{"mcp-server-time"}}}},
		{"named entry cut from a file", `"fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]}`,
			[]want{{name: "fs", command: "npx", args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/tmp"}}}},
		{"codex toml", "[mcp_servers.docs]\ncommand = \"npx\"\nargs = [\"-y\", \"mcp-docs\"]\n\n[mcp_servers.docs.env]\nLOG = \"1\"\n\n[mcp_servers.linear]\nurl = \"https://mcp.linear.app/mcp\"\n",
			[]want{{name: "docs", command: "npx", args: []string{"-y", "mcp-docs"}, env: map[string]string{"LOG": "1"}}, {name: "linear", url: "https://mcp.linear.app/mcp"}}},
		{"bare npx line", "npx -y @modelcontextprotocol/server-everything@2026.8.31 stdio",
			[]want{{name: "server-everything", command: "npx", args: []string{"-y", "@modelcontextprotocol/server-everything@2026.8.31", "stdio"}}}},
		{"lines with env, quotes and a URL", "$ GITHUB_TOKEN=abc npx -y @modelcontextprotocol/server-github\n# a comment\nuvx 'mcp-server-fetch==1.0' --user-agent \"my agent\"\ndocker run -i --rm -e TOKEN mcp/fetch:latest\nhttps://mcp.example.com/mcp\nnpx -y @modelcontextprotocol/server-github\n",
			[]want{
				{name: "server-github", command: "npx", args: []string{"-y", "@modelcontextprotocol/server-github"}, env: map[string]string{"GITHUB_TOKEN": "abc"}},
				{name: "mcp-server-fetch", command: "uvx", args: []string{"mcp-server-fetch==1.0", "--user-agent", "my agent"}},
				{name: "fetch", command: "docker", args: []string{"run", "-i", "--rm", "-e", "TOKEN", "mcp/fetch:latest"}},
				{name: "example", url: "https://mcp.example.com/mcp"},
				{name: "server-github-2", command: "npx", args: []string{"-y", "@modelcontextprotocol/server-github"}},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			im, err := ParseSnippet(tt.text)
			if err != nil {
				t.Fatal(err)
			}
			if len(im.Servers) != len(tt.want) {
				t.Fatalf("%d servers, want %d: %+v (warnings %q)", len(im.Servers), len(tt.want), im.Servers, im.Warnings)
			}
			for i, w := range tt.want {
				s := im.Servers[i]
				if s.Name != w.name || s.Command != w.command || !slices.Equal(s.Args, w.args) || s.URL != w.url {
					t.Errorf("server %d: %s %q %q %q, want %s %q %q %q", i, s.Name, s.Command, s.Args, s.URL, w.name, w.command, w.args, w.url)
				}
				for k, v := range w.env {
					if s.Env[k] != v {
						t.Errorf("server %d env %s = %q, want %q", i, k, s.Env[k], v)
					}
				}
			}
		})
	}
}

func TestParseSnippetErrors(t *testing.T) {
	for _, tt := range []struct{ text, want string }{
		{"  ", "nothing to read"},
		{`{"command": `, "not valid JSON"},
		{"npx -y 'unclosed", `line 1: a ' quote is not closed`},
		{"FOO=1 BAR=2", "sets variables but runs no command"},
		{`{"mcpServers": {}}`, "holds no server entry"},
	} {
		if _, err := ParseSnippet(tt.text); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want %q", tt.text, err, tt.want)
		}
	}
}
