package clients

import (
	"strings"
	"testing"

	"mcptray/registry"
)

// TestDiffMasksOtherCredentials: the lines around mcptray's entries show the
// client file's other credentials (Claude Code keeps its API key and OAuth
// tokens in ~/.claude.json) masked, in every format, while references and
// ordinary values stay readable.
func TestDiffMasksOtherCredentials(t *testing.T) {
	files := map[string]string{
		"claude-code": `{
  "numStartups": 3,
  "primaryApiKey": "sk-ant-api03-primary",
  "oauthAccount": {
    "accessToken": "oauth-access-77",
    "emailAddress": "me@example.com"
  },
  "mcpServers": {}
}
`,
		"codex": `model = "o3"
api_key = "sk-codex-toml"
[mcp_servers.other]
command = "x"
`,
		"continue": `name: a
version: 1.0.0
schema: v1
apiKey: sk-yaml-secret
mcpServers: []
`,
	}
	leaks := []string{"sk-ant-api03-primary", "oauth-access-77", "sk-codex-toml", "sk-yaml-secret", "tok-in-args-1", "api-key-in-args"}
	mine := &registry.Server{Name: "mine", Command: "y", Args: []string{"--token=tok-in-args-1", "--api-key", "api-key-in-args", "--port", "8080"},
		Env: map[string]string{"AUTH": "Bearer ${env:T}"}}
	for id, src := range files {
		t.Run(id, func(t *testing.T) {
			c, _ := Lookup(id)
			ch, err := c.Merge("f", []byte(src), []*registry.Server{mine}, installOpts())
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(ch.New), "tok-in-args-1") {
				t.Fatalf("the file must get the real value:\n%s", ch.New)
			}
			for what, d := range map[string]string{"install": ch.Diff()} {
				for _, l := range leaks {
					if strings.Contains(d, l) {
						t.Errorf("%s diff shows %q:\n%s", what, l, d)
					}
				}
				if id == "claude-code" && (!strings.Contains(d, "me@example.com") || !strings.Contains(d, `"accessToken": "`+registry.Masked+`"`)) {
					t.Errorf("want the key masked and the email readable:\n%s", d)
				}
				if !strings.Contains(d, "8080") {
					t.Errorf("an ordinary argument is masked:\n%s", d)
				}
			}
			rm, err := c.Remove("f", ch.New, []string{"mine"}, installOpts())
			if err != nil {
				t.Fatal(err)
			}
			d := rm.Diff()
			for _, l := range leaks {
				if strings.Contains(d, l) {
					t.Errorf("uninstall diff shows %q:\n%s", l, d)
				}
			}
		})
	}
	// The client's own references in a secret-named key stay readable.
	c, _ := Lookup("claude-code")
	src := "{\n  \"apiKeyHelper\": \"${HELPER}\",\n  \"mcpServers\": {}\n}\n"
	ch, err := c.Merge("f", []byte(src), []*registry.Server{mine}, installOpts())
	if err != nil {
		t.Fatal(err)
	}
	if d := ch.Diff(); !strings.Contains(d, `"apiKeyHelper": "${HELPER}"`) {
		t.Errorf("a reference was masked:\n%s", d)
	}
}

// TestExportHidesSecretArgs: a secret given as an argument (--token=…,
// --api-key …) is <hidden> in a snippet and an add command, with a
// warning, and written as is with RevealSecrets.
func TestExportHidesSecretArgs(t *testing.T) {
	s := &registry.Server{Name: "gh", Command: "srv", Args: []string{"--token=tok-in-args-1", "--api-key", "api-key-in-args", "--port", "8080", "--key=${env:K}"}}
	for _, id := range []string{"claude-code", "codex", "opencode", "copilot"} {
		c, _ := Lookup(id)
		for _, out := range []func() (*Result, error){
			func() (*Result, error) { return c.Snippet([]*registry.Server{s}, goldenOpts("linux")) },
			func() (*Result, error) { return c.CLI([]*registry.Server{s}, goldenOpts("linux")) },
		} {
			res, err := out()
			if err != nil {
				if c.HasCLI() {
					t.Fatal(err)
				}
				continue
			}
			got := string(res.Data)
			if strings.Contains(got, "tok-in-args-1") || strings.Contains(got, "api-key-in-args") {
				t.Errorf("%s shows a secret argument:\n%s", id, got)
			}
			if !strings.Contains(got, "--token="+Hidden) || !strings.Contains(got, "8080") || !strings.Contains(got, "--key=") || strings.Contains(got, registry.Masked) {
				t.Errorf("%s: want --token=%s, --port 8080 and the reference kept:\n%s", id, Hidden, got)
			}
			if w := strings.Join(res.Warnings, "\n"); !strings.Contains(w, "servers.gh args[0]") {
				t.Errorf("%s: no warning names the hidden argument: %q", id, w)
			}
		}
		o := goldenOpts("linux")
		o.RevealSecrets = true
		res, err := c.Snippet([]*registry.Server{s}, o)
		if err != nil || !strings.Contains(string(res.Data), "tok-in-args-1") {
			t.Errorf("%s: revealed snippet lacks the value: %v\n%s", id, err, res.Data)
		}
	}
}
