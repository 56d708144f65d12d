// Package clients knows every AI client's MCP configuration format: where its
// file lives per OS and scope, the key that holds the servers, the shape of a
// stdio and a remote entry, its secret-reference syntax, whether remote
// servers need the mcp-remote bridge, and its add command or install link.
// From that data it exports snippets, merges entries into a client's real
// file (keeping every other key, and comments in JSONC files), and imports a
// client's entries back into registry servers.
//
// Each client is a row of data ([Client]) read by one writer per file format,
// not a copy of code per client. Resolving a command on the login-shell PATH
// is not done here: callers pass [Options.Resolve].
package clients

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"runtime"
	"slices"
	"strings"

	"mcptray/registry"
)

// Format is a client file's syntax.
type Format string

const (
	FormatJSON  Format = "json"  // strict JSON
	FormatJSONC Format = "jsonc" // JSON with comments and trailing commas; comments are kept
	FormatYAML  Format = "yaml"
	FormatTOML  Format = "toml"
)

// Scope says which of a client's files an entry goes into.
type Scope string

const (
	ScopeUser    Scope = "user"    // the person's own file, for every project
	ScopeProject Scope = "project" // a file inside the project folder
	ScopeLocal   Scope = "local"   // Claude Code: this project, in the user's file
)

// shape is how one client spells an entry. Empty key names mean the client
// has no such field.
type shape struct {
	command      string // "command" or "cmd"
	commandArray bool   // opencode: command is one array, program first
	args         string
	alwaysArgs   bool   // write args even when empty (Zed)
	env          string // "env", "envs" or "environment"
	cwd          string
	stdioType    string // the type value of a stdio entry; "" writes none
	url          string // "url", "serverUrl" or "uri"
	// httpURL is the key of a Streamable HTTP server's URL where the client
	// tells the transports apart by key, not by type (Qwen Code: httpUrl;
	// its url means SSE); "" when url serves both.
	httpURL     string
	httpType    string // the type value of a Streamable HTTP entry; "" writes none
	sseType     string // the type value of an SSE entry; "" writes none
	noSSE       bool   // the client cannot speak SSE: bridge through mcp-remote
	headers     []string
	name        bool // the entry repeats its name in a "name" field
	description bool // the entry has a "description" the client shows
	extra       obj  // constant fields every entry carries
	codex       bool // Codex's env_vars / bearer_token_env_var / env_http_headers
}

// Client is one AI client's configuration format.
type Client struct {
	ID     string
	Name   string
	Format Format
	// Key is the path of the object (list, for Continue) holding the entries.
	Key []string
	// List: entries are a list of objects with a name (Continue), not a map.
	List bool
	// Bridge: the client's file runs stdio servers only; remote servers go
	// through `npx -y mcp-remote URL`.
	Bridge bool
	// Ref turns a variable name into the client's own reference syntax; nil
	// when the client has none (a placeholder is written instead).
	Ref func(name string) string
	// RefDefault is the client's reference with a default value
	// (${VAR:-default}); nil when it has none.
	RefDefault func(name, def string) string
	// unref finds the client's references in a string (for import).
	unref []refPattern
	// Doc names the documentation the format follows.
	Doc string
	// Unverified says which parts of the format are not confirmed by the
	// client's own documentation ("" when all are).
	Unverified string
	// Notes are facts a person needs when pasting the output.
	Notes []string

	shape shape
	// noTrailingCommas: the client reads comments but refuses trailing
	// commas (Gemini CLI): such a file is refused, as the client would.
	noTrailingCommas bool
	paths            func(os string, scope Scope, e *pathEnv) (string, error)
	scopes           []Scope
	// newFile is the content of a file that does not exist yet.
	newFile string
	cli     func(c *Client, b *built, opts *Options) ([]string, error)
	link    func(c *Client, b *built) (string, error)
}

// Scopes lists the scopes the client has files for, default first.
func (c *Client) Scopes() []Scope { return slices.Clone(c.scopes) }

// HasCLI reports whether the client has an add command to export.
func (c *Client) HasCLI() bool { return c.cli != nil }

// HasDeepLink reports whether the client has an install link.
func (c *Client) HasDeepLink() bool { return c.link != nil }

// HasFile reports whether the client has a file to install into.
func (c *Client) HasFile() bool { return c.paths != nil }

// ErrUnsupported is returned for an output the client does not have (no CLI,
// no deep link, no file).
var ErrUnsupported = errors.New("not supported by this client")

// UnknownClientError is an unknown client id.
type UnknownClientError struct {
	ID string
	// Suggest is the nearest known id ("" when none is near).
	Suggest string
}

func (e *UnknownClientError) Error() string {
	if e.Suggest != "" {
		return fmt.Sprintf("unknown client %q: did you mean %s? (known: %s)", e.ID, e.Suggest, strings.Join(IDs(), ", "))
	}
	return fmt.Sprintf("unknown client %q (known: %s)", e.ID, strings.Join(IDs(), ", "))
}

// All returns every client, in a stable order.
func All() []*Client { return slices.Clone(all) }

// IDs returns every client id.
func IDs() []string {
	ids := make([]string, len(all))
	for i, c := range all {
		ids[i] = c.ID
	}
	return ids
}

// aliases are the other names people type for a client: its product name,
// its npm package or binary, the id with other separators. "claude" is
// Claude Code, the one with a command line.
var aliases = map[string]string{
	"claude": "claude-code", "claudecode": "claude-code", "claude-cli": "claude-code",
	"claudedesktop": "claude-desktop", "claude-app": "claude-desktop",
	"gemini-cli": "gemini", "geminicli": "gemini", "google-gemini": "gemini",
	"codex-cli": "codex", "openai-codex": "codex", "openai": "codex",
	"vs-code": "vscode", "code": "vscode", "visual-studio-code": "vscode", "vscode-copilot": "vscode", "copilot-vscode": "vscode",
	"copilot-cli": "copilot", "github-copilot": "copilot", "github-copilot-cli": "copilot", "gh-copilot": "copilot",
	"qwen-code": "qwen", "qwencode": "qwen", "qwen-cli": "qwen",
	"roo-code": "roo", "roocode": "roo", "roo-cline": "roo",
	"cline-bot":    "cline",
	"continue-dev": "continue",
	"lm-studio":    "lmstudio",
	"open-code":    "opencode", "opencode-ai": "opencode",
	"goose-cli": "goose", "block-goose": "goose",
	"zed-editor": "zed",
	"codeium":    "windsurf",
	"json":       "generic", "mcpservers": "generic",
}

// Lookup finds a client by id or a common alias ("claude", "gemini-cli",
// "Claude Code"), ignoring case; an unknown name suggests the nearest id.
func Lookup(id string) (*Client, error) {
	n := strings.Join(strings.FieldsFunc(strings.ToLower(strings.TrimSpace(id)), func(r rune) bool {
		return r == ' ' || r == '_' || r == '-' || r == '.'
	}), "-")
	if a, ok := aliases[n]; ok {
		n = a
	}
	for _, c := range all {
		if c.ID == n || strings.ReplaceAll(c.ID, "-", "") == strings.ReplaceAll(n, "-", "") ||
			strings.EqualFold(strings.ReplaceAll(c.Name, " ", "-"), n) {
			return c, nil
		}
	}
	return nil, &UnknownClientError{ID: id, Suggest: nearestID(n)}
}

// nearestID is the id (or alias's id) closest to n by edit distance, when it
// is close enough to be a typo.
func nearestID(n string) string {
	best, bestD := "", 0
	consider := func(name, id string) {
		d := registry.EditDistance(n, name)
		if d <= max(1, min(len(name), len(n))/3) && (best == "" || d < bestD) {
			best, bestD = id, d
		}
	}
	for _, c := range all {
		consider(c.ID, c.ID)
	}
	for _, a := range slices.Sorted(maps.Keys(aliases)) {
		consider(a, aliases[a])
	}
	return best
}

// Options tunes export, install and import. Nil means defaults.
type Options struct {
	// OS is the target operating system: "linux", "darwin" or "windows"
	// (default: this machine's).
	OS string
	// Scope picks the file (default: the client's first scope, user).
	Scope Scope
	// ProjectDir is the project folder for project and local scopes
	// (default: none; those scopes then fail).
	ProjectDir string
	// Home, Getenv: the target's home folder and environment, for paths
	// (%APPDATA%, $XDG_CONFIG_HOME, $CODEX_HOME).
	Home   string
	Getenv func(string) string
	// Glob finds files (Claude Desktop's MSIX folder on Windows); nil
	// disables probing.
	Glob func(pattern string) ([]string, error)
	// Exists reports whether a file is there, for clients that read one of
	// several names (opencode.jsonc or opencode.json). Nil: this machine's
	// file system when OS is HostOS, else no file exists.
	Exists func(path string) bool
	// Resolve turns a bare command into an absolute path (GUI clients lack
	// the login shell's PATH). Nil, or a target OS other than HostOS, leaves
	// commands as written.
	Resolve func(cmd string) (string, error)
	// HostOS is the OS Resolve looks on (default: runtime.GOOS).
	HostOS string
	// RevealSecrets writes literal secrets unmasked and, for a client
	// without reference syntax, the values of ${env:VAR} references (looked
	// up with LookupEnv).
	RevealSecrets bool
	LookupEnv     func(string) (string, bool)
	// Secret reads a ${keyring:NAME} secret when secrets are revealed (no
	// client can read mcptray's keyring); nil: such references are hidden.
	Secret registry.SecretFunc
	// Gateway, when set, writes every entry through mcptray (see
	// [Gateway]); nil writes direct entries, which run or reach the server
	// without mcptray.
	Gateway *Gateway
	// SecretsVia, for direct entries (Gateway nil), is the route of a
	// server whose values refer to ${keyring:NAME}: no client can read
	// mcptray's keyring, so its entry goes through mcptray, and the secret
	// never leaves it. Nil refuses such a server (naming it), unless
	// RevealSecrets writes the secret's value.
	SecretsVia *Gateway
	// Remedies word the fixes warnings and errors offer in the terms of
	// the front end that shows them; nil: the command line's flags.
	Remedies *Remedies
}

// Remedies are the fixes a warning can offer, each a clause that follows
// "or": the command line passes a flag, the window ticks a box.
type Remedies struct {
	Reveal  string // write secrets' values: "pass --reveal-secrets"
	Through string // route an entry through mcptray: "write it through mcptray (without --direct)"
	Keyring string // keep imported literal secrets in the keyring: "import with --keyring"
}

// CommandLineRemedies are the command line's fixes.
var CommandLineRemedies = Remedies{
	Reveal:  "pass --reveal-secrets",
	Through: "write it through mcptray (without --direct)",
	Keyring: "import with --keyring",
}

// remedies are o's, or the command line's.
func (o *Options) remedies() *Remedies {
	if o == nil || o.Remedies == nil {
		return &CommandLineRemedies
	}
	return o.Remedies
}

func (o *Options) withDefaults() *Options {
	var out Options
	if o != nil {
		out = *o
	}
	if out.OS == "" {
		out.OS = runtime.GOOS
	}
	if out.HostOS == "" {
		out.HostOS = runtime.GOOS
	}
	if out.Getenv == nil {
		out.Getenv = func(string) string { return "" }
	}
	if out.LookupEnv == nil {
		out.LookupEnv = func(string) (string, bool) { return "", false }
	}
	if out.Exists == nil {
		if out.OS == out.HostOS {
			out.Exists = func(p string) bool { _, err := os.Stat(p); return err == nil }
		} else {
			out.Exists = func(string) bool { return false }
		}
	}
	return &out
}

// CheckOS validates a target OS name.
func CheckOS(os string) error {
	switch os {
	case "linux", "darwin", "windows":
		return nil
	}
	return fmt.Errorf("unknown OS %q (want linux, darwin or windows)", os)
}

// pathEnv is what client paths are built from.
type pathEnv struct {
	home, project string
	getenv        func(string) string
	glob          func(string) ([]string, error)
	exists        func(string) bool
}

// join builds a path for the target OS: backslashes on Windows.
func join(os string, parts ...string) string {
	p := path.Join(parts...)
	if os == "windows" {
		p = strings.ReplaceAll(p, "/", `\`)
	}
	return p
}

// appData is %APPDATA% on Windows.
func (e *pathEnv) appData() string {
	if v := e.getenv("APPDATA"); v != "" {
		return strings.ReplaceAll(v, `\`, "/")
	}
	return e.home + "/AppData/Roaming"
}

// xdgConfig is $XDG_CONFIG_HOME, else ~/.config.
func (e *pathEnv) xdgConfig() string {
	if v := e.getenv("XDG_CONFIG_HOME"); v != "" {
		return v
	}
	return e.home + "/.config"
}

// vscodeUser is VS Code's user folder.
func (e *pathEnv) vscodeUser(os string) string {
	switch os {
	case "darwin":
		return e.home + "/Library/Application Support/Code/User"
	case "windows":
		return e.appData() + "/Code/User"
	}
	return e.xdgConfig() + "/Code/User"
}

// Path is the file the client reads for opts' OS and scope.
func (c *Client) Path(opts *Options) (string, error) {
	o := opts.withDefaults()
	if err := CheckOS(o.OS); err != nil {
		return "", err
	}
	if c.paths == nil {
		return "", fmt.Errorf("%s has no config file: %w", c.ID, ErrUnsupported)
	}
	scope := o.Scope
	if scope == "" {
		scope = c.scopes[0]
	}
	if !slices.Contains(c.scopes, scope) {
		var s []string
		for _, sc := range c.scopes {
			s = append(s, string(sc))
		}
		return "", fmt.Errorf("%s has no %s scope (it has: %s)", c.ID, scope, strings.Join(s, ", "))
	}
	home := o.Home
	if o.OS == "windows" {
		home = strings.ReplaceAll(home, `\`, "/")
	}
	if home == "" && scope != ScopeProject {
		return "", errors.New("no home folder")
	}
	if (scope == ScopeProject || scope == ScopeLocal) && o.ProjectDir == "" {
		return "", fmt.Errorf("the %s scope needs a project folder", scope)
	}
	e := &pathEnv{home: home, project: strings.ReplaceAll(o.ProjectDir, `\`, "/"), getenv: o.Getenv, glob: o.Glob, exists: o.Exists}
	return c.paths(o.OS, scope, e)
}

// keyPath is the key path of the entries for a scope: Claude Code's local
// scope lives under projects[<dir>].
func (c *Client) keyPath(o *Options) []string {
	if c.ID == "claude-code" && o.Scope == ScopeLocal {
		return []string{"projects", o.ProjectDir, "mcpServers"}
	}
	return c.Key
}

// refPattern turns a client's reference back into a variable name.
type refPattern struct {
	prefix, suffix string
	bare           bool // $VAR without braces (Gemini)
}
