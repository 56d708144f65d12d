package registry

import (
	"strings"
	"testing"
	"time"
)

// Saving what was loaded keeps the file's own text (comments, layout) for
// everything that did not change.
func TestEncodeKeepsTheFile(t *testing.T) {
	src := string(DefaultConfig("/usr/bin/mcptray")) + `
[servers.extra]   # added by hand
command = "x"     # keep this comment
env = { A = "1" }

# a note at the end
`
	load := func(s string) *Config {
		t.Helper()
		cfg, err := Parse("servers.toml", []byte(s))
		if err != nil || len(cfg.Diagnostics) > 0 {
			t.Fatalf("parse: %v %v\n%s", err, cfg.Diagnostics, s)
		}
		return cfg
	}
	comments := func(s string) []string {
		var out []string
		for _, l := range strings.Split(s, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "#") {
				out = append(out, l)
			}
		}
		return out
	}

	t.Run("unchanged", func(t *testing.T) {
		if got := string(Encode(load(src))); got != src {
			t.Errorf("unchanged config rewritten:\n%s", got)
		}
	})

	t.Run("add", func(t *testing.T) {
		cfg := load(src)
		cfg.Servers = append(cfg.Servers, &Server{Name: "new", URL: "https://e.com/mcp", Autostart: true})
		got := string(Encode(cfg))
		if !strings.HasPrefix(got, src) {
			t.Errorf("the file's text was not kept:\n%s", got)
		}
		if !strings.HasSuffix(got, "\n\n[servers.new]\nurl = \"https://e.com/mcp\"\n") {
			t.Errorf("new server not appended after a blank line:\n%q", got[len(src)-20:])
		}
	})

	t.Run("change in place", func(t *testing.T) {
		cfg := load(src)
		cfg.Server("demo").Args = []string{"serve-demo", "--versions", "2025-11-25"}
		got := string(Encode(cfg))
		if c, w := comments(got), comments(src); strings.Join(c, "\n") != strings.Join(w, "\n") {
			t.Errorf("comments lost:\n%s", got)
		}
		if !strings.Contains(got, `args = ["serve-demo", "--versions", "2025-11-25"]`) || strings.Count(got, "[servers.demo]") != 1 {
			t.Errorf("demo not rewritten in place:\n%s", got)
		}
		if strings.Index(got, "[servers.demo]") > strings.Index(got, "[servers.extra]") {
			t.Error("demo moved")
		}
		if !strings.Contains(got, "command = \"x\"     # keep this comment") {
			t.Error("an unchanged server was rewritten")
		}
	})

	t.Run("remove", func(t *testing.T) {
		cfg := load(src)
		cfg.Servers = cfg.Servers[1:] // drop demo
		got := string(Encode(cfg))
		if strings.Contains(got, "[servers.demo]") || strings.Contains(got, "serve-demo") {
			t.Errorf("demo still there:\n%s", got)
		}
		if !strings.Contains(got, "# A local stdio server from npm") || !strings.Contains(got, "# a note at the end") {
			t.Errorf("comments of other parts lost:\n%s", got)
		}
	})

	t.Run("settings", func(t *testing.T) {
		cfg := load(src)
		cfg.Settings.ProbeInterval = 5 * time.Second
		got := string(Encode(cfg))
		if !strings.Contains(got, "probe_interval = \"5s\"") || !strings.Contains(got, "# mcptray: the MCP servers") {
			t.Errorf("settings:\n%s", got)
		}
		if again := load(got); again.Settings.ProbeInterval != 5*time.Second || again.Settings.StartupTimeout != time.Minute {
			t.Errorf("settings after reload: %+v", again.Settings)
		}
	})

	t.Run("reordered falls back to a fresh file", func(t *testing.T) {
		cfg := load(src)
		cfg.Servers[0], cfg.Servers[1] = cfg.Servers[1], cfg.Servers[0]
		got := string(Encode(cfg))
		again := load(got)
		if again.Servers[0].Name != "extra" || again.Servers[1].Name != "demo" {
			t.Errorf("order: %s, %s", again.Servers[0].Name, again.Servers[1].Name)
		}
	})

	t.Run("sub-tables belong to their server", func(t *testing.T) {
		s := "[servers.a]\ncommand = \"x\"\n\n[servers.a.env]\nK = \"v\"\n\n# b's comment\n[servers.b]\ncommand = \"y\"\n"
		cfg := load(s)
		cfg.Server("a").Env = map[string]string{"K": "w"}
		got := string(Encode(cfg))
		again := load(got)
		if again.Server("a").Env["K"] != "w" || !strings.Contains(got, "# b's comment\n[servers.b]") {
			t.Errorf("got:\n%s", got)
		}
	})
}

// A server changed in place keeps its start, idle_stop and share (and the
// older autostart spelling where the entry had it); a new gateway_port is
// written and read back.
func TestEncodeKeepsLifecycleKeys(t *testing.T) {
	src := `[settings]
probe_interval = "30s"

[servers.browser]
command = "npx"
start = "lazy"
idle_stop = "1h30m"
share = false

[servers.old]
command = "y"
autostart = false
`
	cfg := parse(t, src)
	cfg.Settings.GatewayPort = 40001
	cfg.Server("browser").Description = "a browser"
	cfg.Server("old").Args = []string{"--v"}
	out := string(Encode(cfg))
	for _, want := range []string{"gateway_port = 40001\n", "start = \"lazy\"\n", "idle_stop = \"1h30m\"\n", "share = false\n", "autostart = false\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("%q missing from:\n%s", want, out)
		}
	}
	again := parse(t, out)
	if len(again.Diagnostics) > 0 || again.Settings.GatewayPort != 40001 {
		t.Fatalf("reload: %v %+v", again.Diagnostics, again.Settings)
	}
	b := again.Server("browser")
	if b.StartMode() != StartLazy || b.IdleStop != 90*time.Minute || !b.Unshared || b.Description != "a browser" {
		t.Errorf("browser = %+v", b)
	}
	if o := again.Server("old"); o.StartMode() != StartManual || o.Args[0] != "--v" {
		t.Errorf("old = %+v", o)
	}
	if def := (Settings{}).WithDefaults(); def.GatewayPort != DefaultGatewayPort || DefaultGatewayPort != 39427 {
		t.Errorf("default gateway_port = %d", def.GatewayPort)
	}
}
