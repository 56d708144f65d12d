package clients

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"mcptray/registry"
)

// CLI renders the client's own add command for each server, one per line,
// quoted for a POSIX shell.
func (c *Client) CLI(servers []*registry.Server, opts *Options) (*Result, error) {
	if c.cli == nil {
		return nil, fmt.Errorf("%s has no add command: %w", c.ID, ErrUnsupported)
	}
	o := opts.withDefaults()
	if err := CheckOS(o.OS); err != nil {
		return nil, err
	}
	if o.Scope == "" {
		o.Scope = c.scopes[0]
	}
	bs, b, err := c.build(servers, o, true)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	for _, s := range bs {
		words, err := c.cli(c, s, o)
		if err != nil {
			return nil, err
		}
		out.WriteString(ShellJoin(words) + "\n")
		if c.ID == "codex" && (len(s.envVars) > 0 || len(s.srv.Headers) > 0 || len(s.envHeaders) > 0) {
			b.warn("codex mcp add cannot set env_vars or HTTP headers: servers.%s needs them added by hand (see --format snippet)", s.name)
		}
		if c.ID == "gemini" || c.ID == "qwen" {
			for k, v := range s.srv.Env {
				if strings.Contains(v, "=") {
					b.warn("gemini mcp add cuts -e values at a second '=': servers.%s env.%s needs fixing by hand", s.name, k)
				}
			}
		}
	}
	if c.ID == "gemini" || c.ID == "qwen" {
		// Seen with Gemini CLI 0.61 and Qwen Code 0.24.4: `mcp add` loads
		// settings.json with every reference resolved and writes all of it
		// back.
		b.warn("%s mcp add rewrites all of settings.json with every $VAR and ${VAR} resolved to its value in the shell that runs it: references already in the file (and in these lines) become plain-text secrets. Prefer `mcptray install --client %s`, which keeps them references.", c.ID, c.ID)
	}
	return b.result(out.Bytes()), nil
}

// DeepLinks renders the client's install link for each server, one per
// line.
func (c *Client) DeepLinks(servers []*registry.Server, opts *Options) (*Result, error) {
	if c.link == nil {
		return nil, fmt.Errorf("%s has no install link: %w", c.ID, ErrUnsupported)
	}
	o := opts.withDefaults()
	bs, b, err := c.build(servers, o, true)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	for _, s := range bs {
		l, err := c.link(c, s)
		if err != nil {
			return nil, err
		}
		if c.ID == "goose" && len(s.srv.Headers) > 0 {
			b.warn("goose install links carry no headers: add servers.%s headers in Goose after installing", s.name)
		}
		out.WriteString(l + "\n")
	}
	return b.result(out.Bytes()), nil
}

func envFlags(flag string, env map[string]string) []string {
	var out []string
	for _, k := range sortedKeys(env) {
		out = append(out, flag, k+"="+env[k])
	}
	return out
}

func headerFlags(flag string, h map[string]string) []string {
	var out []string
	for _, k := range sortedKeys(h) {
		out = append(out, flag, k+": "+h[k])
	}
	return out
}

// claudeCLI puts the name right after "add": Claude's --env and --header
// take several values each, so a name after them is read as one more
// ("Invalid environment variable format: NAME").
func claudeCLI(_ *Client, b *built, o *Options) ([]string, error) {
	s := b.srv
	w := []string{"claude", "mcp", "add", b.name}
	if s.IsRemote() {
		w = append(w, s.URL, "--transport", string(s.Transport()), "--scope", string(o.Scope))
		return append(w, headerFlags("--header", s.Headers)...), nil
	}
	w = append(w, "--transport", "stdio", "--scope", string(o.Scope))
	w = append(w, envFlags("--env", s.Env)...)
	w = append(w, "--", s.Command)
	return append(w, s.Args...), nil
}

func codexCLI(_ *Client, b *built, _ *Options) ([]string, error) {
	s := b.srv
	w := []string{"codex", "mcp", "add", b.name}
	if s.IsRemote() {
		w = append(w, "--url", s.URL)
		if b.bearerVar != "" {
			w = append(w, "--bearer-token-env-var", b.bearerVar)
		}
		return w, nil
	}
	w = append(w, envFlags("--env", s.Env)...)
	w = append(w, "--", s.Command)
	return append(w, s.Args...), nil
}

func geminiCLI(_ *Client, b *built, o *Options) ([]string, error) {
	return geminiLike("gemini", b, o), nil
}

// qwenCLI is Gemini's add command under Qwen Code's name (verified with
// 0.24.4: the same options, `--` and --description included).
func qwenCLI(_ *Client, b *built, o *Options) ([]string, error) {
	return geminiLike("qwen", b, o), nil
}

func geminiLike(bin string, b *built, o *Options) []string {
	s := b.srv
	scope := "user"
	if o.Scope == ScopeProject {
		scope = "project"
	}
	w := []string{bin, "mcp", "add", "--scope", scope}
	if s.Description != "" {
		w = append(w, "--description", s.Description)
	}
	if s.IsRemote() {
		w = append(w, "--transport", string(s.Transport()))
		w = append(w, headerFlags("--header", s.Headers)...)
		return append(w, b.name, s.URL)
	}
	w = append(w, envFlags("--env", s.Env)...)
	w = append(w, b.name, s.Command)
	if len(s.Args) > 0 {
		// After "--" gemini passes everything on, even words that look like
		// its own flags (-y).
		w = append(append(w, "--"), s.Args...)
	}
	return w
}

// copilotCLI: `copilot mcp add` takes one value per --env and --header and
// the command after "--" (verified with 1.0.102).
func copilotCLI(_ *Client, b *built, _ *Options) ([]string, error) {
	s := b.srv
	w := []string{"copilot", "mcp", "add"}
	if s.IsRemote() {
		w = append(w, "--transport", string(s.Transport()))
		w = append(w, headerFlags("--header", s.Headers)...)
		return append(w, b.name, s.URL), nil
	}
	w = append(w, envFlags("--env", s.Env)...)
	w = append(w, b.name, "--", s.Command)
	return append(w, s.Args...), nil
}

func vscodeCLI(_ *Client, b *built, _ *Options) ([]string, error) {
	return []string{"code", "--add-mcp", compactJSON(append(obj{{"name", b.name}}, b.entry...))}, nil
}

func compactJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSuffix(buf.String(), "\n")
}

func cursorLink(_ *Client, b *built) (string, error) {
	cfg := base64.StdEncoding.EncodeToString([]byte(compactJSON(b.entry)))
	return "cursor://anysphere.cursor-deeplink/mcp/install?name=" + url.QueryEscape(b.name) + "&config=" + url.QueryEscape(cfg), nil
}

func lmstudioLink(_ *Client, b *built) (string, error) {
	cfg := base64.StdEncoding.EncodeToString([]byte(compactJSON(b.entry)))
	return "lmstudio://add_mcp?name=" + url.QueryEscape(b.name) + "&config=" + url.QueryEscape(cfg), nil
}

func vscodeLink(_ *Client, b *built) (string, error) {
	return "vscode:mcp/install?" + encodeURIComponent(compactJSON(append(obj{{"name", b.name}}, b.entry...))), nil
}

func gooseLink(_ *Client, b *built) (string, error) {
	s := b.srv
	q := url.Values{}
	if s.IsRemote() {
		q.Set("url", s.URL)
		q.Set("type", "streamable_http")
	} else {
		q.Set("cmd", s.Command)
		q["arg"] = s.Args
		for _, k := range sortedKeys(s.Env) {
			q.Add("env", k+"="+k)
		}
	}
	q.Set("id", b.name)
	q.Set("name", b.name)
	desc := s.Description
	if desc == "" {
		desc = b.name + " MCP server"
	}
	q.Set("description", desc)
	return "goose://extension?" + q.Encode(), nil
}

// encodeURIComponent escapes like JavaScript's function of that name, which
// is what VS Code's link handler decodes.
func encodeURIComponent(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_.!~*'()", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// ShellQuote quotes s for a POSIX shell when it needs it. Single quotes keep
// ${VAR} references for the client to expand, not the shell.
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./-_", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}

// ShellJoin quotes and joins words for a POSIX shell.
func ShellJoin(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = ShellQuote(w)
	}
	return strings.Join(q, " ")
}
