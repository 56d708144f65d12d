package bundle_test

import (
	"archive/zip"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/internal/wine"
	"mcptray/registry"
	"mcptray/registry/bundle"
	"mcptray/registry/catalog"
	"mcptray/registry/secrets"
)

// mcpbTool is the official bundle tool, installed by `make test`
// (testdata/npm-tools).
func mcpbTool(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("MCPTRAY_TEST_TOOLS")
	if dir == "" {
		dir = filepath.Join("..", "..", ".testtools", "node_modules")
	}
	tool := filepath.Join(dir, ".bin", "mcpb")
	if runtime.GOOS == "windows" {
		tool += ".cmd"
	}
	_, err := os.Stat(tool)
	if err == nil {
		_, err = exec.LookPath("node")
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the bundle tool (@anthropic-ai/mcpb) or node is missing (%v); `make test` installs it", err)
		}
		t.Skipf("the bundle tool (@anthropic-ai/mcpb) or node is missing (%v); `make test` installs it", err)
	}
	abs, _ := filepath.Abs(tool)
	return abs
}

// pack makes a bundle of src with `mcpb pack`.
func pack(t *testing.T, src string) string {
	t.Helper()
	tool := mcpbTool(t)
	work := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.CopyFS(work, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), filepath.Base(src)+".mcpb")
	cmd := exec.Command(tool, "pack", work, out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mcpb pack: %v\n%s", err, b)
	}
	return out
}

// TestRealBundleRuns packs the echo server with the official tool,
// installs it, starts the entry with the go-sdk's client (handshake,
// tools/list, a ping) and calls its tool.
func TestRealBundleRuns(t *testing.T) {
	wine.Skip(t, "runs no Node.js here (the bundle is a node server, packed by a node tool)")
	file := pack(t, filepath.Join("testdata", "echo"))
	data := t.TempDir()

	// The sensitive api_key is required.
	_, err := bundle.Install(file, data, nil, nil)
	var miss *catalog.MissingError
	if !errors.As(err, &miss) || len(miss.Fields) != 1 || miss.Fields[0].Name != "api_key" {
		t.Fatalf("without api_key: %v", err)
	}
	if left, _ := os.ReadDir(data); len(left) != 0 {
		t.Fatalf("a refused bundle left %v behind", left)
	}

	in, err := bundle.Install(file, data, nil, &bundle.EntryOptions{Values: map[string]string{"api_key": "sk-echo-1"}})
	if err != nil {
		t.Fatal(err)
	}
	if in.Folder != filepath.Join(data, "mcptray-echo", "1.0.0") {
		t.Errorf("folder %s", in.Folder)
	}
	if _, err := os.Stat(filepath.Join(in.Folder, "server", "index.js")); err != nil {
		t.Fatal(err)
	}
	s := in.Plan.Server
	if s.Name != "mcptray-echo" || s.Command != "node" || s.Source != "mcpb:mcptray-echo@1.0.0" {
		t.Errorf("entry: %+v", s)
	}
	if want := []string{filepath.Join(in.Folder, "server", "index.js"), "--greeting", "hello"}; !slices.Equal(s.Args, want) {
		t.Errorf("args %q, want %q", s.Args, want)
	}
	if s.Env["ECHO_API_KEY"] != "${keyring:mcptray-echo.api_key}" || in.Plan.Secrets["mcptray-echo.api_key"] != "sk-echo-1" {
		t.Errorf("secret: env %q, secrets %q", s.Env, in.Plan.Secrets)
	}
	if text := registry.Encode(&registry.Config{Servers: []*registry.Server{s}}); strings.Contains(string(text), "sk-echo-1") {
		t.Errorf("the secret is in servers.toml:\n%s", text)
	}

	// The secret goes to a store; the entry runs with it resolved.
	st := &secrets.FileStore{Path: filepath.Join(t.TempDir(), "secrets.json")}
	if err := in.Plan.KeepSecrets(st, secrets.SecretKey); err != nil {
		t.Fatal(err)
	}
	exp, err := s.ExpandWith(os.LookupEnv, func(n string) (string, error) { return st.Get(secrets.SecretKey(n)) })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exp.Command, exp.Args...)
	cmd.Dir = exp.Cwd
	cmd.Env = os.Environ()
	for k, v := range exp.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stderr = os.Stderr
	// The go-sdk's own client: what runs is the entry as written, the
	// way any MCP client would start it (mcptray's check of a bundle is
	// app/cli's TestAddBundleEndToEnd).
	client := mcp.NewClient(&mcp.Implementation{Name: "bundle-test", Version: "1"}, nil)
	sess, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer sess.Close()
	if info := sess.InitializeResult().ServerInfo; info == nil || info.Name != "mcptray-echo" {
		t.Errorf("server %+v", info)
	}
	tools, err := sess.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 1 || tools.Tools[0].Name != "echo" {
		t.Fatalf("tools/list: %+v, %v", tools, err)
	}
	if err := sess.Ping(ctx, nil); err != nil {
		t.Fatalf("ping: %v", err)
	}
	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "from a bundle"}})
	if err != nil {
		t.Fatal(err)
	}
	var got string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			got += tc.Text
		}
	}
	if res.IsError || got != "hello: from a bundle (key set)" {
		t.Errorf("echo answered %q", got)
	}
}

// writeZip makes an archive of the given files (a name ending in "@" is a
// symbolic link to its content).
func writeZip(t *testing.T, files map[string]string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "bad.mcpb")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := zip.NewWriter(f)
	names := slicesSorted(files)
	for _, n := range names {
		h := &zip.FileHeader{Name: strings.TrimSuffix(n, "@"), Method: zip.Deflate}
		if strings.HasSuffix(n, "@") {
			h.SetMode(fs.ModeSymlink | 0o777)
		} else {
			h.SetMode(0o644)
		}
		fw, err := w.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		fw.Write([]byte(files[n]))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return p
}

func slicesSorted(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func echoManifest(t *testing.T, edit func(string) string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "echo", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	return edit(string(b))
}

// TestBadBundlesAreRefused: a path leaving the folder, a link, a bad
// manifest and another platform's bundle are refused with the reason and
// leave nothing behind.
func TestBadBundlesAreRefused(t *testing.T) {
	server, err := os.ReadFile(filepath.Join("testdata", "echo", "server", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	same := func(s string) string { return s }
	other := "linux"
	if runtime.GOOS == "linux" {
		other = "darwin"
	}
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"dot-dot path", map[string]string{"manifest.json": echoManifest(t, same), "server/index.js": string(server), "../evil.js": "x"},
			`a path escapes the bundle's folder: "../evil.js" leaves the bundle's folder (..)`},
		{"dot-dot inside", map[string]string{"manifest.json": echoManifest(t, same), "server/index.js": string(server), "server/../../evil.js": "x"},
			`leaves the bundle's folder`},
		{"absolute path", map[string]string{"manifest.json": echoManifest(t, same), "server/index.js": string(server), "/etc/evil": "x"},
			`"/etc/evil" is not a relative path inside the bundle`},
		{"symlink", map[string]string{"manifest.json": echoManifest(t, same), "server/index.js": string(server), "server/lib@": "/etc"},
			"server/lib is a symbolic link"},
		{"manifest not JSON", map[string]string{"manifest.json": "{ not json", "server/index.js": string(server)},
			"manifest.json: not JSON"},
		{"no server type", map[string]string{"manifest.json": echoManifest(t, func(s string) string { return strings.Replace(s, `"type": "node",`, "", 1) }), "server/index.js": string(server)},
			"manifest.json: server.type: missing (node, python, binary or uv)"},
		{"unknown user_config", map[string]string{"manifest.json": echoManifest(t, func(s string) string { return strings.Replace(s, "user_config.greeting", "user_config.nope", 1) }), "server/index.js": string(server)},
			"${user_config.nope} names no user_config field"},
		{"entry point missing", map[string]string{"manifest.json": echoManifest(t, same)},
			"server.entry_point: server/index.js is not in the bundle"},
		{"no manifest", map[string]string{"server/index.js": string(server)},
			"no manifest.json at the top of the archive"},
		{"other platform", map[string]string{"manifest.json": echoManifest(t, func(s string) string {
			return strings.Replace(s, `["darwin", "win32", "linux"]`, `["`+other+`"]`, 1)
		}), "server/index.js": string(server)},
			"it runs on " + other + ", not on this " + bundle.Platform(runtime.GOOS)},
		{"node too old", map[string]string{"manifest.json": echoManifest(t, func(s string) string { return strings.Replace(s, `">=16.0.0"`, `">=99"`, 1) }), "server/index.js": string(server)},
			"it needs node >=99 and"},
		{"not a zip", map[string]string{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "node too old" {
				wine.Skip(t, "runs no Node.js here (the refusal names the installed node's version)")
				if _, err := exec.LookPath("node"); err != nil {
					if os.Getenv("CI") == "true" {
						t.Fatal("node not on PATH")
					}
					t.Skip("needs node")
				}
			}
			path := writeZip(t, tt.files)
			if tt.name == "not a zip" {
				os.WriteFile(path, []byte("PK but not really"), 0o600)
				tt.want = "not a zip archive"
			}
			data := filepath.Join(t.TempDir(), "bundles")
			_, err := bundle.Install(path, data, nil, &bundle.EntryOptions{Values: map[string]string{"api_key": "k"}})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v\nwant it to say %q", err, tt.want)
			}
			if _, serr := os.Stat(data); !errors.Is(serr, fs.ErrNotExist) {
				left, _ := os.ReadDir(data)
				t.Errorf("a refused bundle left %v in %s", left, data)
			}
			if _, serr := os.Stat(filepath.Join(filepath.Dir(data), "evil.js")); serr == nil {
				t.Error("evil.js was written outside the folder")
			}
		})
	}
}

// TestUnpackReplacesAndRemoves: unpacking the same version again replaces
// it; Remove deletes the folder and only a folder under the bundles dir.
func TestUnpackReplacesAndRemoves(t *testing.T) {
	server, _ := os.ReadFile(filepath.Join("testdata", "echo", "server", "index.js"))
	m := echoManifest(t, func(s string) string { return s })
	path := writeZip(t, map[string]string{"manifest.json": m, "server/index.js": string(server)})
	data := t.TempDir()
	opts := &bundle.EntryOptions{Values: map[string]string{"api_key": "k"}}
	// The runtime check is not what this test is about: a host with Node
	// (a machine without it, such as Wine's, refuses the bundle first).
	host := &bundle.Host{
		Resolve: func(cmd string) (string, error) { return filepath.Join(t.TempDir(), cmd), nil },
		Version: func(string) (string, error) { return "v20.20.2", nil },
	}
	in, err := bundle.Install(path, data, host, opts)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(in.Folder, "stale.txt"), []byte("x"), 0o600)
	if _, err := bundle.Install(path, data, host, opts); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(in.Folder, "stale.txt")); err == nil {
		t.Error("the earlier unpack was not replaced")
	}
	if entries, _ := os.ReadDir(filepath.Dir(in.Folder)); len(entries) != 1 {
		t.Errorf("beside the version folder: %v", entries)
	}
	if err := bundle.Remove(data, t.TempDir()); err == nil {
		t.Error("Remove accepted a folder outside the bundles dir")
	}
	if err := bundle.Remove(data, in.Folder); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(data); len(left) != 0 {
		t.Errorf("left after Remove: %v", left)
	}
}
