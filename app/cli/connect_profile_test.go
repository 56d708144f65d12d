//go:build unix

// Unix only: these run the built mcptray and its daemon as daemonEnv
// (daemon_test.go) does, ending processes with signals and finding the
// daemon by its Unix socket; the Windows daemon's named pipe and Job
// Objects are tested in control and supervisor.

package cli

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connectArgs runs `mcptray connect ARGS...` as a client would.
func (d *daemonEnv) connectArgs(client string, args ...string) *mcp.ClientSession {
	d.t.Helper()
	cmd := exec.Command(d.bin, append([]string{"connect"}, args...)...)
	cmd.Env = d.env
	var stderr syncBuffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: client, Version: "1.0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		d.t.Fatalf("mcptray connect %v: %v\nstderr: %s", args, err, stderr.String())
	}
	d.t.Cleanup(func() { cs.Close() })
	return cs
}

// `mcptray connect --profile NAME` and `mcptray connect` (the default
// profile) are one MCP server over the profile's servers through the
// daemon; `mcptray gateway` lists them with their sessions.
func TestConnectProfile(t *testing.T) {
	d := newDaemonEnv(t)
	writeFile(t, d.cfg, fmt.Sprintf(`[servers.demo]
command = %[1]q
args = ["serve-demo"]

[servers.other]
command = %[1]q
args = ["serve-demo"]

[profiles.solo]
servers = ["other"]

[profiles.solo.tools.other]
deny = ["time"]
`, d.bin))
	d.startDaemon()
	d.waitStatus("other", "other ready", func(e statusEntry) bool { return e.State == "ready" })
	d.waitStatus("demo", "demo ready", func(e statusEntry) bool { return e.State == "ready" })

	names := func(cs *mcp.ClientSession) []string {
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tl := range res.Tools {
			out = append(out, tl.Name)
		}
		slices.Sort(out)
		return out
	}
	solo := d.connectArgs("solo-client", "--profile", "solo")
	if got := names(solo); !slices.Equal(got, []string{"other__add", "other__echo"}) {
		t.Errorf("connect --profile solo lists %v", got)
	}
	all := d.connectArgs("default-client")
	if got := names(all); !slices.Equal(got, []string{"demo__add", "demo__echo", "demo__time", "other__add", "other__echo", "other__time"}) {
		t.Errorf("connect (the default profile) lists %v", got)
	}
	res, err := all.CallTool(context.Background(), &mcp.CallToolParams{Name: "demo__echo", Arguments: map[string]any{"message": "through the profile"}})
	if err != nil || res.Content[0].(*mcp.TextContent).Text != "through the profile" {
		t.Fatalf("demo__echo: %v %+v", err, res)
	}

	out, errOut, code := d.mcptray("gateway")
	if code != 0 {
		t.Fatalf("mcptray gateway: exit %d\n%s", code, errOut)
	}
	for _, want := range []string{"\nprofile default\n", "  stdio    " + d.bin + " connect\n", "\nprofile solo\n",
		"  stdio    " + d.bin + " connect --profile solo\n", "offers   2 tools of 1 servers: other (2 tools)", "solo-client 1.0", "default-client 1.0 (profile default)"} {
		if !strings.Contains(out, want) {
			t.Errorf("mcptray gateway lacks %q:\n%s", want, out)
		}
	}
	gi := d.gatewayInfo()
	var profiles []string
	for _, p := range gi.Profiles {
		profiles = append(profiles, fmt.Sprintf("%s:%d", p.Profile, len(p.Sessions)))
		if p.URL == "" || !strings.Contains(p.URL, "/profile/"+p.Profile+"/") {
			t.Errorf("profile %s's URL %q", p.Profile, p.URL)
		}
	}
	if !slices.Equal(profiles, []string{"default:1", "solo:1"}) {
		t.Errorf("gateway --json profiles: %v", profiles)
	}

	// Bad input: a profile the file does not have, a NAME with --profile.
	cmd := exec.Command(d.bin, "connect", "--profile", "nope")
	cmd.Env = d.env
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = mcp.NewClient(&mcp.Implementation{Name: "x"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err == nil || !strings.Contains(err.Error(), `no profile named "nope" is configured`) {
		t.Errorf("connect --profile nope: %v", err)
	}
	if _, errOut, code := d.mcptray("connect", "--profile", "solo", "demo"); code != 2 || !strings.Contains(errOut, "takes a server NAME or --profile solo, not both") {
		t.Errorf("connect --profile solo demo: exit %d, %s", code, errOut)
	}
}

// The real Claude Code with the one entry `mcptray install --client
// claude-code` writes: `claude mcp list` and `claude mcp get mcptray` show
// it connected, and its session is an aggregate session of the default
// profile that listed the namespaced union.
func TestClaudeCodeOneEntry(t *testing.T) {
	claude := claudeBinary(t)
	d := newDaemonEnv(t)
	writeFile(t, d.cfg, fmt.Sprintf("[servers.demo]\ncommand = %[1]q\nargs = [\"serve-demo\"]\n\n[servers.other]\ncommand = %[1]q\nargs = [\"serve-demo\"]\n", d.bin))
	d.stopDetachedDaemon()
	out, errOut, code := d.mcptray("install", "--client", "claude-code")
	if code != 0 {
		t.Fatalf("mcptray install --client claude-code: exit %d\n%s%s", code, out, errOut)
	}
	env := append(slices.Clone(d.env), "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "NO_COLOR=1", "TERM=dumb")
	run := func(args ...string) string {
		cmd := exec.Command(claude, args...)
		cmd.Env, cmd.Dir = env, d.dir
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("claude %v: %v\n%s", args, err, b)
		}
		return string(b)
	}
	list := run("mcp", "list")
	if !strings.Contains(list, "mcptray: "+d.bin+" connect --config "+d.cfg+" - ✔ Connected") {
		t.Fatalf("claude mcp list:\n%s", list)
	}
	get := run("mcp", "get", "mcptray")
	t.Logf("claude mcp get mcptray:\n%s", get)
	if !strings.Contains(get, "Connected") {
		t.Errorf("claude mcp get mcptray does not say connected:\n%s", get)
	}
	// What Claude Code listed went through an aggregate session of the
	// default profile (the sessions ended with its commands; the usage
	// of the servers' hubs shows none: tools/list is the aggregate's own).
	var tools int
	for _, p := range d.gatewayInfo().Profiles {
		if p.Profile == "default" {
			tools = p.Tools
		}
	}
	if tools != 6 {
		t.Errorf("the default profile offers %d tools, want 6 (demo__* and other__*)", tools)
	}
}

// check, which knows each server's tools once it ran them, warns about a
// profile pattern that matches none, at its position.
func TestCheckWarnsAboutPatterns(t *testing.T) {
	bin := mcptrayBinary(t)
	cfg := writeConfig(t, fmt.Sprintf("[servers.demo]\ncommand = %q\nargs = [\"serve-demo\"]\n\n[profiles.p]\nservers = [\"demo\"]\n\n[profiles.p.tools.demo]\nallow = [\"e*\", \"nothing_*\"]\n", bin))
	cmd := exec.Command(bin, "check", "--config", cfg, "demo")
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("check: %v\n%s%s", err, out.String(), errb.String())
	}
	want := cfg + `:9:16: warning: profiles.p.tools.demo.allow: "nothing_*" matches none of demo's 3 tools`
	if !strings.Contains(errb.String(), want) || strings.Contains(errb.String(), `"e*" matches`) {
		t.Errorf("check's stderr lacks %q (or warns about e*):\n%s", want, errb.String())
	}
}
