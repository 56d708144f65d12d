package clients

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"mcptray/registry"
)

// testKey stands for the local endpoint's key (gateway.EnsureKey's form).
const testKey = "Vd3q9Xk2LmP0aZ7yR4tB8nC1eF6gH5jK_wQ-sU2iO3p"

func testGateway(goos string, useURL bool) *Gateway {
	cmd := "/usr/local/bin/mcptray"
	if goos == "windows" {
		cmd = `C:\Program Files\mcptray\mcptray.exe`
	}
	return &Gateway{Command: cmd, UseURL: useURL, Key: testKey,
		URL: func(name string) string { return "http://127.0.0.1:39427/mcp/" + name + "/" + testKey }}
}

// gatewayOpts are goldenOpts with the gateway on, mcptray installed on the
// target itself.
func gatewayOpts(goos string, useURL bool) *Options {
	o := goldenOpts(goos)
	o.HostOS = goos
	o.Gateway = testGateway(goos, useURL)
	return o
}

// serverSecrets are every value of the golden cases that must stay out of a
// gateway entry: env and header values, their references, remote URLs.
var serverSecrets = []string{"GITHUB_PERSONAL_ACCESS_TOKEN", "api.github.com", "EXAMPLE_TOKEN", "acme",
	"mcp.example.com", "sse.example.com", "server-filesystem", "server-github", "npx"}

// entryOf is the named entry in a parsed snippet.
func entryOf(t *testing.T, c *Client, doc map[string]any, name string) map[string]any {
	t.Helper()
	switch top := doc[c.Key[0]].(type) {
	case map[string]any:
		if e, ok := top[name].(map[string]any); ok {
			return e
		}
	case []any:
		for _, e := range top {
			if m, ok := e.(map[string]any); ok && m["name"] == name {
				return m
			}
		}
	}
	t.Fatalf("no entry %q under %q in %v", name, c.Key[0], doc)
	return nil
}

func stringsOfAny(v any) []string {
	var out []string
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			out = append(out, fmt.Sprint(e))
		}
	case []string:
		out = x
	}
	return out
}

// TestGoldenGateway: every client's entry through mcptray, for a stdio
// server with secrets and a remote one with headers, as the bridge (every
// OS) and as the local endpoint's URL (masked, and revealed).
func TestGoldenGateway(t *testing.T) {
	for _, c := range All() {
		for _, cn := range []string{"stdio-secret", "http-secret"} {
			for _, goos := range []string{"linux", "darwin", "windows"} {
				t.Run(fmt.Sprintf("%s/%s/%s", c.ID, cn, goos), func(t *testing.T) {
					s := cases()[cn]
					o := gatewayOpts(goos, false)
					res, err := c.Snippet([]*registry.Server{s}, o)
					if err != nil {
						t.Fatal(err)
					}
					base := filepath.Join("testdata", "golden", c.ID, "gateway-"+cn+"."+goos)
					checkGolden(t, base+"."+ext(c.Format), res.Data)
					checkNoMask(t, res)
					checkNoServerSecrets(t, res.Data)
					e := entryOf(t, c, parseReal(t, c.Format, res.Data), s.Name)
					command, args := fmt.Sprint(e[c.shape.command]), stringsOfAny(e[c.shape.args])
					if c.shape.commandArray {
						all := stringsOfAny(e[c.shape.command])
						command, args = all[0], all[1:]
					}
					if command != o.Gateway.Command || !slices.Equal(args, []string{"connect", s.Name}) {
						t.Errorf("entry runs %q %q, want %q connect %s", command, args, o.Gateway.Command, s.Name)
					}
					for _, k := range []string{c.shape.env, c.shape.url, c.shape.httpURL, "headers", "http_headers", "env_vars", "requestOptions"} {
						if _, ok := e[k]; ok && k != "" {
							t.Errorf("gateway entry has %q: %v", k, e)
						}
					}
					if c.HasCLI() {
						r, err := c.CLI([]*registry.Server{s}, o)
						if err != nil {
							t.Fatal(err)
						}
						checkGolden(t, base+".cli.txt", r.Data)
						checkNoServerSecrets(t, r.Data)
					}
					if c.HasDeepLink() {
						r, err := c.DeepLinks([]*registry.Server{s}, o)
						if err != nil {
							t.Fatal(err)
						}
						checkGolden(t, base+".link.txt", r.Data)
					}
				})
			}
		}
		t.Run(c.ID+"/url", func(t *testing.T) {
			s := cases()["stdio-secret"]
			for _, reveal := range []bool{false, true} {
				o := gatewayOpts("linux", true)
				o.RevealSecrets = reveal
				res, err := c.Snippet([]*registry.Server{s}, o)
				if err != nil {
					t.Fatal(err)
				}
				name := "gateway-url-stdio-secret.linux"
				if reveal {
					name = "gateway-url-revealed-stdio-secret.linux"
				}
				checkGolden(t, filepath.Join("testdata", "golden", c.ID, name+"."+ext(c.Format)), res.Data)
				checkNoMask(t, res)
				checkNoServerSecrets(t, res.Data)
				e := entryOf(t, c, parseReal(t, c.Format, res.Data), s.Name)
				if !c.takesURL() {
					if !strings.Contains(fmt.Sprint(e[c.shape.command]), "mcptray") || !strings.Contains(strings.Join(res.Warnings, "\n"), "stdio entries only") {
						t.Errorf("%s takes no URL: want the bridge and a warning, got %v, %q", c.ID, e, res.Warnings)
					}
					continue
				}
				want := "http://127.0.0.1:39427/mcp/github/" + Hidden
				if reveal {
					want = o.Gateway.URL("github")
				}
				if k := c.shape.urlKey(registry.TransportHTTP); fmt.Sprint(e[k]) != want {
					t.Errorf("%s = %q, want %q", k, e[k], want)
				}
				if strings.Contains(string(res.Data), testKey) != reveal {
					t.Errorf("key shown: %v, want %v (revealed):\n%s", !reveal, reveal, res.Data)
				}
				if typ, ok := e["type"]; c.shape.httpType != "" && typ != c.shape.httpType || c.shape.httpType == "" && ok {
					t.Errorf("type = %v, want %q", typ, c.shape.httpType)
				}
			}
		})
	}
}

func checkNoServerSecrets(t *testing.T, data []byte) {
	t.Helper()
	for _, v := range serverSecrets {
		if strings.Contains(string(data), v) {
			t.Errorf("gateway output holds the server's %q:\n%s", v, data)
		}
	}
}

func TestGatewayConfigAndOtherOS(t *testing.T) {
	c, _ := Lookup("claude-code")
	o := goldenOpts("windows") // HostOS linux: mcptray's path here means nothing there
	o.Gateway = &Gateway{Command: "/home/me/bin/mcptray", Config: "/home/me/work/servers.toml"}
	res, err := c.Snippet([]*registry.Server{cases()["stdio"]}, o)
	if err != nil {
		t.Fatal(err)
	}
	e := entryOf(t, c, parseReal(t, c.Format, res.Data), "files")
	if e["command"] != "mcptray.exe" || !slices.Equal(stringsOfAny(e["args"]), []string{"connect", "--config", "/home/me/work/servers.toml", "files"}) {
		t.Errorf("entry %v", e)
	}
	if !strings.Contains(strings.Join(res.Warnings, "\n"), "finds only on its PATH") {
		t.Errorf("no warning about the bare command: %q", res.Warnings)
	}
}

// TestInstallSwitchesRoute: an existing direct entry is replaced by one
// through mcptray (and back with a direct install), every other key and
// comment kept, the switch said, and a dry run writes nothing.
func TestInstallSwitchesRoute(t *testing.T) {
	for id, fixture := range fixtures {
		t.Run(id, func(t *testing.T) {
			c, err := Lookup(id)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "config")
			if err := os.WriteFile(path, []byte(fixture), 0o600); err != nil {
				t.Fatal(err)
			}
			fo := &FileOptions{Path: path, Now: func() time.Time { return time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC) }}
			if _, err := c.Install(testServers(), installOpts(), fo); err != nil {
				t.Fatal(err)
			}
			direct, _ := os.ReadFile(path)
			gw := installOpts()
			gw.Gateway = testGateway("linux", false)

			dry := *fo
			dry.DryRun = true
			ch, err := c.Install(testServers(), gw, &dry)
			if err != nil {
				t.Fatal(err)
			}
			if now, _ := os.ReadFile(path); string(now) != string(direct) {
				t.Errorf("dry run changed the file:\n%s", UnifiedDiff("before", "after", direct, now))
			}
			lines := ch.SwitchLines()
			want := "files: direct entry (npx -y @modelcontextprotocol/server-filesystem /home/me/Documents) → through mcptray (mcptray connect files)"
			if len(lines) != 4 || !slices.Contains(lines, want) {
				t.Errorf("switches:\n%s\nwant 4 of them, with\n%s", strings.Join(lines, "\n"), want)
			}
			if !slices.Contains(lines, "remote: direct entry (https://mcp.example.com/mcp) → through mcptray (mcptray connect remote)") {
				t.Errorf("remote switch not said:\n%s", strings.Join(lines, "\n"))
			}

			ch, err = c.Install(testServers(), gw, fo)
			if err != nil {
				t.Fatal(err)
			}
			if len(ch.Updated) != 4 || len(ch.Switched) != 4 {
				t.Errorf("updated %v, switched %v", ch.Updated, ch.Switched)
			}
			got, _ := os.ReadFile(path)
			checkNoServerSecrets(t, got)
			if strings.Contains(ch.Diff(), "acme") {
				t.Errorf("diff shows a literal secret:\n%s", ch.Diff())
			}
			if c.Format != FormatYAML {
				checkLinesKept(t, fixture, got)
			}
			im, err := c.importAll(path, got, installOpts())
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range im.Servers {
				if s.Name != "other" && s.Name != "mine" && s.Name != "developer" && RouteOf(s) != RouteConnect {
					t.Errorf("%s after a gateway install: %s", s.Name, commandLine(s, true))
				}
			}
			// Import leaves entries through mcptray out: they are
			// servers.toml's own.
			if im, err := c.Import(path, got, installOpts()); err != nil || slices.ContainsFunc(im.Servers, func(s *registry.Server) bool { return RouteOf(s) != RouteDirect }) {
				t.Errorf("import took an entry through mcptray: %v %v", im, err)
			}

			// And back: --direct gives the direct entries again, byte for byte.
			ch, err = c.Install(testServers(), installOpts(), fo)
			if err != nil {
				t.Fatal(err)
			}
			back := ch.SwitchLines()
			if len(back) != 4 || !slices.Contains(back, "files: through mcptray (mcptray connect files) → direct entry (npx -y @modelcontextprotocol/server-filesystem /home/me/Documents)") {
				t.Errorf("switches back:\n%s", strings.Join(back, "\n"))
			}
			if again, _ := os.ReadFile(path); c.Format != FormatYAML && string(again) != string(direct) {
				t.Errorf("a direct install after a gateway one differs from the first:\n%s", UnifiedDiff("first", "again", direct, again))
			}
		})
	}
}

// TestInstallURLMasksKey: through the local endpoint, the key is written
// into the file (it is mcptray's own credential) but never shown in the
// diff or the switch line unless secrets are revealed.
func TestInstallURLMasksKey(t *testing.T) {
	c, _ := Lookup("cursor")
	path := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(path, []byte(fixtures["cursor"]), 0o600); err != nil {
		t.Fatal(err)
	}
	o := installOpts()
	if _, err := c.Install(testServers(), o, &FileOptions{Path: path}); err != nil {
		t.Fatal(err)
	}
	o.Gateway = testGateway("linux", true)
	ch, err := c.Install(testServers(), o, &FileOptions{Path: path, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ch.New), testKey) {
		t.Errorf("the file would not get the key:\n%s", ch.New)
	}
	shown := ch.Diff() + strings.Join(ch.SwitchLines(), "\n")
	if strings.Contains(shown, testKey) || !strings.Contains(shown, "/mcp/files/"+registry.Masked) {
		t.Errorf("key not masked:\n%s", shown)
	}
	if !slices.Contains(ch.SwitchLines(), "files: direct entry (npx -y @modelcontextprotocol/server-filesystem /home/me/Documents) → through mcptray's local endpoint (http://127.0.0.1:39427/mcp/files/"+registry.Masked+")") {
		t.Errorf("switch lines:\n%s", strings.Join(ch.SwitchLines(), "\n"))
	}
	o.RevealSecrets = true
	ch, err = c.Install(testServers(), o, &FileOptions{Path: path, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ch.Diff(), testKey) {
		t.Errorf("revealed diff lacks the key:\n%s", ch.Diff())
	}
}

// TestGatewayStoppedServer: an entry through mcptray for a server mcptray
// does not start says so.
func TestGatewayStoppedServer(t *testing.T) {
	c, _ := Lookup("cursor")
	for _, s := range []*registry.Server{
		{Name: "manual", Command: "x"},
		{Name: "off", Command: "x", Autostart: true, Disabled: true},
		{Name: "on", Command: "x", Autostart: true},
		{Name: "lazy", Command: "x", Start: registry.StartLazy},
		{Name: "manual2", Command: "x", Autostart: true, Start: registry.StartManual},
	} {
		res, err := c.Snippet([]*registry.Server{s}, gatewayOpts("linux", false))
		if err != nil {
			t.Fatal(err)
		}
		said := strings.Contains(strings.Join(res.Warnings, "\n"), "servers."+s.Name+" has ")
		if want := s.Name != "on" && s.Name != "lazy"; said != want {
			t.Errorf("%s: warned %v, want %v: %q", s.Name, said, want, res.Warnings)
		}
	}
}

func TestRouteOf(t *testing.T) {
	for _, tt := range []struct {
		s    registry.Server
		want Route
	}{
		{registry.Server{Command: "/usr/local/bin/mcptray", Args: []string{"connect", "files"}}, RouteConnect},
		{registry.Server{Command: "/opt/mcptray/mcptray-headless", Args: []string{"connect", "--config", "/x.toml", "files"}}, RouteConnect},
		{registry.Server{Command: `C:\Program Files\mcptray\mcptray.exe`, Args: []string{"connect", "files"}}, RouteConnect},
		{registry.Server{Command: "/usr/local/bin/mcptray", Args: []string{"serve-demo"}}, RouteDirect},
		{registry.Server{Command: "npx", Args: []string{"-y", "connect"}}, RouteDirect},
		{registry.Server{URL: "http://127.0.0.1:39427/mcp/files/" + testKey}, RouteURL},
		{registry.Server{URL: "https://mcp.example.com/mcp"}, RouteDirect},
	} {
		if got := RouteOf(&tt.s); got != tt.want {
			t.Errorf("RouteOf(%s) = %s, want %s", commandLine(&tt.s, true), got, tt.want)
		}
	}
}
