package clients

import (
	"encoding/base64"
	"errors"
	"net/url"
	"strings"
	"testing"

	"mcptray/registry"
)

// TestDiffMasksEverySecret: install and uninstall diffs hide the secrets of
// every entry in the file, the neighbours' included, in every format.
func TestDiffMasksEverySecret(t *testing.T) {
	files := map[string]string{
		"claude-code": `{
  "mcpServers": {
    "neighbour": {"type": "stdio", "command": "x", "env": {"API_KEY": "sk-neighbour-1"}},
    "remote2": {"type": "http", "url": "https://u:pw-in-url@h.example/mcp?api_key=qs-secret-9", "headers": {"Authorization": "Bearer tok-neighbour"}},
    "bridged": {"type": "stdio", "command": "npx", "args": ["-y", "mcp-remote", "https://b.example/mcp", "--header", "X-Key: hdr-in-args"]}
  }
}
`,
		"codex": `[mcp_servers.neighbour]
command = "x"
env = { API_KEY = "sk-neighbour-1" }

[mcp_servers.remote2]
url = "https://u:pw-in-url@h.example/mcp?api_key=qs-secret-9"
http_headers = { Authorization = "Bearer tok-neighbour" }

[mcp_servers.bridged]
command = "npx"
args = ["-y", "mcp-remote", "https://b.example/mcp", "--header", "X-Key: hdr-in-args"]
`,
		"continue": `name: a
version: 1.0.0
schema: v1
mcpServers:
  - name: neighbour
    command: x
    env:
      API_KEY: sk-neighbour-1
  - name: remote2
    type: streamable-http
    url: https://u:pw-in-url@h.example/mcp?api_key=qs-secret-9
    requestOptions:
      headers:
        Authorization: Bearer tok-neighbour
  - name: bridged
    command: npx
    args: ["-y", "mcp-remote", "https://b.example/mcp", "--header", "X-Key: hdr-in-args"]
`,
	}
	leaks := []string{"sk-neighbour-1", "pw-in-url", "qs-secret-9", "tok-neighbour", "hdr-in-args", "literal-mine"}
	mine := &registry.Server{Name: "mine", Command: "y", Env: map[string]string{"TOKEN": "literal-mine"}}
	for id, src := range files {
		t.Run(id, func(t *testing.T) {
			c, _ := Lookup(id)
			ch, err := c.Merge("f", []byte(src), []*registry.Server{mine}, installOpts())
			if err != nil {
				t.Fatal(err)
			}
			// Change the neighbours too, so their lines are in the diff.
			ch.Old = []byte(strings.ReplaceAll(string(ch.Old), "x", "z"))
			ch.Existed = true
			d := ch.Diff()
			if !strings.Contains(string(ch.New), "literal-mine") {
				t.Fatalf("the file must get the real value:\n%s", ch.New)
			}
			for _, l := range leaks {
				if strings.Contains(d, l) {
					t.Errorf("install diff shows %q:\n%s", l, d)
				}
			}
			if !strings.Contains(d, registry.Masked) {
				t.Errorf("nothing masked:\n%s", d)
			}
			rm, err := c.Remove("f", ch.New, []string{"neighbour", "remote2", "bridged", "mine"}, installOpts())
			if err != nil {
				t.Fatal(err)
			}
			d = rm.Diff()
			if len(rm.Removed) != 4 {
				t.Fatalf("removed %v", rm.Removed)
			}
			for _, l := range leaks {
				if strings.Contains(d, l) {
					t.Errorf("uninstall diff shows %q:\n%s", l, d)
				}
			}
			// References stay readable.
			if id == "claude-code" {
				ref, err := c.Merge("f", nil, []*registry.Server{cases()["http-secret"]}, installOpts())
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(ref.Diff(), "Bearer ${EXAMPLE_TOKEN}") {
					t.Errorf("a reference was masked:\n%s", ref.Diff())
				}
			}
		})
	}
}

// TestOutputNeverCarriesTheMask: a literal secret in a snippet, an add
// command or a link is <hidden> with a warning, its real value with
// RevealSecrets; URLs' credentials too.
func TestOutputNeverCarriesTheMask(t *testing.T) {
	s := []*registry.Server{
		{Name: "a", Command: "srv", Env: map[string]string{"API_KEY": "sk-1234"}},
		{Name: "b", URL: "https://h.example/mcp?token=qs-5678", Headers: map[string]string{"Authorization": "Bearer tok-9"}},
	}
	for _, id := range []string{"claude-code", "gemini", "codex", "cursor", "vscode"} {
		c, _ := Lookup(id)
		outs := []func([]*registry.Server, *Options) (*Result, error){c.Snippet}
		if c.HasCLI() {
			outs = append(outs, c.CLI)
		}
		if c.HasDeepLink() {
			outs = append(outs, c.DeepLinks)
		}
		for _, out := range outs {
			r, err := out(s, installOpts())
			if err != nil {
				t.Fatal(err)
			}
			for _, leak := range []string{"sk-1234", "qs-5678", "tok-9", registry.Masked} {
				if strings.Contains(decoded(r.Data), leak) {
					t.Errorf("%s: output holds %q:\n%s", id, leak, r.Data)
				}
			}
			w := strings.Join(r.Warnings, "\n")
			if !strings.Contains(w, "servers.a env.API_KEY is a literal secret") || !strings.Contains(w, "servers.b url holds credentials") {
				t.Errorf("%s: warnings:\n%s", id, w)
			}
			o := installOpts()
			o.RevealSecrets = true
			r, err = out(s, o)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(decoded(r.Data), "sk-1234") || strings.Contains(decoded(r.Data), Hidden) {
				t.Errorf("%s: revealed output:\n%s", id, r.Data)
			}
		}
	}
}

// decoded is output with install links' base64 and URL escapes undone.
func decoded(data []byte) string {
	var b strings.Builder
	for _, line := range strings.Split(string(data), "\n") {
		b.WriteString(line + "\n")
		if u, err := url.Parse(line); err == nil && u.Scheme != "" {
			q := u.Query()
			if cfg := q.Get("config"); cfg != "" {
				raw, _ := base64.StdEncoding.DecodeString(cfg)
				b.Write(raw)
			}
			if un, err := url.QueryUnescape(u.Opaque + u.RawQuery); err == nil {
				b.WriteString(un)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// TestCodexCannotRename: Codex forwards variables by their own name only.
// A renamed reference keeps the working value the file holds, else is
// forwarded by the entry's name (env_vars) with a warning; mcptray's own
// placeholders import as references.
func TestCodexCannotRename(t *testing.T) {
	c, _ := Lookup("codex")
	s := &registry.Server{Name: "k", Command: "srv", Env: map[string]string{"API_KEY": "${env:MY_KEY}", "SAME": "${env:SAME}"}}
	ch, err := c.Merge("config.toml", nil, []*registry.Server{s}, installOpts())
	if err != nil {
		t.Fatal(err)
	}
	got := string(ch.New)
	if strings.Contains(got, "<MY_KEY>") || !strings.Contains(got, `env_vars = ["API_KEY", "SAME"]`) {
		t.Errorf("new file:\n%s", got)
	}
	if w := strings.Join(ch.Warnings, "\n"); !strings.Contains(w, "Codex cannot rename") || !strings.Contains(w, `API_KEY="$MY_KEY"`) {
		t.Errorf("warnings: %s", w)
	}
	// A working literal in the file stays.
	old := "[mcp_servers.k]\ncommand = \"srv\"\nenv = { API_KEY = \"sk-working\" }\n"
	ch, err = c.Merge("config.toml", []byte(old), []*registry.Server{s}, installOpts())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ch.New), `API_KEY = "sk-working"`) || strings.Contains(ch.Diff(), "sk-working") {
		t.Errorf("working value not kept (or shown):\n%s\n%s", ch.New, ch.Diff())
	}
	// Revealed: the variable's value.
	o := installOpts()
	o.RevealSecrets = true
	o.LookupEnv = func(n string) (string, bool) { return map[string]string{"MY_KEY": "from-env"}[n], n == "MY_KEY" }
	ch, _ = c.Merge("config.toml", []byte(old), []*registry.Server{s}, o)
	if !strings.Contains(string(ch.New), `API_KEY = "from-env"`) {
		t.Errorf("revealed:\n%s", ch.New)
	}
	// Placeholders written by older versions import as references.
	im, err := c.Import("config.toml", []byte("[mcp_servers.k]\ncommand = \"srv\"\nenv = { API_KEY = \"<MY_KEY>\", T = \"Bearer <TOK>\" }\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if e := im.Servers[0].Env; e["API_KEY"] != "${env:MY_KEY}" || e["T"] != "Bearer ${env:TOK}" {
		t.Errorf("imported env %v", e)
	}
	if strings.Contains(strings.Join(im.Warnings, "\n"), "literal secret") {
		t.Errorf("a placeholder imported as a literal secret: %v", im.Warnings)
	}
	// <hidden> (a pasted export) is no variable: kept, and said.
	im, err = c.Import("config.toml", []byte("[mcp_servers.k]\ncommand = \"srv\"\nenv = { API_KEY = \"<hidden>\" }\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if e := im.Servers[0].Env; e["API_KEY"] != Hidden || !strings.Contains(strings.Join(im.Warnings, "\n"), "not a working value") {
		t.Errorf("imported env %v, warnings %v", e, im.Warnings)
	}
}

// TestReferenceDefaults: ${VAR:-default} imports as ${env:VAR:-default} and
// exports in the client's form, or loses the default with a warning.
func TestReferenceDefaults(t *testing.T) {
	cc, _ := Lookup("claude-code")
	im, err := cc.Import("f", []byte(`{"mcpServers":{"d":{"type":"http","url":"https://${HOST:-h.example}/mcp","headers":{"X-Region":"${REGION:-eu}"}}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := im.Servers[0]
	if s.URL != "https://${env:HOST:-h.example}/mcp" || s.Headers["X-Region"] != "${env:REGION:-eu}" {
		t.Fatalf("imported %+v", s)
	}
	out, err := s.Expand(func(string) (string, bool) { return "", false })
	if err != nil || out.URL != "https://h.example/mcp" || out.Headers["X-Region"] != "eu" {
		t.Errorf("expanded %+v, %v", out, err)
	}
	r, err := cc.Snippet(im.Servers, installOpts())
	if err != nil || !strings.Contains(string(r.Data), `"https://${HOST:-h.example}/mcp"`) || !strings.Contains(string(r.Data), `"${REGION:-eu}"`) {
		t.Errorf("claude snippet: %v\n%s", err, r.Data)
	}
	cur, _ := Lookup("cursor")
	r, _ = cur.Snippet(im.Servers, installOpts())
	if !strings.Contains(string(r.Data), `"${env:REGION}"`) || !strings.Contains(strings.Join(r.Warnings, "\n"), "drops the default") {
		t.Errorf("cursor snippet: %v\n%s", r.Warnings, r.Data)
	}
}

// TestGeminiURLWithoutType: Gemini CLI reads a url without type as
// Streamable HTTP (falling back to SSE); Cline and Roo read it as SSE.
func TestGeminiURLWithoutType(t *testing.T) {
	for id, want := range map[string]registry.Transport{"gemini": registry.TransportHTTP, "cline": registry.TransportSSE, "roo": registry.TransportSSE} {
		c, _ := Lookup(id)
		im, err := c.Import("f", []byte(`{"mcpServers":{"r":{"url":"https://h.example/mcp"}}}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := im.Servers[0].Transport(); got != want {
			t.Errorf("%s: transport %s, want %s", id, got, want)
		}
	}
}

// TestGeminiCLIWarnsAboutResolvedReferences: `gemini mcp add` writes the
// values of references back into settings.json; the printed lines say so.
func TestGeminiCLIWarnsAboutResolvedReferences(t *testing.T) {
	c, _ := Lookup("gemini")
	r, err := c.CLI([]*registry.Server{cases()["stdio"]}, installOpts())
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(r.Warnings, "\n"); !strings.Contains(w, "mcptray install --client gemini") || !strings.Contains(w, "plain-text secrets") {
		t.Errorf("warnings: %s", w)
	}
}

func TestLookupAliasesAndTypos(t *testing.T) {
	for in, want := range map[string]string{
		"claude": "claude-code", "Claude Code": "claude-code", "claude_desktop": "claude-desktop", "gemini-cli": "gemini",
		"GEMINI": "gemini", "vs-code": "vscode", "roo-code": "roo", "lm-studio": "lmstudio", "openai-codex": "codex",
		"Roo Code": "roo", "codex": "codex",
	} {
		c, err := Lookup(in)
		if err != nil || c.ID != want {
			t.Errorf("Lookup(%q) = %v, %v; want %s", in, c, err, want)
		}
	}
	for in, want := range map[string]string{"gemni": "gemini", "cursr": "cursor", "claude-cod": "claude-code", "wndsurf": "windsurf", "xyzzy": ""} {
		_, err := Lookup(in)
		var ue *UnknownClientError
		if !errors.As(err, &ue) || ue.Suggest != want {
			t.Errorf("Lookup(%q) = %v, want suggestion %q", in, err, want)
		}
		if want != "" && !strings.Contains(err.Error(), "did you mean "+want+"?") {
			t.Errorf("message: %v", err)
		}
	}
}

// TestKeyringReferences: no client can read mcptray's keyring, so a direct
// entry of a server with a ${keyring:NAME} reference goes through mcptray
// (or, with no route to it, is refused naming the server), never with a
// stand-in value; it is written as the secret's value only when secrets
// are revealed; reading it (config list, diffs) keeps the reference
// visible.
func TestKeyringReferences(t *testing.T) {
	s := []*registry.Server{{Name: "gh", Command: "srv", Env: map[string]string{"GITHUB_TOKEN": "${keyring:gh-token}"}},
		{Name: "r", URL: "https://h.example/mcp", Headers: map[string]string{"Authorization": "Bearer ${keyring:r-tok}"}},
		{Name: "plain", Command: "plain-srv"}}
	for _, id := range []string{"claude-code", "gemini", "codex", "cursor"} {
		c, _ := Lookup(id)
		if _, err := c.Snippet(s, installOpts()); err == nil || !strings.Contains(err.Error(), "servers.gh refers to ${keyring:gh-token}") {
			t.Errorf("%s: a direct entry with a keyring secret and no way through mcptray: %v; want a refusal naming the server", id, err)
		}
		o := installOpts()
		o.SecretsVia = &Gateway{Command: "/opt/mcptray"}
		r, err := c.Snippet(s, o)
		if err != nil {
			t.Fatal(err)
		}
		out := string(r.Data)
		if strings.Contains(out, "${keyring:") || strings.Contains(out, Hidden) || strings.Contains(out, "Bearer") {
			t.Errorf("%s: keyring reference written as data:\n%s", id, out)
		}
		for _, want := range []string{"/opt/mcptray", "plain-srv"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: no %s in\n%s", id, want, out)
			}
		}
		if strings.Contains(out, "GITHUB_TOKEN") {
			t.Errorf("%s: gh's entry carries its env instead of going through mcptray:\n%s", id, out)
		}
		w := strings.Join(r.Warnings, "\n")
		if !strings.Contains(w, "servers.gh refers to ${keyring:gh-token}") || !strings.Contains(w, "goes through mcptray") {
			t.Errorf("%s: warnings:\n%s", id, w)
		}
		o = installOpts()
		o.RevealSecrets = true
		o.Secret = func(name string) (string, error) {
			if name == "gh-token" || name == "r-tok" {
				return "value-of-" + name, nil
			}
			return "", registry.ErrSecretNotFound
		}
		r, err = c.Snippet(s, o)
		if err != nil {
			t.Fatal(err)
		}
		if out := string(r.Data); !strings.Contains(out, "value-of-gh-token") || !strings.Contains(out, "value-of-r-tok") {
			t.Errorf("%s: revealed keyring references:\n%s", id, out)
		}
	}
	if m := registry.MaskSecret("Bearer ${keyring:r-tok}"); m != "Bearer ${keyring:r-tok}" {
		t.Errorf("MaskSecret hid a reference: %q", m)
	}
	if sec := s[0].Secrets(); len(sec) != 0 {
		t.Errorf("a reference counted as a secret: %q", sec)
	}
}
