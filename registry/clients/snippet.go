package clients

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/tailscale/hujson"

	"mcptray/internal/lazyre"
)

// SnippetName names an entry pasted without a name of its own.
const SnippetName = "pasted"

// snippetRemedies are the fixes a snippet's warnings offer: what is added
// from it is not imported, so no --keyring applies.
var snippetRemedies = Remedies{
	Reveal:  CommandLineRemedies.Reveal,
	Through: CommandLineRemedies.Through,
	Keyring: "keep it in the keyring once added (`mcptray secret set NAME`) and write ${keyring:NAME} in its place",
}

// ParseSnippet reads servers a person copied from an AI client's config or
// a README, in any shape mcptray imports: a whole file's JSON
// ({"mcpServers": {…}}, VS Code's {"servers": {…}}), a named entry
// ("github": {…}), one entry ({"command": …} or {"url": …}), Codex TOML
// ([mcp_servers.NAME] tables), or command lines (`npx -y PACKAGE`, one
// server a line, KEY=VALUE words before it set its environment; a line that
// is a URL is a remote server). The client importers read it, so secret
// references and the mcp-remote bridge come back as Import gives them.
func ParseSnippet(text string) (*Imported, error) {
	text = strings.TrimSpace(strings.TrimPrefix(text, "\ufeff"))
	if text == "" {
		return nil, errors.New("nothing to read: paste a server's entry from a client's config, or a command line such as npx -y PACKAGE")
	}
	clientID, data, err := snippetSource(text)
	if err != nil {
		return nil, err
	}
	c, err := Lookup(clientID)
	if err != nil {
		return nil, err
	}
	im, err := c.Import("the pasted text", []byte(data), &Options{Remedies: &snippetRemedies})
	if err != nil {
		return nil, err
	}
	if len(im.Servers) == 0 {
		if len(im.Warnings) > 0 {
			return nil, errors.New(strings.Join(im.Warnings, "; "))
		}
		return nil, errors.New("the pasted text holds no server entry")
	}
	return im, nil
}

// snippetSource says which client's importer reads text, and the file
// content to give it.
func snippetSource(text string) (clientID, data string, err error) {
	obj := func(s string) map[string]any {
		std, err := hujson.Standardize([]byte(s))
		if err != nil {
			return nil
		}
		var m map[string]any
		if json.Unmarshal(std, &m) != nil {
			return nil
		}
		return m
	}
	switch {
	case strings.HasPrefix(text, "{") || strings.HasPrefix(text, `"`):
		m := obj(text)
		if m == nil {
			// `"github": {…}` as cut out of a file.
			if obj("{"+text+"}") != nil {
				return "claude-code", `{"mcpServers": {` + text + `}}`, nil
			}
			return "", "", errors.New(`the pasted text is not valid JSON: copy {"command": …} or {"url": …}, or a whole {"mcpServers": {…}}`)
		}
		_, hasMCP := m["mcpServers"]
		_, hasServers := m["servers"]
		_, hasCommand := m["command"]
		_, hasURL := m["url"]
		_, hasHTTP := m["httpUrl"]
		_, hasServerURL := m["serverUrl"]
		switch {
		case hasMCP:
			return "claude-code", text, nil // mcpServers, with ${VAR} references
		case hasServers:
			return "vscode", text, nil
		case hasCommand || hasURL || hasHTTP || hasServerURL:
			return "claude-code", `{"mcpServers": {"` + SnippetName + `": ` + text + `}}`, nil
		default:
			return "claude-code", `{"mcpServers": ` + text + `}`, nil
		}
	case strings.HasPrefix(text, "[") || strings.Contains(text, "[mcp_servers."):
		return "codex", text, nil
	}
	data, err = commandLines(text)
	return "claude-code", data, err
}

var envWordRE = lazyre.New(`^[A-Za-z_][A-Za-z0-9_]*=`)

// commandLines reads one server a line (a command line or a URL) into an
// mcpServers file, in line order.
func commandLines(text string) (string, error) {
	var b strings.Builder
	used := map[string]bool{}
	add := func(name string, entry map[string]any) {
		n := SanitizeName(name)
		for base, i := n, 2; used[n]; i++ {
			n = fmt.Sprintf("%s-%d", base, i)
		}
		used[n] = true
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		k, _ := json.Marshal(n)
		v, _ := json.Marshal(entry)
		b.Write(k)
		b.WriteString(": ")
		b.Write(v)
	}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		line = strings.TrimPrefix(line, "$ ")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		words, err := ShellSplit(line)
		if err != nil {
			return "", fmt.Errorf("line %d: %v", i+1, err)
		}
		env := map[string]string{}
		for len(words) > 0 && envWordRE().MatchString(words[0]) {
			k, v, _ := strings.Cut(words[0], "=")
			env[k] = v
			words = words[1:]
		}
		if len(words) == 0 {
			return "", fmt.Errorf("line %d: %q sets variables but runs no command", i+1, line)
		}
		if len(words) == 1 && (strings.HasPrefix(words[0], "https://") || strings.HasPrefix(words[0], "http://")) {
			add(urlName(words[0]), map[string]any{"url": words[0]})
			continue
		}
		entry := map[string]any{"command": words[0], "args": words[1:]}
		if len(env) > 0 {
			entry["env"] = env
		}
		add(commandName(words), entry)
	}
	if len(used) == 0 {
		return "", errors.New("the pasted text holds no command line")
	}
	return `{"mcpServers": {` + b.String() + `}}`, nil
}

// commandName names a server after what it runs: the package of npx, uvx,
// bunx, pipx run or docker run (without scope and version), else the
// command's file name.
func commandName(words []string) string {
	base := strings.TrimSuffix(path.Base(strings.ReplaceAll(words[0], `\`, "/")), ".cmd")
	base = strings.TrimSuffix(base, ".exe")
	rest := words[1:]
	switch base {
	case "npx", "bunx", "uvx", "pnpx":
	case "pnpm", "bun", "npm", "yarn":
		if len(rest) > 0 && (rest[0] == "dlx" || rest[0] == "x" || rest[0] == "exec") {
			rest = rest[1:]
		} else {
			return base
		}
	case "pipx", "uv":
		if len(rest) > 0 && (rest[0] == "run" || rest[0] == "tool") {
			rest = rest[1:]
			if len(rest) > 0 && rest[0] == "run" {
				rest = rest[1:]
			}
		} else {
			return base
		}
	case "docker", "podman":
		if len(rest) == 0 || rest[0] != "run" {
			return base
		}
		// The image is the first word that is not a flag or a flag's value.
		for i := 1; i < len(rest); i++ {
			w := rest[i]
			if strings.HasPrefix(w, "-") {
				if !strings.Contains(w, "=") && flagTakesValue(w) {
					i++
				}
				continue
			}
			img := path.Base(w)
			img, _, _ = strings.Cut(img, ":")
			img, _, _ = strings.Cut(img, "@")
			return img
		}
		return base
	default:
		return base
	}
	for _, w := range rest {
		if strings.HasPrefix(w, "-") {
			continue
		}
		return packageName(w)
	}
	return base
}

// flagTakesValue: docker run's flags that take the next word.
func flagTakesValue(f string) bool {
	switch f {
	case "-e", "--env", "-v", "--volume", "--mount", "--name", "--network", "-p", "--publish", "-w", "--workdir", "--env-file", "-u", "--user", "--entrypoint", "--platform":
		return true
	}
	return false
}

// packageName is the bare name of @scope/name@1.2, name==1.2, name[extra].
func packageName(pkg string) string {
	p := pkg
	if i := strings.LastIndexByte(p, '@'); i > 0 {
		p = p[:i]
	}
	p = p[strings.LastIndexByte(p, '/')+1:]
	for _, sep := range []string{"==", ">=", "[", "~="} {
		p, _, _ = strings.Cut(p, sep)
	}
	if p == "" {
		return pkg
	}
	return p
}

// urlName names a remote server after its host's first label that is not
// "mcp", "api" or "www".
func urlName(raw string) string {
	host := raw[strings.Index(raw, "://")+3:]
	host, _, _ = strings.Cut(host, "/")
	host, _, _ = strings.Cut(host, ":")
	for _, l := range strings.Split(host, ".") {
		if l != "mcp" && l != "api" && l != "www" && l != "" {
			return l
		}
	}
	return "remote"
}

// ShellSplit splits a POSIX shell command line into words: 'single' and
// "double" quotes, backslash escapes; no expansion (a $VAR stays as
// written).
func ShellSplit(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\\':
			if i+1 < len(line) {
				i++
				cur.WriteByte(line[i])
			}
			inWord = true
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("a ' quote is not closed")
			}
			cur.WriteString(line[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) && strings.IndexByte(`"\$`+"`", line[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(line[i])
			}
			if i >= len(line) {
				return nil, errors.New(`a " quote is not closed`)
			}
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
