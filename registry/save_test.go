package registry

import (
	"bytes"
	"errors"
	"mcptray/internal/filemode"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	// Re-executed as an unprivileged user to save into a read-only folder
	// (root ignores folder permissions).
	if path := os.Getenv("REGISTRY_TEST_SAVE"); path != "" {
		cfg, err := Load(path)
		if err != nil {
			os.Stderr.WriteString(err.Error())
			os.Exit(3)
		}
		cfg.Servers[0].Description = "changed"
		if err := Save(cfg); err != nil {
			os.Stderr.WriteString(err.Error())
			os.Exit(1)
		}
		os.Exit(0)
	}
	// Re-executed to add one server to a shared servers.toml, as a separate
	// mcptray process would.
	if path, name := os.Getenv("REGISTRY_TEST_ADD"), os.Getenv("REGISTRY_TEST_ADD_NAME"); path != "" {
		cfg, err := Load(path)
		if err != nil {
			os.Stderr.WriteString(err.Error())
			os.Exit(3)
		}
		cfg.Servers = append(cfg.Servers, &Server{Name: name, Command: "srv-" + name, Autostart: true})
		if err := Save(cfg); err != nil {
			os.Stderr.WriteString(err.Error())
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func fullConfig(path string) *Config {
	return &Config{
		Path: path,
		Settings: Settings{ProbeInterval: 15 * time.Second, ProbeTimeout: 1500 * time.Millisecond,
			StartupTimeout: 2 * time.Minute, LogLimitBytes: 4096, LogLimitLines: 100, GatewayPort: 40123,
			Registry: "https://registry.example.org/mcp"},
		Servers: []*Server{
			{Name: "zz-first", Command: `C:\Program Files\node\npx.cmd`, Args: []string{"-y", "pkg@1.0", `quote " and \ back`, "tab\there", "line\nbreak", "ünïcödé"},
				Env: map[string]string{"TOKEN": "${env:GH_TOKEN}", "weird key": "v", "EMPTY": ""}, Cwd: "~/work",
				Autostart: false, Restart: RestartAlways, Description: "the \"first\" one"},
			{Name: "remote_1", URL: "https://example.com/mcp?x=1&y=2", TransportName: TransportSSE,
				Headers:   map[string]string{"Authorization": "Bearer ${env:T}", "X-Api-Key": "literal"},
				Autostart: true, Restart: RestartNever, Disabled: true},
			{Name: "a", URL: "http://127.0.0.1:3001/mcp", Autostart: true},
			{Name: "browser", Command: "npx", Start: StartLazy, IdleStop: 90 * time.Minute, Unshared: true},
			{Name: "idle", Command: "npx", Autostart: true, IdleStop: 10 * time.Minute},
			{Name: "by-hand", Command: "npx", Start: StartManual},
			{Name: "from-registry", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-everything@2.0.0", "stdio"}, Autostart: true,
				Source: "registry:io.github.modelcontextprotocol/server-everything@2.0.0"},
		},
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "servers.toml")
	want := fullConfig(path)
	if err := Save(want); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Diagnostics) != 0 {
		t.Fatalf("diagnostics after save: %v\n%s", got.Diagnostics, Encode(want))
	}
	if got.Settings != want.Settings {
		t.Errorf("settings: got %+v want %+v", got.Settings, want.Settings)
	}
	if len(got.Servers) != len(want.Servers) {
		t.Fatalf("got %d servers", len(got.Servers))
	}
	for i := range want.Servers {
		if !got.Servers[i].Equal(want.Servers[i]) {
			t.Errorf("server %d:\n got %+v\nwant %+v", i, got.Servers[i], want.Servers[i])
		}
	}
	// Saving what was loaded gives the same bytes.
	if !bytes.Equal(Encode(got), Encode(want)) {
		t.Error("second encode differs")
	}
	fi, _ := os.Stat(path)
	if !filemode.Matches(fi.Mode(), 0o600) {
		t.Errorf("mode = %v, want 0600", fi.Mode().Perm())
	}
}

func TestSaveKeepsBackup(t *testing.T) {
	path := filepath.Join(t.TempDir(), "servers.toml")
	if err := os.WriteFile(path, []byte("# mine\n[servers.x]\ncommand = \"x\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, _ := Load(path)
	cfg.Servers[0].Args = []string{"new"}
	if err := Save(cfg); err != nil {
		t.Fatal(err)
	}
	bak, _ := os.ReadFile(path + ".bak")
	if string(bak) != "# mine\n[servers.x]\ncommand = \"x\"\n" {
		t.Errorf("backup = %q", bak)
	}
	if fi, _ := os.Stat(path + ".bak"); !filemode.Matches(fi.Mode(), 0o600) {
		t.Errorf("backup mode = %v", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temp file left behind: %s", e.Name())
		}
	}
}

func TestSaveNeverWidensMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "servers.toml")
	os.WriteFile(path, []byte("[servers.x]\ncommand = \"x\"\n"), 0o600)
	os.Chmod(path, 0o200)
	cfg, _ := Load(path)
	cfg.Servers[0].Args = []string{"a"}
	if err := Save(cfg); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); !filemode.Matches(fi.Mode(), 0o200) {
		t.Errorf("mode = %v, want 0200 kept", fi.Mode().Perm())
	}
}

// servers.toml may hold literal secrets (import keeps them): a file a person
// created at 0644 is narrowed to 0600 by the next save.
func TestSaveTightensMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "servers.toml")
	os.WriteFile(path, []byte("[servers.x]\ncommand = \"x\"\n"), 0o644)
	os.Chmod(path, 0o644)
	cfg, _ := Load(path)
	cfg.Servers[0].Env = map[string]string{"API_KEY": "sk-literal"}
	if err := Save(cfg); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + ".bak"} {
		if fi, _ := os.Stat(p); !filemode.Matches(fi.Mode(), 0o600) {
			t.Errorf("%s: mode = %v, want 0600", filepath.Base(p), fi.Mode().Perm())
		}
	}
}

func TestOpenFirstRunAndExplicitPath(t *testing.T) {
	dir := t.TempDir()
	loc := Location{Path: filepath.Join(dir, "cfg", "mcptray", "servers.toml"), Source: "default"}
	cfg, created, err := Open(loc, "/opt/mcptray/bin/mcptray")
	if err != nil || !created {
		t.Fatalf("Open default: created=%v err=%v", created, err)
	}
	if len(cfg.Servers) != 1 || cfg.Servers[0].Name != "demo" || cfg.Servers[0].Command != "/opt/mcptray/bin/mcptray" ||
		strings.Join(cfg.Servers[0].Args, " ") != "serve-demo" || len(cfg.Diagnostics) != 0 {
		t.Fatalf("default config = %+v %v", cfg.Servers, cfg.Diagnostics)
	}
	if fi, _ := os.Stat(loc.Path); !filemode.Matches(fi.Mode(), 0o600) {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
	// The second open reads what is there.
	os.WriteFile(loc.Path, []byte("[servers.mine]\ncommand = \"x\"\n"), 0o600)
	cfg, created, _ = Open(loc, "/x")
	if created || cfg.Servers[0].Name != "mine" {
		t.Errorf("second open rewrote the file")
	}

	explicit := Location{Path: filepath.Join(dir, "nope.toml"), Explicit: true, Source: "--config"}
	_, _, err = Open(explicit, "/x")
	if !errors.Is(err, ErrNoConfig) || !strings.Contains(err.Error(), "nope.toml") {
		t.Errorf("explicit missing: %v", err)
	}
	if _, e := os.Stat(explicit.Path); !os.IsNotExist(e) {
		t.Error("an explicit missing path was created")
	}
}

func TestLocate(t *testing.T) {
	t.Setenv(EnvConfig, "")
	loc, err := Locate("rel/servers.toml")
	if err != nil || !loc.Explicit || !filepath.IsAbs(loc.Path) || loc.Source != "--config" {
		t.Errorf("flag: %+v %v", loc, err)
	}
	dir := t.TempDir() // absolute on this OS (/etc/x.toml is not on Windows)
	t.Setenv(EnvConfig, filepath.Join(dir, "x.toml"))
	if loc, _ := Locate(""); loc.Path != filepath.Join(dir, "x.toml") || !loc.Explicit {
		t.Errorf("env: %+v", loc)
	}
	t.Setenv(EnvConfig, "")
	// The OS's own config folder: $XDG_CONFIG_HOME, Windows' %APPDATA%
	// (macOS's ~/Library/Application Support follows $HOME).
	switch runtime.GOOS {
	case "windows":
		t.Setenv("APPDATA", dir)
	case "darwin", "ios":
		t.Setenv("HOME", dir)
		dir = filepath.Join(dir, "Library", "Application Support")
	default:
		t.Setenv("XDG_CONFIG_HOME", dir)
	}
	if loc, _ := Locate(""); loc.Path != filepath.Join(dir, "mcptray", "servers.toml") || loc.Explicit {
		t.Errorf("default: %+v", loc)
	}
}

func FuzzLoad(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/fuzz/*.toml")
	for _, s := range seeds {
		b, _ := os.ReadFile(s)
		f.Add(b)
	}
	f.Add(DefaultConfig("/usr/bin/mcptray"))
	f.Add(Encode(fullConfig("x")))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse("fuzz.toml", data)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error is not a *SyntaxError: %v", err)
			}
			return
		}
		// What loads saves and loads again to the same servers.
		again, err := Parse("again.toml", Encode(cfg))
		if err != nil {
			t.Fatalf("re-parse of encoded config: %v\n%s", err, Encode(cfg))
		}
		for _, s := range cfg.Servers {
			if s.Valid() {
				if g := again.Server(s.Name); g == nil || !g.Equal(s) {
					t.Fatalf("server %q did not round-trip:\n%+v\n%+v", s.Name, s, g)
				}
			}
		}
	})
}
