package registry

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func parse(t *testing.T, src string) *Config {
	t.Helper()
	cfg, err := Parse("servers.toml", []byte(src))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return cfg
}

func TestParseFullExample(t *testing.T) {
	cfg := parse(t, `
[settings]
probe_interval  = "15s"
probe_timeout   = "5s"
startup_timeout = "1m"
log_limit = "1MiB"
log_lines = 500
gateway_port = 40000
approve_new_servers = true

[servers.fs]
command = "npx"
args    = ["-y", "@modelcontextprotocol/server-filesystem", "~/docs"]
env     = { LOG_LEVEL = "debug", GITHUB_TOKEN = "${env:GITHUB_TOKEN}", PORT = 3000 }
cwd     = "~/projects"
autostart = false
restart = "always"
description = "files"

[servers.remote]
url       = "https://example.com/mcp"
transport = "sse"
headers   = { Authorization = "Bearer ${env:EXAMPLE_TOKEN}" }
disabled  = true
restart   = "never"

[servers.plain]
url = "http://localhost:3001/mcp"

[servers.browser]
command   = "npx"
start     = "lazy"
idle_stop = "10m"
share     = false
`)
	if len(cfg.Diagnostics) != 0 {
		t.Fatalf("unexpected diagnostics: %v", cfg.Diagnostics)
	}
	want := Settings{ProbeInterval: 15 * time.Second, ProbeTimeout: 5 * time.Second, StartupTimeout: time.Minute, LogLimitBytes: 1 << 20, LogLimitLines: 500, GatewayPort: 40000, ApproveNewServers: true}
	if cfg.Settings != want {
		t.Errorf("settings = %+v, want %+v", cfg.Settings, want)
	}
	var names []string
	for _, s := range cfg.Servers {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, ","); got != "fs,remote,plain,browser" {
		t.Errorf("order = %s", got)
	}
	fs := cfg.Server("fs")
	if fs.Transport() != TransportStdio || fs.Autostart || fs.RestartPolicy() != RestartAlways || fs.Env["PORT"] != "3000" || fs.Cwd != "~/projects" || fs.Line != 11 {
		t.Errorf("fs = %+v", fs)
	}
	r := cfg.Server("remote")
	if !r.IsRemote() || r.Transport() != TransportSSE || !r.Disabled || r.Headers["Authorization"] != "Bearer ${env:EXAMPLE_TOKEN}" || !r.Autostart {
		t.Errorf("remote = %+v", r)
	}
	if p := cfg.Server("plain"); p.Transport() != TransportHTTP || p.RestartPolicy() != RestartOnFailure ||
		p.StartMode() != StartAuto || p.IdleStop != 0 || p.Unshared {
		t.Errorf("plain = %+v", p)
	}
	if fs.StartMode() != StartManual || fs.Start != "" {
		t.Errorf("autostart = false is start %q (Start %q), want manual", fs.StartMode(), fs.Start)
	}
	if b := cfg.Server("browser"); b.StartMode() != StartLazy || b.Autostart || b.IdleStop != 10*time.Minute || !b.Unshared {
		t.Errorf("browser = %+v", b)
	}
}

// start and its older spelling autostart: either alone works, both must
// agree.
func TestParseStartAndAutostart(t *testing.T) {
	for _, tt := range []struct {
		keys string
		want StartMode
		bad  string // the diagnostic, when the pair disagrees
	}{
		{"", StartAuto, ""},
		{"autostart = true", StartAuto, ""},
		{"autostart = false", StartManual, ""},
		{`start = "auto"`, StartAuto, ""},
		{`start = "manual"`, StartManual, ""},
		{`start = "lazy"`, StartLazy, ""},
		{"start = \"lazy\"\nautostart = false", StartLazy, ""},
		{"start = \"manual\"\nautostart = false", StartManual, ""},
		{"start = \"auto\"\nautostart = true", StartAuto, ""},
		{"start = \"lazy\"\nautostart = true", "", `servers.s.autostart: autostart = true conflicts with start = "lazy"`},
		{"autostart = false\nstart = \"auto\"", "", `servers.s.autostart: autostart = false conflicts with start = "auto"`},
	} {
		cfg := parse(t, "[servers.s]\ncommand = \"x\"\n"+tt.keys+"\n")
		s := cfg.Server("s")
		if tt.bad != "" {
			if s.Valid() || len(cfg.Diagnostics) != 1 || !strings.Contains(cfg.Diagnostics[0].Message, tt.bad) {
				t.Errorf("%q: %v, want %q", tt.keys, cfg.Diagnostics, tt.bad)
			} else if d := cfg.Diagnostics[0]; d.Line != 1+strings.Count(tt.keys[:strings.Index(tt.keys, "autostart")], "\n")+2 || d.Col != 1 {
				t.Errorf("%q: diagnostic at %d:%d, want the autostart key", tt.keys, d.Line, d.Col)
			}
			continue
		}
		if len(cfg.Diagnostics) != 0 || s.StartMode() != tt.want || s.Autostart != (tt.want == StartAuto) {
			t.Errorf("%q: start %q autostart %v %v, want %q", tt.keys, s.StartMode(), s.Autostart, cfg.Diagnostics, tt.want)
		}
	}
}

func TestParseOrderFollowsFile(t *testing.T) {
	cfg := parse(t, "[servers.zeta]\ncommand='a'\n[servers.alpha]\ncommand='b'\n[servers.mid]\ncommand='c'\n")
	var names []string
	for _, s := range cfg.Servers {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, ","); got != "zeta,alpha,mid" {
		t.Errorf("order = %s", got)
	}
}

// Every class of config error: what is reported, where, and that the other
// servers still load.
func TestParseErrors(t *testing.T) {
	const good = "\n[servers.good]\ncommand = \"ok\"\n"
	tests := []struct {
		name     string
		src      string
		severity Severity
		line     int
		col      int
		contains string
		invalid  string // server marked invalid ("" = none)
	}{
		{"both command and url", "[servers.github]\ncommand = \"x\"\nurl = \"https://e.com/mcp\"\n" + good,
			SeverityError, 1, 1, "servers.github: set either command or url, not both", "github"},
		{"neither", "[servers.empty]\ndescription = \"nothing\"\n" + good,
			SeverityError, 1, 1, "servers.empty: set command (a local stdio server) or url", "empty"},
		{"bad name", "[servers.\"bad name!\"]\ncommand = \"x\"\n" + good,
			SeverityError, 1, 1, "name must be 1-64 letters, digits", "bad name!"},
		{"name too long", "[servers." + strings.Repeat("a", 65) + "]\ncommand = \"x\"\n" + good,
			SeverityError, 1, 1, "name must be 1-64", strings.Repeat("a", 65)},
		{"bad duration", "[settings]\nprobe_interval = \"soon\"\n" + good,
			SeverityError, 2, 1, `settings.probe_interval: "soon" is not a positive duration`, ""},
		{"duration not a string", "[settings]\nprobe_timeout = 10\n" + good,
			SeverityError, 2, 1, "settings.probe_timeout: must be a duration string", ""},
		{"bad transport", "[servers.r]\nurl = \"https://e.com/mcp\"\n  transport = \"websocket\"\n" + good,
			SeverityError, 3, 3, `servers.r.transport: must be "http" (Streamable HTTP) or "sse"`, "r"},
		{"transport on a command", "[servers.c]\ncommand = \"x\"\ntransport = \"sse\"\n" + good,
			SeverityError, 3, 1, "a command always runs over stdio", "c"},
		{"bad restart", "[servers.r]\ncommand = \"x\"\nrestart = \"sometimes\"\n" + good,
			SeverityError, 3, 1, `servers.r.restart: must be "on-failure", "always" or "never", not "sometimes"`, "r"},
		{"bad url scheme", "[servers.r]\nurl = \"ftp://e.com\"\n" + good,
			SeverityError, 2, 1, "must start with http:// or https://", "r"},
		{"url without host", "[servers.r]\nurl = \"https://\"\n" + good,
			SeverityError, 2, 1, "has no host", "r"},
		{"empty command", "[servers.r]\ncommand = \"  \"\n" + good,
			SeverityError, 2, 1, "servers.r.command: must not be empty", "r"},
		{"wrong type", "[servers.r]\ncommand = \"x\"\nargs = \"-y pkg\"\n" + good,
			SeverityError, 3, 1, "servers.r.args: must be an array of strings", "r"},
		{"args element", "[servers.r]\ncommand = \"x\"\n  args = [\"-y\", 3]\n" + good,
			SeverityError, 3, 3, "servers.r.args: element 2 must be a string, not a number", "r"},
		{"env as a string", "[servers.r]\ncommand = \"x\"\nenv = \"FOO=bar\"\n" + good,
			SeverityError, 3, 1, "servers.r.env: must be a table such as env = { NAME = \"value\" }, not a string", "r"},
		{"env as an array", "[servers.r]\ncommand = \"x\"\nenv = [\"FOO=bar\"]\n" + good,
			SeverityError, 3, 1, "servers.r.env: must be a table", "r"},
		{"headers as a string", "[servers.r]\nurl = \"https://e.com/mcp\"\nheaders = \"Authorization: Bearer sk-1\"\n" + good,
			SeverityError, 3, 1, "servers.r.headers: must be a table such as headers = { Authorization", "r"},
		{"autostart as a string", "[servers.r]\ncommand = \"x\"\nautostart = \"no\"\n" + good,
			SeverityError, 3, 1, "servers.r.autostart: must be true or false, not a string", "r"},
		{"command a number", "[servers.r]\ncommand = 1\n" + good,
			SeverityError, 2, 1, "servers.r.command: must be a string, not a number", "r"},
		{"server not a table", "[servers]\nr = 1\n" + good,
			SeverityError, 2, 1, "servers.r: must be a table", "r"},
		{"env name with =", "[servers.r]\ncommand = \"x\"\nenv = { \"A=B\" = \"1\" }\n" + good,
			SeverityError, 3, 9, "servers.r.env.A=B: a variable name cannot hold", "r"},
		{"env value not scalar", "[servers.r]\ncommand = \"x\"\nenv = { A = [1] }\n" + good,
			SeverityError, 3, 9, "servers.r.env.A: must be a string", "r"},
		{"unknown server key", "[servers.r]\ncommand = \"x\"\ncomand = \"y\"\n" + good,
			SeverityWarning, 3, 1, `unknown key "servers.r.comand"`, ""},
		{"unknown top-level key", "colour = \"red\"\n" + good,
			SeverityWarning, 1, 1, `unknown key "colour"`, ""},
		{"unknown settings key", "[settings]\nprobe = \"1s\"\n" + good,
			SeverityWarning, 2, 1, `unknown key "settings.probe"`, ""},
		{"headers on stdio", "[servers.r]\ncommand = \"x\"\nheaders = { A = \"b\" }\n" + good,
			SeverityWarning, 3, 1, "servers.r.headers: applies only to remote", ""},
		{"bad log limit", "[settings]\nlog_limit = \"lots\"\n" + good,
			SeverityError, 2, 1, `"lots" is not a size`, ""},
		{"bad start", "[servers.r]\ncommand = \"x\"\n  start = \"sometimes\"\n" + good,
			SeverityError, 3, 3, `servers.r.start: must be "auto" (with mcptray), "lazy" (with its first client) or "manual" (when you start it), not "sometimes"`, "r"},
		{"start not a string", "[servers.r]\ncommand = \"x\"\nstart = true\n" + good,
			SeverityError, 3, 1, "servers.r.start: must be a string, not a boolean", "r"},
		{"bad idle_stop", "[servers.r]\ncommand = \"x\"\nstart = \"lazy\"\nidle_stop = \"ten\"\n" + good,
			SeverityError, 4, 1, `servers.r.idle_stop: "ten" is not a duration (use a form such as "10m", "1h" or "90s"; "0" for never)`, "r"},
		{"negative idle_stop", "[servers.r]\ncommand = \"x\"\nidle_stop = \"-5m\"\n" + good,
			SeverityError, 3, 1, `servers.r.idle_stop: must not be negative (0 means never)`, "r"},
		{"idle_stop a number", "[servers.r]\ncommand = \"x\"\nidle_stop = 600\n" + good,
			SeverityError, 3, 1, `servers.r.idle_stop: must be a duration string such as "30s", not a number`, "r"},
		{"idle_stop with manual", "[servers.r]\ncommand = \"x\"\nstart = \"manual\"\nidle_stop = \"10m\"\n" + good,
			SeverityWarning, 4, 1, `servers.r.idle_stop: applies only to servers that start by themselves`, ""},
		{"bad share", "[servers.r]\ncommand = \"x\"\n share = \"no\"\n" + good,
			SeverityError, 3, 2, "servers.r.share: must be true or false, not a string", "r"},
		{"gateway port too low", "[settings]\ngateway_port = 80\n" + good,
			SeverityError, 2, 1, "settings.gateway_port: must be a port number from 1024 to 65535 (no port below 1024: those need privileges), not 80", ""},
		{"gateway port too high", "[settings]\n  gateway_port = 70000\n" + good,
			SeverityError, 2, 3, "settings.gateway_port: must be a port number from 1024 to 65535", ""},
		{"approve_new_servers a string", "[settings]\napprove_new_servers = \"yes\"\n" + good,
			SeverityError, 2, 1, "settings.approve_new_servers: must be true or false, not a string", ""},
		{"registry not a URL", "[settings]\nregistry = \"registry.example.org\"\n" + good,
			SeverityError, 2, 1, `settings.registry: must be the http(s) URL of an MCP registry such as "https://registry.modelcontextprotocol.io", not "registry.example.org"`, ""},
		{"source not a string", "[servers.r]\ncommand = \"x\"\nsource = 1\n" + good,
			SeverityError, 3, 1, "servers.r.source: must be a string, not a number", "r"},
		{"gateway port a string", "[settings]\ngateway_port = \"39427\"\n" + good,
			SeverityError, 2, 1, `settings.gateway_port: must be a port number from 1024 to 65535 (no port below 1024: those need privileges), not "39427"`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := parse(t, tt.src)
			var found *Diagnostic
			for i, d := range cfg.Diagnostics {
				if strings.Contains(d.Message, tt.contains) {
					found = &cfg.Diagnostics[i]
				}
			}
			if found == nil {
				t.Fatalf("no diagnostic containing %q in %v", tt.contains, cfg.Diagnostics)
			}
			if found.Severity != tt.severity || found.Line != tt.line || found.Col != tt.col {
				t.Errorf("got %s %d:%d (%s), want %s %d:%d", found.Severity, found.Line, found.Col, found, tt.severity, tt.line, tt.col)
			}
			if found.File != "servers.toml" || found.Source == "" {
				t.Errorf("diagnostic lacks file or source line: %+v", found)
			}
			if g := cfg.Server("good"); g == nil || !g.Valid() {
				t.Errorf("the good server did not survive: %+v", g)
			}
			for _, s := range cfg.Servers {
				if wantInvalid := s.Name == tt.invalid; wantInvalid != !s.Valid() {
					t.Errorf("server %s: valid=%v, want invalid=%v (%v)", s.Name, s.Valid(), wantInvalid, s.Invalid)
				}
			}
			if tt.severity == SeverityError && !cfg.HasErrors() {
				t.Error("HasErrors = false")
			}
		})
	}
}

func TestSyntaxErrorHasPosition(t *testing.T) {
	src := "[servers.a]\ncommand = \"x\"\nargs = [\"-y\", \n\n[servers.b]\ncommand = \"y\"\n"
	_, err := Parse("/tmp/servers.toml", []byte(src))
	var se *SyntaxError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want *SyntaxError", err)
	}
	if se.Line == 0 || se.Col == 0 || se.Source == "" {
		t.Errorf("syntax error lacks a position: %+v", se.Diagnostic)
	}
	if !strings.HasPrefix(se.Error(), "/tmp/servers.toml:") {
		t.Errorf("message does not start with FILE:LINE:COL: %q", se.Error())
	}

	_, err = Parse("f.toml", []byte("[servers.a]\ncommand = \"unterminated\n"))
	if !errors.As(err, &se) || se.Line != 2 || !strings.Contains(se.Long(), "command = \"unterminated") {
		t.Errorf("unterminated string: %v", err)
	}

	// An unterminated table header is reported on its own line.
	for _, src := range []string{"[servers.a]\ncommand = \"x\"\n\n[servers.one\ncommand = \"y\"\n", "[servers.a]\ncommand = \"x\"\n\n[servers.one\n\n\n"} {
		_, err = Parse("f.toml", []byte(src))
		if !errors.As(err, &se) || se.Line != 4 || se.Col != 13 || se.Source != "[servers.one" {
			t.Errorf("unterminated header: %v", err)
		}
	}

	// An array left open is reported where its bracket opened, not where
	// the next table starts; brackets in strings and comments and arrays
	// closed before it do not count.
	for _, src := range []string{
		"[servers.a]\ncommand = \"x\"\nargs = [\"-y\", \"b\"\n\n[servers.b]\ncommand = \"y\"\n",
		"[servers.a]\ncommand = \"x\"\nargs = [\"[\", # [ [\n  \"]\"\nenv = { A = \"1\" }\n\n[servers.b]\ncommand = \"y\"\n",
	} {
		_, err = Parse("f.toml", []byte(src))
		if !errors.As(err, &se) || se.Line != 3 || se.Col != 8 || !strings.HasPrefix(se.Source, "args = [") || !strings.Contains(se.Message, "not closed") {
			t.Errorf("unclosed array: %v", err)
		}
	}
}

func TestExpand(t *testing.T) {
	home, _ := os.UserHomeDir()
	env := map[string]string{"TOKEN": "s3cret", "HOST": "example.com"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	s := &Server{Name: "x", Command: "~/bin/srv", Args: []string{"--dir", "~/docs", "--token=${env:TOKEN}"}, Cwd: "~",
		Env: map[string]string{"A": "${env:TOKEN}-${env:HOST}", "B": "plain"}}
	out, err := s.Expand(lookup)
	if err != nil {
		t.Fatal(err)
	}
	if out.Command != filepath.Join(home, "bin/srv") || out.Args[1] != filepath.Join(home, "docs") || out.Args[2] != "--token=s3cret" || out.Cwd != home {
		t.Errorf("expanded = %+v", out)
	}
	if out.Env["A"] != "s3cret-example.com" || out.Env["B"] != "plain" {
		t.Errorf("env = %v", out.Env)
	}
	if s.Args[2] != "--token=${env:TOKEN}" || s.Env["A"] != "${env:TOKEN}-${env:HOST}" {
		t.Error("Expand changed the original")
	}

	r := &Server{Name: "gh", URL: "https://${env:HOST}/mcp", Headers: map[string]string{"Authorization": "Bearer ${env:MISSING}"}}
	_, err = r.Expand(lookup)
	var uv *UnsetVarError
	if !errors.As(err, &uv) || uv.Var != "MISSING" || uv.Field != "headers.Authorization" || uv.Server != "gh" {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(err.Error(), "MISSING is not set") {
		t.Errorf("message = %q", err)
	}
	// An empty value is set: not an error.
	env["MISSING"] = ""
	if _, err := r.Expand(lookup); err != nil {
		t.Errorf("empty but set variable: %v", err)
	}
}

func TestEnvRefHelpers(t *testing.T) {
	s := "Bearer ${env:A} and ${env:B_2} but not ${A} or ${env:}"
	if got := strings.Join(EnvRefs(s), ","); got != "A,B_2" {
		t.Errorf("EnvRefs = %s", got)
	}
	if got := ReplaceEnvRefs(s, func(n string) string { return "${" + n + "}" }); got != "Bearer ${A} and ${B_2} but not ${A} or ${env:}" {
		t.Errorf("ReplaceEnvRefs = %s", got)
	}
}
