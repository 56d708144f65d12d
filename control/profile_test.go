//go:build unix

package control

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/gateway"
	"mcptray/healthcheck"
	"mcptray/registry"
	"mcptray/supervisor"
)

// A stdio client opens an aggregate session of a profile over the control
// socket; the profile follows the config file, and /v1/gateway lists the
// profiles with their sessions.
func TestConnectProfile(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "servers.toml")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	servers := fmt.Sprintf(`[servers.one]
command = %[1]q
env = { CONTROL_TEST_DEMO = "1", GORACE = "atexit_sleep_ms=0" }

[servers.two]
command = %[1]q
env = { CONTROL_TEST_DEMO = "1", GORACE = "atexit_sleep_ms=0" }
`, exe)
	write := func(profiles string) {
		if err := os.WriteFile(cfgPath, []byte(servers+profiles), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("\n[profiles.pair]\nservers = [\"one\"]\n")
	cfg, err := registry.Load(cfgPath)
	if err != nil || cfg.HasErrors() {
		t.Fatalf("load: %v %v", err, cfg.Diagnostics)
	}
	sock := filepath.Join(shortDir(t), "mcptray", SocketName)
	ln, err := Listen(sock, nil)
	if err != nil {
		t.Fatal(err)
	}
	var gw *gateway.Gateway
	var mu sync.Mutex
	checker := checkerFunc(func(ctx context.Context, t healthcheck.Target) (supervisor.Session, error) {
		mu.Lock()
		g := gw
		mu.Unlock()
		return healthcheck.Connect(ctx, t, &healthcheck.Options{Client: g.Handlers(t.Server.Name), PreferLegacy: true})
	})
	eng := NewLocal(cfg, &LocalOptions{
		Supervisor: &supervisor.Options{Checker: checker, NoLogFiles: true, StopGrace: 200 * time.Millisecond, KillGrace: 300 * time.Millisecond,
			Environ: func(context.Context) []string { return os.Environ() }},
		NoWatch: true,
	})
	mu.Lock()
	gw = gateway.New(eng.Supervisor(), &gateway.Options{CatalogueDir: t.TempDir()})
	mu.Unlock()
	eng.ServeProfiles(gw)
	srv := NewServer(eng, &ServerOptions{Socket: sock, Version: "test", Gateway: gw, GatewayInfo: func() GatewayInfo {
		return GatewayInfo{Servers: []GatewayServer{}, Profiles: Profiles(gw, "mcptray", 0, "")}
	}})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { eng.Run(ctx) })
	wg.Go(func() { gw.Run(ctx) })
	wg.Go(func() { _ = srv.Serve(ctx, ln) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	c, err := Dial(bg, &ClientOptions{Socket: sock})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, c, "both ready", func(s supervisor.Snapshot) bool {
		return stateIs("one", supervisor.StateReady)(s) && stateIs("two", supervisor.StateReady)(s)
	})

	open := func(profile string, changed chan struct{}) *mcp.ClientSession {
		t.Helper()
		conn, err := c.ConnectProfile(bg, profile, os.Getpid())
		if err != nil {
			t.Fatalf("ConnectProfile(%q): %v", profile, err)
		}
		t.Cleanup(func() { conn.Close() })
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bridge-" + profile}, &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
				if changed != nil {
					changed <- struct{}{}
				}
			},
		}).Connect(bg, &mcp.IOTransport{Reader: conn, Writer: conn}, nil)
		if err != nil {
			t.Fatalf("handshake with profile %q: %v", profile, err)
		}
		return cs
	}
	names := func(cs *mcp.ClientSession) []string {
		res, err := cs.ListTools(bg, nil)
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
	changed := make(chan struct{}, 4)
	pair := open("pair", changed)
	if got := names(pair); !slices.Equal(got, []string{"one__add", "one__echo", "one__time"}) {
		t.Errorf("profile pair lists %v", got)
	}
	defChanged := make(chan struct{}, 4)
	def := open("", defChanged)
	if got := names(def); len(got) != 6 || !slices.Contains(got, "two__echo") {
		t.Errorf("the default profile lists %v", got)
	}
	res, err := def.CallTool(bg, &mcp.CallToolParams{Name: "two__add", Arguments: map[string]any{"a": 2, "b": 3}})
	if err != nil || res.IsError {
		t.Fatalf("two__add: %v %+v", err, res)
	}

	// The file changes: pair holds two as well, and hides echo; a pattern
	// that matches nothing is warned about with its position.
	servers += fmt.Sprintf("\n[servers.three]\ncommand = %q\nenv = { CONTROL_TEST_DEMO = \"1\", GORACE = \"atexit_sleep_ms=0\" }\n", exe)
	write("\n[profiles.pair]\nservers = [\"one\", \"two\"]\n\n[profiles.pair.tools.two]\ndeny = [\"echo\", \"ech0*\"]\n")
	rr, err := c.Reload(bg)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(rr.Diagnostics, func(d string) bool {
		return strings.HasSuffix(d, `servers.toml:17:17: warning: profiles.pair.tools.two.deny: "ech0*" matches none of two's 3 tools`)
	}) {
		t.Errorf("reload diagnostics: %q", rr.Diagnostics)
	}
	select {
	case <-changed:
	case <-time.After(30 * time.Second):
		t.Fatal("no tools/list_changed after the profile changed")
	}
	if got := names(pair); !slices.Equal(got, []string{"one__add", "one__echo", "one__time", "two__add", "two__time"}) {
		t.Errorf("after the reload pair lists %v", got)
	}
	// A server added to the file joins the default profile once ready.
	select {
	case <-defChanged:
	case <-time.After(30 * time.Second):
		t.Fatal("no tools/list_changed for the default profile after a server was added")
	}
	waitFor(t, c, "three ready", stateIs("three", supervisor.StateReady))
	deadline := time.Now().Add(30 * time.Second)
	for !slices.Contains(names(def), "three__echo") {
		if time.Now().After(deadline) {
			t.Fatalf("the default profile never listed three's tools: %v", names(def))
		}
		select {
		case <-defChanged:
		case <-time.After(time.Second):
		}
	}
	gi, err := c.Gateway(bg)
	if err != nil {
		t.Fatal(err)
	}
	var sessions []string
	for _, p := range gi.Profiles {
		for _, s := range p.Sessions {
			sessions = append(sessions, p.Profile+" "+s.ClientName+" "+s.Via)
		}
		if p.Profile == "pair" && (p.Tools != 5 || !slices.Equal(p.Command, []string{"mcptray", "connect", "--profile", "pair"})) {
			t.Errorf("pair in /v1/gateway: %+v", p)
		}
	}
	slices.Sort(sessions)
	if !slices.Equal(sessions, []string{"default bridge- stdio", "pair bridge-pair stdio"}) {
		t.Errorf("/v1/gateway's aggregate sessions: %q", sessions)
	}
}

type checkerFunc func(ctx context.Context, t healthcheck.Target) (supervisor.Session, error)

func (f checkerFunc) Connect(ctx context.Context, t healthcheck.Target) (supervisor.Session, error) {
	return f(ctx, t)
}
