package realclients

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"mcptray/registry"
)

// server is one entry of the servers.toml the tests install, in mcptray's
// own terms.
type server struct {
	name      string
	command   string
	args      []string
	env       map[string]string
	url       string
	transport string // stdio, http or sse
	headers   map[string]string
}

// fixture is what every client's tests share: the built mcptray, the
// clients, and the servers they are pointed at.
type fixture struct {
	mcptray, clients, node, everything, probeBin string
	key, token, literal                          string
	httpBase, httpURL, sseURL                    string // server-everything, streamable HTTP and SSE
}

const (
	// ownLiteral is a literal env value the clients write themselves.
	ownLiteral = "own-literal-4711"
	keyVar     = "MCPTRAY_RC_KEY" // holds testKey where the clients run
	testKey    = "rc-key-8f3a1c"
	testToken  = "rc-token-5d2e9b" // in tokenVar
	tokenVar   = "MCPTRAY_RC_TOKEN"
	mask       = "••••••"
)

func setup(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{
		clients: installedDir("MCPTRAY_TEST_CLIENTS", ".testclients"),
		key:     testKey, token: testToken, literal: "literal-value-77",
	}
	for _, c := range clientsUnderTest {
		if _, err := os.Stat(filepath.Join(f.clients, ".bin", c.bin)); err != nil {
			need(t, "%s is not installed under %s", c.bin, f.clients)
		}
	}
	var err error
	if f.node, err = exec.LookPath("node"); err != nil {
		need(t, "node is not on PATH")
	}
	f.everything = filepath.Join(installedDir("MCPTRAY_TEST_SERVERS", ".testservers"), "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(f.everything); err != nil {
		need(t, "server-everything is not installed: %v", err)
	}
	if testing.Short() {
		t.Skip("drives the real AI clients")
	}
	if f.probeBin, err = os.Executable(); err != nil {
		t.Fatal(err)
	}
	f.mcptray = buildMcptray(t, t.TempDir())
	for _, c := range clientsUnderTest {
		out, _, err := run(context.Background(), t.TempDir(), []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}, filepath.Join(f.clients, ".bin", c.bin), "--version")
		if err != nil {
			t.Fatalf("%s --version: %v", c.bin, err)
		}
		t.Logf("%s --version: %s", c.bin, strings.TrimSpace(out))
	}
	return f
}

// withRemotes is f with server-everything running for one client alone, in
// Streamable HTTP and SSE mode (every check opens sessions it never closes:
// the clients do not slow each other down through a shared server).
func (f *fixture) withRemotes(t *testing.T) *fixture {
	fc := *f
	fc.httpBase = startEverything(t, f.node, f.everything, "streamableHttp")
	fc.httpURL = fc.httpBase + "/mcp"
	fc.sseURL = startEverything(t, f.node, f.everything, "sse") + "/sse"
	return &fc
}

// servers are what mcptray installs: stdio servers with env references
// (the demo server, server-everything, and the probe, which records its
// environment), a Streamable HTTP server whose Authorization header is a
// reference (behind a proxy that refuses any other value), and an SSE one.
func (f *fixture) servers(authURL, probeOut string) []server {
	return []server{
		{name: "demo", command: f.mcptray, args: []string{"serve-demo"}, env: map[string]string{"API_KEY": "${env:" + keyVar + "}"}, transport: "stdio"},
		{name: "probe", command: f.probeBin, args: []string{probeArg, probeOut}, transport: "stdio",
			env: map[string]string{keyVar: "${env:" + keyVar + "}", "PROBE_RENAMED": "${env:" + keyVar + "}", "PROBE_LITERAL": f.literal}},
		{name: "everything", command: f.node, args: []string{f.everything, "stdio"}, env: map[string]string{"EVERYTHING_KEY": "${env:" + keyVar + "}"}, transport: "stdio"},
		{name: "remote", url: authURL, transport: "http", headers: map[string]string{"Authorization": "Bearer ${env:" + tokenVar + "}"}},
		{name: "legacy", url: f.sseURL, transport: "sse"},
	}
}

func serversTOML(servers []server) string {
	var b strings.Builder
	table := func(m map[string]string) string {
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(m)) {
			kv = append(kv, fmt.Sprintf("%s = %q", k, m[k]))
		}
		return "{ " + strings.Join(kv, ", ") + " }"
	}
	for _, s := range servers {
		fmt.Fprintf(&b, "[servers.%s]\n", s.name)
		if s.command != "" {
			fmt.Fprintf(&b, "command = %q\nargs = [", s.command)
			for i, a := range s.args {
				if i > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "%q", a)
			}
			b.WriteString("]\n")
			if len(s.env) > 0 {
				fmt.Fprintf(&b, "env = %s\n", table(s.env))
			}
		} else {
			fmt.Fprintf(&b, "url = %q\n", s.url)
			if s.transport == "sse" {
				b.WriteString("transport = \"sse\"\n")
			}
			if len(s.headers) > 0 {
				fmt.Fprintf(&b, "headers = %s\n", table(s.headers))
			}
		}
		b.WriteString("autostart = false\n\n")
	}
	return b.String()
}

func names(servers []server) []string {
	var out []string
	for _, s := range servers {
		out = append(out, s.name)
	}
	return out
}

// home is a throwaway home folder with a project folder in it, where one
// client and mcptray run as a new user's would.
type home struct {
	t     *testing.T
	f     *fixture
	c     *client
	dir   string
	proj  string
	cfg   string // servers.toml
	probe string // where the probe server records its environment
	// extraEnv is added to env.
	extraEnv []string
	auth     *authProxy
	servers  []server
}

func (f *fixture) newHome(t *testing.T, c *client) *home {
	t.Helper()
	dir := t.TempDir()
	h := &home{t: t, f: f, c: c, dir: dir, proj: filepath.Join(dir, "project"), cfg: filepath.Join(dir, "servers.toml"), probe: filepath.Join(dir, "probe.json")}
	h.auth = newAuthProxy(t, f.httpBase, "Bearer "+f.token)
	h.servers = f.servers(h.auth.URL+"/mcp", h.probe)
	if err := os.MkdirAll(h.proj, 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, h.cfg, serversTOML(h.servers))
	// Gemini CLI connects to no MCP server in a folder it does not trust.
	trust, _ := json.Marshal(map[string]string{h.proj: "TRUST_FOLDER"})
	writeFile(t, filepath.Join(dir, "trustedFolders.json"), string(trust))
	// Nor does Qwen Code, which keeps its list in its own folder.
	writeFile(t, filepath.Join(dir, ".qwen", "trustedFolders.json"), string(trust))
	// Codex bridges SSE through `npx -y mcp-remote`: the project folder has
	// it installed (from .testclients), so npx needs no download.
	if err := os.Symlink(f.clients, filepath.Join(h.proj, "node_modules")); err != nil {
		t.Fatal(err)
	}
	return h
}

// env is the environment every program runs with: nothing of the caller's
// but PATH (so no account or key of the person running the tests leaks in),
// the test's secrets, and what keeps the clients off the network.
func (h *home) env(secrets bool) []string {
	env := []string{
		"HOME=" + h.dir,
		"XDG_CONFIG_HOME=" + filepath.Join(h.dir, ".config"),
		"PATH=" + filepath.Dir(h.f.node) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"LANG=C.UTF-8",
		"TERM=dumb",
		"NO_COLOR=1",
		"CI=true",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"GEMINI_CLI_TRUSTED_FOLDERS_PATH=" + filepath.Join(h.dir, "trustedFolders.json"),
		// Gemini starts itself again in a child process (for a bigger heap)
		// unless told not to: half the CPU, the same MCP handling.
		"GEMINI_CLI_NO_RELAUNCH=true",
		"NO_BROWSER=1",
	}
	env = append(env, copilotEnv...)
	if tmp := os.Getenv("TMPDIR"); tmp != "" {
		env = append(env, "TMPDIR="+tmp)
	}
	env = append(env, h.extraEnv...)
	if secrets {
		env = append(env, keyVar+"="+h.f.key, tokenVar+"="+h.f.token)
	}
	return env
}

// client runs the client's own program with the secrets set.
func (h *home) client(args ...string) (stdout, stderr string) {
	h.t.Helper()
	return h.clientEnv(true, args...)
}

func (h *home) clientEnv(secrets bool, args ...string) (stdout, stderr string) {
	h.t.Helper()
	out, errOut, err := run(context.Background(), h.proj, h.env(secrets), filepath.Join(h.f.clients, ".bin", h.c.bin), args...)
	if err != nil {
		h.t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", h.c.bin, shellJoin(args), err, out, errOut)
	}
	return out, errOut
}

// mcptray runs mcptray; it fails the test on a non-zero exit. Whatever
// mcptray prints must not show a secret (install, uninstall and import
// print diffs of files that hold them), except where export is asked for
// the commands a person runs.
func (h *home) mcptray(args ...string) (stdout, stderr string) {
	h.t.Helper()
	out, errOut, err := run(context.Background(), h.proj, h.env(true), h.f.mcptray, args...)
	if err != nil {
		h.t.Fatalf("mcptray %s: %v\nstdout:\n%s\nstderr:\n%s", shellJoin(args), err, out, errOut)
	}
	for _, secret := range []string{h.f.key, h.f.token, h.f.literal, ownLiteral} {
		if strings.Contains(out+errOut, secret) {
			h.t.Errorf("mcptray %s printed the secret %q:\n%s%s", args[0], secret, out, errOut)
		}
	}
	return out, errOut
}

func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = a
		if strings.ContainsAny(a, " '\"$") || a == "" {
			q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(q, " ")
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// entry is a server as a client shows it, in the client's own terms.
type entry struct {
	transport string // stdio, http or sse
	command   string
	args      []string
	env       map[string]string
	envVars   []string // Codex: variables passed through by name
	url       string
	headers   map[string]string
	bearerVar string // Codex: bearer_token_env_var
	status    string // what the client says about the connection
}

func (e entry) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s", e.transport)
	if e.command != "" {
		fmt.Fprintf(&b, " %s %q", e.command, e.args)
	}
	if len(e.env) > 0 {
		fmt.Fprintf(&b, " env=%v", maskValues(e.env))
	}
	if len(e.envVars) > 0 {
		fmt.Fprintf(&b, " env_vars=%v", e.envVars)
	}
	if e.url != "" {
		fmt.Fprintf(&b, " %s", e.url)
	}
	if len(e.headers) > 0 {
		fmt.Fprintf(&b, " headers=%v", maskValues(e.headers))
	}
	if e.bearerVar != "" {
		fmt.Fprintf(&b, " bearer_token_env_var=%s", e.bearerVar)
	}
	fmt.Fprintf(&b, " [%s]", e.status)
	return b.String()
}

// maskValues hides the test's own secret values in messages (references and
// other values are shown: they are what a failure is about).
func maskValues(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = strings.NewReplacer(testKey, "<the key>", testToken, "<the token>").Replace(v)
	}
	return out
}

// client is one AI client: how to read back what it has configured.
type client struct {
	id  string // mcptray's client id
	bin string // the program under node_modules/.bin
	// ref is the client's own spelling of a reference to VAR.
	ref func(name string) string
	// entries lists every server the client has, with its connection status.
	entries func(h *home) map[string]entry
	// connected is the status of a server the client reached.
	connected string
	// noAddCommand: the client has no add command to run from a script,
	// so there are no printed lines to paste and none of its own to import.
	noAddCommand bool
}

var refPattern = regexp.MustCompile(`\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}`)

var clientsUnderTest = []*client{
	{id: "claude-code", bin: "claude", ref: func(n string) string { return "${" + n + "}" }, entries: claudeEntries, connected: "✔ Connected"},
	{id: "gemini", bin: "gemini", ref: func(n string) string { return "${" + n + "}" }, entries: geminiEntries, connected: "Connected"},
	{id: "codex", bin: "codex", entries: codexEntries, connected: "connected"},
	{id: "copilot", bin: "copilot", ref: func(n string) string { return "${" + n + "}" }, entries: copilotEntries, connected: "connected"},
	{id: "qwen", bin: "qwen", ref: func(n string) string { return "${" + n + "}" }, entries: qwenEntries, connected: "Connected"},
	// opencode adds servers only interactively (`opencode mcp add` asks
	// its questions on a terminal): nothing to print or paste.
	{id: "opencode", bin: "opencode", ref: func(n string) string { return "{env:" + n + "}" }, entries: opencodeEntries, connected: "connected", noAddCommand: true},
}

// claudeEntries reads `claude mcp list` (every server and whether Claude
// Code connected to it) and `claude mcp get NAME` (its fields).
func claudeEntries(h *home) map[string]entry {
	out, _ := h.client("mcp", "list")
	got := map[string]entry{}
	for _, line := range strings.Split(out, "\n") {
		name, rest, ok := strings.Cut(line, ": ")
		if !ok || strings.ContainsAny(name, " ") {
			continue
		}
		i := strings.LastIndex(rest, " - ")
		if i < 0 {
			continue
		}
		got[name] = entry{status: strings.TrimSpace(rest[i+3:])}
	}
	for name, e := range got {
		out, _ := h.client("mcp", "get", name)
		section := ""
		for _, line := range strings.Split(out, "\n") {
			trimmed := strings.TrimSpace(line)
			indent := len(line) - len(strings.TrimLeft(line, " "))
			if indent >= 4 && section != "" {
				switch section {
				case "Environment":
					k, v, _ := strings.Cut(trimmed, "=")
					if e.env == nil {
						e.env = map[string]string{}
					}
					e.env[k] = v
				case "Headers":
					k, v, _ := strings.Cut(trimmed, ": ")
					if e.headers == nil {
						e.headers = map[string]string{}
					}
					e.headers[k] = v
				}
				continue
			}
			k, v, _ := strings.Cut(trimmed, ":")
			v = strings.TrimSpace(v)
			section = ""
			switch k {
			case "Type":
				e.transport = v
			case "Command":
				e.command = v
			case "Args":
				e.args = strings.Fields(v)
			case "URL":
				e.url = v
			case "Environment", "Headers":
				section = k
			}
		}
		got[name] = e
	}
	return got
}

// geminiEntries reads `gemini mcp list` (every server, its transport and
// whether Gemini connected, in the trusted project folder) and the fields
// from ~/.gemini/settings.json, since Gemini has no `mcp get`.
func geminiEntries(h *home) map[string]entry {
	return geminiLikeEntries(h, "gemini", filepath.Join(h.dir, ".gemini", "settings.json"))
}

// codexEntries reads `codex mcp list --json` (every server and its fields)
// and asks `codex app-server` for the status of each (which starts and
// initializes every server: a connection, without a model or an account).
func codexEntries(h *home) map[string]entry {
	out, _ := h.client("mcp", "list", "--json")
	var list []struct {
		Name      string `json:"name"`
		Enabled   bool   `json:"enabled"`
		Transport struct {
			Type        string            `json:"type"`
			Command     string            `json:"command"`
			Args        []string          `json:"args"`
			Env         map[string]string `json:"env"`
			EnvVars     []string          `json:"env_vars"`
			URL         string            `json:"url"`
			BearerVar   string            `json:"bearer_token_env_var"`
			HTTPHeaders map[string]string `json:"http_headers"`
		} `json:"transport"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		h.t.Fatalf("codex mcp list --json: %v\n%s", err, out)
	}
	got := map[string]entry{}
	for _, s := range list {
		tr := s.Transport
		e := entry{transport: tr.Type, command: tr.Command, args: tr.Args, env: tr.Env, envVars: tr.EnvVars, url: tr.URL, headers: tr.HTTPHeaders, bearerVar: tr.BearerVar}
		if e.transport == "streamable_http" {
			e.transport = "http"
		}
		got[s.Name] = e
	}
	// Codex gives a server 30 s to start; npx and node on a loaded machine
	// can take longer. The override is on the command line, not in the file.
	var args []string
	for name := range got {
		args = append(args, "-c", "mcp_servers."+name+".startup_timeout_sec=120")
	}
	as := startAppServer(h.t, filepath.Join(h.f.clients, ".bin", "codex"), h.proj, h.env(true), args...)
	res, err := as.call(context.Background(), "mcpServerStatus/list", map[string]any{})
	if err != nil {
		h.t.Fatalf("codex app-server: %v\nnotifications:\n%s\nstderr:\n%s", err, strings.Join(as.Notes(), "\n"), as.Stderr())
	}
	var status struct {
		Data []struct {
			Name       string          `json:"name"`
			ServerInfo json.RawMessage `json:"serverInfo"`
			ToolsError *string         `json:"toolsError"`
		} `json:"data"`
	}
	if err := json.Unmarshal(res, &status); err != nil {
		h.t.Fatal(err)
	}
	for _, s := range status.Data {
		e := got[s.Name]
		switch {
		case len(s.ServerInfo) > 0 && string(s.ServerInfo) != "null":
			e.status = "connected"
		case s.ToolsError != nil:
			e.status = "failed: " + *s.ToolsError
		default:
			e.status = "not connected"
		}
		got[s.Name] = e
	}
	for name, e := range got {
		if e.status != "connected" {
			h.t.Logf("codex app-server notifications for %s:\n%s", name, strings.Join(notesAbout(as.Notes(), name), "\n"))
		}
	}
	return got
}

func notesAbout(notes []string, name string) []string {
	var out []string
	for _, n := range notes {
		if strings.Contains(n, `"`+name+`"`) {
			out = append(out, n)
		}
	}
	return out
}

// resolvesOnAdd: the client's `mcp add` writes every reference it can
// resolve as its value (Gemini CLI 0.61, Qwen Code 0.24.4).
func resolvesOnAdd(c *client) bool { return c.id == "gemini" || c.id == "qwen" }

// expect is how the client should hold s after mcptray wrote it. Codex is
// special: it has no reference syntax, passes variables through by name
// (env_vars, bearer_token_env_var) and speaks no SSE (mcptray bridges).
func (c *client) expect(s server) entry {
	e := entry{transport: s.transport, command: s.command, args: s.args, url: s.url, status: c.connected}
	ref := func(v string) string {
		return refPattern.ReplaceAllStringFunc(v, func(m string) string { return c.ref(refPattern.FindStringSubmatch(m)[1]) })
	}
	if c.id == "codex" {
		if s.transport == "sse" {
			e.transport, e.command, e.url = "stdio", "npx", ""
			e.args = []string{"-y", "mcp-remote", s.url, "--transport", "sse-only"}
		}
		for k, v := range s.env {
			if m := refPattern.FindStringSubmatch(v); m != nil && m[0] == v && m[1] == k {
				e.envVars = append(e.envVars, k)
				continue
			}
			if e.env == nil {
				e.env = map[string]string{}
			}
			e.env[k] = v
		}
		slices.Sort(e.envVars)
		for k, v := range s.headers {
			if m := regexp.MustCompile(`^Bearer \$\{env:(\w+)\}$`).FindStringSubmatch(v); k == "Authorization" && m != nil {
				e.bearerVar = m[1]
			}
		}
		return e
	}
	for k, v := range s.env {
		if e.env == nil {
			e.env = map[string]string{}
		}
		e.env[k] = ref(v)
	}
	for k, v := range s.headers {
		if e.headers == nil {
			e.headers = map[string]string{}
		}
		e.headers[k] = ref(v)
	}
	return e
}

var placeholder = regexp.MustCompile(`^<[A-Za-z_][A-Za-z0-9_]*>$`)

// compare reports every field of got that differs from want. Two things a
// client cannot hold are accepted when mcptray's warnings name the server:
// a literal value left out of a printed command (it is a secret; a clearly
// invalid placeholder stands in, with a warning naming it), and, in
// Codex (which neither expands references nor renames variables, and whose
// `mcp add` cannot set env_vars), an env reference. A mask is never
// accepted, nor a placeholder for a reference.
func compare(t *testing.T, c *client, name string, want, got entry, warnings string) {
	t.Helper()
	warned := strings.Contains(warnings, "servers."+name)
	// A literal may be left out of a printed command as a placeholder, with
	// a warning naming it.
	literalWarned := func(k string) bool {
		return warned && strings.Contains(warnings, k) && !refPattern.MatchString(want.env[k])
	}
	var diffs []string
	check := func(field string, w, g any) {
		if fmt.Sprint(w) != fmt.Sprint(g) {
			diffs = append(diffs, fmt.Sprintf("%s = %v, want %v", field, g, w))
		}
	}
	check("transport", want.transport, got.transport)
	if want.command == "npx" && filepath.Base(got.command) == "npx" {
		got.command = "npx" // mcptray resolves it on the login shell's PATH
	}
	check("command", want.command, got.command)
	check("args", fmt.Sprintf("%q", want.args), fmt.Sprintf("%q", got.args))
	check("url", want.url, got.url)
	check("headers", maskValues(want.headers), maskValues(got.headers))
	check("bearer_token_env_var", want.bearerVar, got.bearerVar)
	if !(c.id == "codex" && warned) {
		check("env_vars", want.envVars, sortedCopy(got.envVars))
	}
	for k, g := range got.env {
		_, ok := want.env[k]
		switch {
		case strings.Contains(g, "•"):
			diffs = append(diffs, fmt.Sprintf("env.%s = %q: the mask, not a value", k, g))
		case placeholder.MatchString(g) && !(ok && literalWarned(k)):
			diffs = append(diffs, fmt.Sprintf("env.%s = %q: a placeholder in the client's live config", k, g))
		case !ok && !(c.id == "codex" && warned && slices.Contains(want.envVars, k)):
			diffs = append(diffs, fmt.Sprintf("env.%s is set, want it absent", k))
		}
	}
	for k, w := range want.env {
		g, ok := got.env[k]
		codexRef := c.id == "codex" && refPattern.MatchString(w)
		switch {
		case codexRef && warned:
		case codexRef:
			diffs = append(diffs, fmt.Sprintf("env.%s: Codex cannot rename a variable, and no warning names servers.%s", k, name))
		case !ok:
			diffs = append(diffs, fmt.Sprintf("env.%s is missing", k))
		case g != w && !literalWarned(k):
			diffs = append(diffs, fmt.Sprintf("env.%s = %q, want %q", k, maskValues(map[string]string{k: g})[k], w))
		}
	}
	check("status", want.status, got.status)
	if len(diffs) > 0 {
		t.Errorf("%s: %s holds\n  %v\nwant\n  %v\n%s", c.id, name, got, want, "  "+strings.Join(diffs, "\n  "))
	}
}

func sortedCopy(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// entries is what the client shows. A client gives each server a few
// seconds to start; on a loaded machine a slow start shows as a failure, so
// the client is asked again (at most three times in all, six while one only
// timed out: Qwen Code's `mcp list` gives each server a fixed 10 s) while
// one of want is not connected: what is configured wrong never connects.
func (h *home) entries(want []string) map[string]entry {
	h.t.Helper()
	for try := 1; ; try++ {
		got := h.c.entries(h)
		var slow []string
		timedOut := false
		for _, n := range want {
			if e, ok := got[n]; ok && e.status != h.c.connected {
				slow = append(slow, n+" ("+e.status+")")
				timedOut = timedOut || strings.Contains(e.status, "timed out")
			}
		}
		if len(slow) == 0 || try == 3 && !timedOut || try == 6 {
			return got
		}
		h.t.Logf("%s: not connected yet: %s; asking again", h.c.id, strings.Join(slow, ", "))
	}
}

// checkAll compares every server mcptray wrote with what the client shows.
func (h *home) checkAll(got map[string]entry, warnings string) {
	h.t.Helper()
	for _, s := range h.servers {
		e, ok := got[s.name]
		if !ok {
			h.t.Errorf("%s does not list %s (it lists %v)", h.c.id, s.name, slices.Sorted(maps.Keys(got)))
			continue
		}
		compare(h.t, h.c, s.name, h.c.expect(s), e, warnings)
	}
}

// checkResolved asserts what the client handed the servers: the probe's
// environment and the Authorization header the proxy received. After
// install every reference must arrive resolved and the literal as written
// (Codex: a renamed variable may arrive unset, never as a placeholder);
// after the printed commands, only what a command can express.
func (h *home) checkResolved(installed bool) {
	h.t.Helper()
	env := readProbe(h.t, h.probe)
	val := func(k string) string {
		if v := env[k]; v != nil {
			return *v
		}
		return "(unset)"
	}
	shown := func(v string) string { return maskValues(map[string]string{"": v})[""] }
	codex := h.c.id == "codex"
	if got := val(keyVar); got != h.f.key && (installed || !codex) {
		h.t.Errorf("%s started the probe with %s=%s, want the key (a reference passed through)", h.c.id, keyVar, shown(got))
	}
	switch got := val("PROBE_RENAMED"); {
	case codex && placeholder.MatchString(got):
		h.t.Errorf("codex started the probe with PROBE_RENAMED=%q: a placeholder, not a value", got)
	case !codex && got != h.f.key:
		h.t.Errorf("%s started the probe with PROBE_RENAMED=%s, want the key (a renamed reference resolved)", h.c.id, shown(got))
	}
	if got := val("PROBE_LITERAL"); installed && got != h.f.literal || strings.Contains(got, "•") {
		h.t.Errorf("%s started the probe with PROBE_LITERAL=%q, want %q", h.c.id, got, h.f.literal)
	}
	if seen := h.auth.Seen(); !slices.ContainsFunc(seen, func(s string) bool { return strings.HasPrefix(s, "Bearer "+h.f.token+" ") }) {
		h.t.Errorf("%s never sent the remote server's Authorization header with the token resolved; it sent: %v", h.c.id, seen)
	}
}

func TestRealClients(t *testing.T) {
	f := setup(t)
	// The clients run at once (each in its own homes), whatever -parallel
	// says: most of the time is spent waiting for them to start. Their steps
	// run one after the other (more at once overloads a 2-core machine).
	var wg sync.WaitGroup
	for _, c := range clientsUnderTest {
		f := f.withRemotes(t)
		wg.Go(func() {
			t.Run(c.id, func(t *testing.T) {
				t.Run("install", func(t *testing.T) { testInstall(t, f, c) })
				if !c.noAddCommand {
					t.Run("export-cli", func(t *testing.T) { testExportCLI(t, f, c) })
					t.Run("client-adds-import", func(t *testing.T) { testClientAddsImport(t, f, c) })
				}
				t.Run("through-mcptray", func(t *testing.T) { testThroughMcptray(t, f, c) })
				t.Run("one-entry", func(t *testing.T) { testOneEntry(t, f, c) })
				if runtime.GOOS == "linux" { // daemons are counted in /proc
					t.Run("desktop-session", func(t *testing.T) { testDesktopSession(t, f, c) })
				}
			})
		})
	}
	wg.Wait()
}

// testInstall: `mcptray install --client X` into a new user's home; the
// client lists every server, holds every field as mcptray meant it, and
// connects to each with references resolved.
func testInstall(t *testing.T, f *fixture, c *client) {
	h := f.newHome(t, c)
	_, warnings := h.mcptray("install", "--direct", "--client", c.id, "--config", h.cfg)
	t.Logf("mcptray install --direct --client %s: stderr:\n%s", c.id, warnings)
	h.checkAll(h.entries(names(h.servers)), warnings)
	h.checkResolved(true)
}

// testExportCLI runs every line of `mcptray export --format cli` through the
// real client, as a person pasting them into a shell would, then checks what
// the client made of them.
func testExportCLI(t *testing.T, f *fixture, c *client) {
	h := f.newHome(t, c)
	out, warnings := h.mcptray("export", "--direct", "--client", c.id, "--format", "cli", "--config", h.cfg)
	t.Logf("mcptray export --direct --client %s --format cli:\n%sstderr:\n%s", c.id, out, warnings)
	if strings.Contains(out, mask) {
		t.Errorf("the printed commands hold the mask %s where a value goes: a person running them stores the bullets", mask)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if resolvesOnAdd(c) && !strings.Contains(warnings, "mcptray install --client "+c.id) {
		t.Errorf("no warning that `%s mcp add` writes resolved references into settings.json (prefer mcptray install)", c.id)
	}
	if len(lines) != len(h.servers) {
		t.Errorf("%d lines for %d servers", len(lines), len(h.servers))
	}
	for _, line := range lines {
		words, err := shellSplit(line)
		if err != nil {
			t.Errorf("not safe to paste into a shell: %v\n%s", err, line)
			continue
		}
		if len(words) == 0 || words[0] != c.bin {
			t.Errorf("line does not run %s: %s", c.bin, line)
			continue
		}
		// Gemini's `mcp add` rewrites settings.json with every reference
		// it can resolve replaced by its value: run its lines without the
		// secrets in the environment.
		o, e, err := run(context.Background(), h.proj, h.env(!resolvesOnAdd(c)), filepath.Join(f.clients, ".bin", c.bin), words[1:]...)
		if err != nil {
			t.Errorf("the client refused a printed line: %v\n%s\nstdout: %s\nstderr: %s", err, line, o, e)
		}
	}
	h.checkAll(h.entries(names(h.servers)), warnings)
	h.checkResolved(false)
}

// added is a server the client added itself, and what mcptray must import.
type added struct {
	name string
	args []string // the client's own add command, after the program name
	want registry.Server
}

func (f *fixture) clientAdds(c *client, h *home) []added {
	authURL := h.auth.URL + "/mcp"
	keyRef, tokenRef := "${env:"+keyVar+"}", "${env:"+tokenVar+"}"
	stdio := registry.Server{Command: f.mcptray, Args: []string{"serve-demo"}, Env: map[string]string{"API_KEY": keyRef, "LIT": ownLiteral}}
	bearer := map[string]string{"Authorization": "Bearer " + tokenRef}
	switch c.id {
	case "claude-code":
		return []added{
			{"own-stdio", []string{"mcp", "add", "--scope", "user", "own-stdio", "-e", "API_KEY=${" + keyVar + "}", "-e", "LIT=" + ownLiteral, "--", f.mcptray, "serve-demo"}, stdio},
			{"own-http", []string{"mcp", "add", "--scope", "user", "--transport", "http", "own-http", authURL, "--header", "Authorization: Bearer ${" + tokenVar + "}"},
				registry.Server{URL: authURL, TransportName: registry.TransportHTTP, Headers: bearer}},
			{"own-sse", []string{"mcp", "add", "--scope", "user", "--transport", "sse", "own-sse", f.sseURL}, registry.Server{URL: f.sseURL, TransportName: registry.TransportSSE}},
			{"own-json", []string{"mcp", "add-json", "--scope", "user", "own-json", fmt.Sprintf(`{"type":"stdio","command":%q,"args":[%q,"stdio"],"env":{"EVERYTHING_KEY":"${%s:-fallback}"}}`, f.node, f.everything, keyVar)},
				registry.Server{Command: f.node, Args: []string{f.everything, "stdio"}, Env: map[string]string{"EVERYTHING_KEY": "${env:" + keyVar + ":-fallback}"}}},
			{"own-json-http", []string{"mcp", "add-json", "--scope", "user", "own-json-http", fmt.Sprintf(`{"type":"http","url":%q,"headers":{"Authorization":"Bearer ${%s}"}}`, authURL, tokenVar)},
				registry.Server{URL: authURL, TransportName: registry.TransportHTTP, Headers: bearer}},
		}
	case "gemini":
		described := stdio
		described.Description = "the demo, described"
		return []added{
			{"own-stdio", []string{"mcp", "add", "--scope", "user", "-e", "API_KEY=${" + keyVar + "}", "-e", "LIT=" + ownLiteral, "--description", described.Description, "own-stdio", f.mcptray, "serve-demo"}, described},
			{"own-http", []string{"mcp", "add", "--scope", "user", "--transport", "http", "-H", "Authorization: Bearer ${" + tokenVar + "}", "own-http", authURL},
				registry.Server{URL: authURL, TransportName: registry.TransportHTTP, Headers: bearer}},
			{"own-sse", []string{"mcp", "add", "--scope", "user", "--transport", "sse", "own-sse", f.sseURL}, registry.Server{URL: f.sseURL, TransportName: registry.TransportSSE}},
			{"own-args", []string{"mcp", "add", "--scope", "user", "own-args", f.node, "--", f.everything, "stdio"}, registry.Server{Command: f.node, Args: []string{f.everything, "stdio"}}},
		}
	case "copilot":
		return []added{
			{"own-stdio", []string{"mcp", "add", "own-stdio", "--env", "API_KEY=${" + keyVar + "}", "--env", "LIT=" + ownLiteral, "--", f.mcptray, "serve-demo"}, stdio},
			{"own-http", []string{"mcp", "add", "--transport", "http", "--header", "Authorization: Bearer ${" + tokenVar + "}", "own-http", authURL},
				registry.Server{URL: authURL, TransportName: registry.TransportHTTP, Headers: bearer}},
			{"own-sse", []string{"mcp", "add", "--transport", "sse", "own-sse", f.sseURL}, registry.Server{URL: f.sseURL, TransportName: registry.TransportSSE}},
		}
	case "qwen":
		described := stdio
		described.Description = "the demo, described"
		return []added{
			{"own-stdio", []string{"mcp", "add", "--scope", "user", "-e", "API_KEY=${" + keyVar + "}", "-e", "LIT=" + ownLiteral, "--description", described.Description, "own-stdio", f.mcptray, "serve-demo"}, described},
			{"own-http", []string{"mcp", "add", "--scope", "user", "--transport", "http", "-H", "Authorization: Bearer ${" + tokenVar + "}", "own-http", authURL},
				registry.Server{URL: authURL, TransportName: registry.TransportHTTP, Headers: bearer}},
			{"own-sse", []string{"mcp", "add", "--scope", "user", "--transport", "sse", "own-sse", f.sseURL}, registry.Server{URL: f.sseURL, TransportName: registry.TransportSSE}},
			{"own-args", []string{"mcp", "add", "--scope", "user", "own-args", f.node, "--", f.everything, "stdio"}, registry.Server{Command: f.node, Args: []string{f.everything, "stdio"}}},
		}
	case "codex":
		return []added{
			{"own-stdio", []string{"mcp", "add", "own-stdio", "--env", "LIT=" + ownLiteral, "--", f.mcptray, "serve-demo"},
				registry.Server{Command: f.mcptray, Args: []string{"serve-demo"}, Env: map[string]string{"LIT": ownLiteral}}},
			{"own-http", []string{"mcp", "add", "own-http", "--url", authURL, "--bearer-token-env-var", tokenVar},
				registry.Server{URL: authURL, Headers: bearer}},
			{"own-plain", []string{"mcp", "add", "own-plain", "--url", f.httpURL}, registry.Server{URL: f.httpURL}},
		}
	}
	return nil
}

// testClientAddsImport lets the client write servers itself, imports them
// with `mcptray import` and compares every field; then installs mcptray's
// servers into that file twice (the second changes nothing) and uninstalls
// them (the file is back byte for byte).
func testClientAddsImport(t *testing.T, f *fixture, c *client) {
	h := f.newHome(t, c)
	adds := f.clientAdds(c, h)
	for _, a := range adds {
		// Gemini and Qwen resolve references on write when the variables
		// are set.
		h.clientEnv(!resolvesOnAdd(c), a.args...)
	}
	var file string
	switch c.id {
	case "claude-code":
		file = filepath.Join(h.dir, ".claude.json")
	case "gemini":
		file = filepath.Join(h.dir, ".gemini", "settings.json")
		// A url without type, written by hand as Gemini's documentation
		// shows it: Gemini reads it as Streamable HTTP.
		var v map[string]any
		if err := json.Unmarshal(readFile(t, file), &v); err != nil {
			t.Fatal(err)
		}
		v["mcpServers"].(map[string]any)["own-untyped"] = map[string]any{"url": h.auth.URL + "/mcp", "headers": map[string]string{"Authorization": "Bearer ${" + tokenVar + "}"}}
		b, _ := json.MarshalIndent(v, "", "  ")
		writeFile(t, file, string(b)+"\n")
		adds = append(adds, added{name: "own-untyped", want: registry.Server{URL: h.auth.URL + "/mcp", TransportName: registry.TransportHTTP, Headers: map[string]string{"Authorization": "Bearer ${env:" + tokenVar + "}"}}})
	case "codex":
		file = filepath.Join(h.dir, ".codex", "config.toml")
	case "copilot":
		file = filepath.Join(h.dir, ".copilot", "mcp-config.json")
	case "qwen":
		file = filepath.Join(h.dir, ".qwen", "settings.json")
	}
	// The client connects to what it wrote itself (a baseline for the rest).
	var own []string
	for _, a := range adds {
		own = append(own, a.name)
	}
	got := h.entries(own)
	for _, a := range adds {
		if e, ok := got[a.name]; !ok || e.status != c.connected {
			t.Errorf("%s does not connect to the server it added itself: %s %v", c.id, a.name, e)
		}
	}

	cfg := filepath.Join(h.dir, "imported.toml")
	writeFile(t, cfg, "# servers imported from "+c.id+"\n")
	out, warnings := h.mcptray("import", "--client", c.id, "--config", cfg)
	t.Logf("mcptray import --client %s:\n%sstderr:\n%s", c.id, out, warnings)
	imported, err := registry.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range adds {
		s := imported.Server(a.name)
		if s == nil {
			t.Errorf("import lost %s:\n%s", a.name, readFile(t, cfg))
			continue
		}
		compareImported(t, c, a.name, &a.want, s)
	}
	if t.Failed() {
		t.Logf("%s as %s wrote it:\n%s", file, c.id, readFile(t, file))
	}

	if resolvesOnAdd(c) {
		// One more `mcp add`, with the variables set as in a person's
		// shell: Gemini and Qwen write the whole file back with the
		// references they resolved (why mcptray warns against their add
		// lines).
		h.client("mcp", "add", "--scope", "user", "own-late", f.mcptray, "serve-demo")
		if !strings.Contains(string(readFile(t, file)), f.key) {
			t.Errorf("%s mcp add no longer writes resolved references into settings.json: the warning of `mcptray export --client %s --format cli` may be obsolete", c.id, c.id)
		}
	}

	// Install twice, uninstall: the client's own file comes back byte for
	// byte (it holds literal secrets now, which no diff may show).
	before := readFile(t, file)
	h.mcptray("install", "--direct", "--client", c.id, "--config", h.cfg)
	once := readFile(t, file)
	if bytes.Equal(once, before) {
		t.Fatalf("install changed nothing in %s", file)
	}
	out, _ = h.mcptray("install", "--direct", "--client", c.id, "--config", h.cfg)
	if !strings.Contains(out, "nothing to change") {
		t.Errorf("second install:\n%s", out)
	}
	if twice := readFile(t, file); !bytes.Equal(twice, once) {
		t.Errorf("second install changed %s:\n%s", file, twice)
	}
	h.mcptray(append([]string{"uninstall", "--client", c.id}, names(h.servers)...)...)
	if after := readFile(t, file); !bytes.Equal(after, before) {
		t.Errorf("uninstall did not restore %s byte for byte:\nbefore:\n%s\nafter:\n%s", file, before, after)
	}
}

// compareImported reports every field of an imported server that differs
// from what the client was told.
func compareImported(t *testing.T, c *client, name string, want, got *registry.Server) {
	t.Helper()
	var diffs []string
	check := func(field string, w, g any) {
		if fmt.Sprint(w) != fmt.Sprint(g) {
			diffs = append(diffs, fmt.Sprintf("%s = %v, want %v", field, g, w))
		}
	}
	check("command", want.Command, got.Command)
	check("args", fmt.Sprintf("%q", want.Args), fmt.Sprintf("%q", got.Args))
	check("env", fmt.Sprint(want.Env), fmt.Sprint(got.Env))
	check("cwd", want.Cwd, got.Cwd)
	check("url", want.URL, got.URL)
	check("transport", want.Transport(), got.Transport())
	check("headers", maskValues(want.Headers), maskValues(got.Headers))
	check("disabled", want.Disabled, got.Disabled)
	check("description", want.Description, got.Description)
	if len(diffs) > 0 {
		t.Errorf("%s: imported %s: %s", c.id, name, strings.Join(diffs, "; "))
	}
}
