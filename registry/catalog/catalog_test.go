package catalog

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"mcptray/registry"
	"mcptray/registry/catalog/catalogtest"
)

func serve(t *testing.T) (*catalogtest.Registry, *Client) {
	t.Helper()
	reg := catalogtest.Serve(t, filepath.Join("testdata", "registry", "servers"))
	c, err := New(reg.URL, &Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return reg, c
}

// TestSearchFollowsCursor pages through every latest server two at a time.
func TestSearchFollowsCursor(t *testing.T) {
	reg, c := serve(t)
	ctx := context.Background()
	var names []string
	cursor, pages := "", 0
	for {
		p, err := c.Search(ctx, "", &SearchOptions{Limit: 2, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, s := range p.Servers {
			names = append(names, s.Server.Name+"@"+s.Server.Version)
		}
		if p.NextCursor == "" {
			break
		}
		cursor = p.NextCursor
		if pages > 10 {
			t.Fatal("the cursor never ends")
		}
	}
	want := []string{
		"io.github.domdomegg/airtable-mcp-server@1.7.3", // 1.7.2 is not the latest
		"io.github.example/weather-mcp@0.5.0",
		"io.github.modelcontextprotocol/filesystem@1.0.2",
		"io.github.modelcontextprotocol/server-everything@2.0.0",
		"io.modelcontextprotocol.anonymous/brave-search@1.0.2",
		"io.modelcontextprotocol.anonymous/hybrid-mcp@1.5.0",
		"io.modelcontextprotocol/brave-search@",
	}
	if !slices.Equal(names, want) {
		t.Errorf("servers:\n got %q\nwant %q", names, want)
	}
	if pages != 4 {
		t.Errorf("%d pages, want 4", pages)
	}
	// The query is the API's: latest versions, the cursor as given.
	reqs := reg.Requests()
	if !strings.Contains(reqs[0], "version=latest") || !strings.Contains(reqs[1], "cursor=io.github.example%2Fweather-mcp%3A0.5.0") {
		t.Errorf("requests: %q", reqs)
	}

	p, err := c.Search(ctx, "brave", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Servers) != 2 || p.NextCursor != "" {
		t.Errorf("search brave: %d servers, cursor %q", len(p.Servers), p.NextCursor)
	}
	if got := p.Servers[0].Server.HowItRuns(); !slices.Equal(got, []string{"npm"}) {
		t.Errorf("how brave-search runs: %q", got)
	}
}

// TestAnswersAreCachedWithETag: the second identical request is a 304
// answered from the cache; with the registry gone it answers stale.
func TestAnswersAreCachedWithETag(t *testing.T) {
	reg, c := serve(t)
	ctx := context.Background()
	first, err := c.Get(ctx, "io.github.modelcontextprotocol/filesystem", "")
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.Get(ctx, "io.github.modelcontextprotocol/filesystem", "")
	if err != nil {
		t.Fatal(err)
	}
	if reg.NotModified() != 1 {
		t.Errorf("%d answers were 304, want 1", reg.NotModified())
	}
	if again.Server.Version != first.Server.Version || len(again.Server.Packages) != 2 {
		t.Errorf("cached answer: %+v", again.Server)
	}
	if _, err := c.Search(ctx, "filesystem", nil); err != nil {
		t.Fatal(err)
	}
	reg.Close()
	p, err := c.Search(ctx, "filesystem", nil)
	if err != nil {
		t.Fatalf("the registry gone, the cached answer should do: %v", err)
	}
	if !p.Stale || len(p.Servers) != 1 {
		t.Errorf("stale page: %+v", p)
	}
	if _, err := c.Search(ctx, "never-asked", nil); err == nil {
		t.Error("the registry gone, a question never asked should fail")
	}
}

func TestUnknownNameIs404(t *testing.T) {
	_, c := serve(t)
	_, err := c.Get(context.Background(), "io.github.nobody/nothing", "")
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
	if !strings.Contains(err.Error(), `"io.github.nobody/nothing"`) || !strings.Contains(err.Error(), "mcptray search") {
		t.Errorf("message: %v", err)
	}
	_, err = c.Get(context.Background(), "io.github.domdomegg/airtable-mcp-server", "9.9.9")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "version 9.9.9") {
		t.Errorf("unknown version: %v", err)
	}
}

func get(t *testing.T, c *Client, name, version string) *Response {
	t.Helper()
	r, err := c.Get(context.Background(), name, version)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func found(string) (string, error) { return "/usr/bin/x", nil }

// TestPackagesBecomeCommands: npm, OCI and MCPB packages of one server, and
// a PyPI one; secrets become keyring references, required ones missing are
// named.
func TestPackagesBecomeCommands(t *testing.T) {
	_, c := serve(t)
	air := get(t, c, "io.github.domdomegg/airtable-mcp-server", "1.7.3")

	ch, err := Choose(&air.Server, "")
	if err != nil || ch.Kind() != "npm" {
		t.Fatalf("default choice: %v %v", ch.Kind(), err)
	}
	_, err = Build(air, ch, &BuildOptions{Resolve: found})
	var miss *MissingError
	if !errors.As(err, &miss) || len(miss.Fields) != 1 || miss.Fields[0].Name != "AIRTABLE_API_KEY" {
		t.Fatalf("missing token: %v", err)
	}
	if !strings.Contains(err.Error(), "env AIRTABLE_API_KEY (Airtable personal access token") || !strings.Contains(err.Error(), "--set NAME=VALUE") {
		t.Errorf("message: %v", err)
	}
	if f := ch.Fields(); len(f) != 1 || !f[0].Secret || !f[0].Required {
		t.Errorf("fields: %+v", f)
	}

	vals := map[string]string{"AIRTABLE_API_KEY": "pat123.abc123"}
	p, err := Build(air, ch, &BuildOptions{Values: vals, Resolve: found})
	if err != nil {
		t.Fatal(err)
	}
	s := p.Server
	if s.Name != "airtable-mcp-server" || s.Command != "npx" || !slices.Equal(s.Args, []string{"-y", "airtable-mcp-server@1.7.3"}) {
		t.Errorf("npm entry: %s %q", s.Command, s.Args)
	}
	if s.Env["AIRTABLE_API_KEY"] != "${keyring:airtable-mcp-server.AIRTABLE_API_KEY}" || p.Secrets["airtable-mcp-server.AIRTABLE_API_KEY"] != "pat123.abc123" {
		t.Errorf("secret: env %q secrets %q", s.Env, p.Secrets)
	}
	if s.Source != "registry:io.github.domdomegg/airtable-mcp-server@1.7.3" || p.Runtime != "npx" {
		t.Errorf("source %q runtime %q", s.Source, p.Runtime)
	}
	var b strings.Builder
	enc := registry.Encode(&registry.Config{Servers: []*registry.Server{s}})
	b.Write(enc)
	if strings.Contains(b.String(), "pat123") || !strings.Contains(b.String(), `source = "registry:io.github.domdomegg/airtable-mcp-server@1.7.3"`) {
		t.Errorf("servers.toml text:\n%s", b.String())
	}

	ch, _ = Choose(&air.Server, "oci")
	p, err = Build(air, ch, &BuildOptions{Values: vals, Resolve: func(cmd string) (string, error) {
		if cmd == "docker" {
			return "", exec.ErrNotFound
		}
		return "/usr/bin/" + cmd, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"run", "-i", "--rm", "-e", "AIRTABLE_API_KEY", "docker.io/domdomegg/airtable-mcp-server:1.7.3"}; p.Server.Command != "podman" || !slices.Equal(p.Server.Args, want) {
		t.Errorf("oci entry without docker: %s %q", p.Server.Command, p.Server.Args)
	}

	ch, _ = Choose(&air.Server, "mcpb")
	p, err = Build(air, ch, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Bundle == nil || p.Bundle.FileSHA256 != "0f28a9129cfebd262dfb77854c872355d21401bb3e056575b3027081f5d570ca" || p.Server.Source != "mcpb:io.github.domdomegg/airtable-mcp-server@1.7.3" {
		t.Errorf("mcpb plan: %+v", p)
	}

	weather := get(t, c, "io.github.example/weather-mcp", "")
	ch, _ = Choose(&weather.Server, "")
	p, err = Build(weather, ch, &BuildOptions{Values: map[string]string{"WEATHER_API_KEY": "k"}, Resolve: found})
	if err != nil {
		t.Fatal(err)
	}
	if p.Server.Command != "uvx" || !slices.Equal(p.Server.Args, []string{"weather-mcp-server==0.5.0"}) || p.Server.Env["WEATHER_UNITS"] != "celsius" {
		t.Errorf("pypi entry: %s %q %q", p.Server.Command, p.Server.Args, p.Server.Env)
	}
}

// TestArgumentsAndPlaceholders: the filesystem server's positional
// argument with a default, and its OCI package's --mount with {variables}.
func TestArgumentsAndPlaceholders(t *testing.T) {
	_, c := serve(t)
	fs := get(t, c, "io.github.modelcontextprotocol/filesystem", "1.0.2")
	ch, _ := Choose(&fs.Server, "npm")
	p, err := Build(fs, ch, &BuildOptions{Values: map[string]string{"target_dir": "/home/me/notes"}, Resolve: found})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Server.Args, []string{"-y", "@modelcontextprotocol/server-filesystem@1.0.2", "/home/me/notes"}) || p.Server.Env["LOG_LEVEL"] != "info" {
		t.Errorf("npm: %q %q", p.Server.Args, p.Server.Env)
	}

	ch, _ = Choose(&fs.Server, "oci")
	_, err = Build(fs, ch, &BuildOptions{Resolve: found})
	var miss *MissingError
	if !errors.As(err, &miss) || len(miss.Fields) != 1 || miss.Fields[0].Name != "source_path" || miss.Fields[0].Kind != "variable" {
		t.Fatalf("oci without source_path: %v", err)
	}
	p, err = Build(fs, ch, &BuildOptions{Values: map[string]string{"source_path": "/home/me/notes"}, Resolve: found})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"run", "-i", "--rm", "-e", "LOG_LEVEL", "--mount", "type=bind,src=/home/me/notes,dst=/project", "docker.io/mcp/filesystem:1.0.2", "/project"}
	if p.Server.Command != "docker" || !slices.Equal(p.Server.Args, want) {
		t.Errorf("oci:\n got %s %q\nwant docker %q", p.Server.Command, p.Server.Args, want)
	}
	names := []string{}
	for _, f := range ch.Fields() {
		names = append(names, f.Kind+":"+f.Name)
	}
	if !slices.Equal(names, []string{"variable:source_path", "variable:target_path", "env:LOG_LEVEL"}) {
		t.Errorf("oci fields: %q", names)
	}

	// server-everything: the stdio package, not the streamable-http one.
	ev := get(t, c, "io.github.modelcontextprotocol/server-everything", "")
	ch, _ = Choose(&ev.Server, "")
	p, err = Build(ev, ch, &BuildOptions{Name: "everything", Resolve: found})
	if err != nil {
		t.Fatal(err)
	}
	if p.Server.Name != "everything" || !slices.Equal(p.Server.Args, []string{"-y", "@modelcontextprotocol/server-everything@2.0.0", "stdio"}) {
		t.Errorf("everything: %q", p.Server.Args)
	}
}

// TestRemoteWithHeaders: a remote's secret header goes to the keyring, the
// other keeps its default; a value outside its choices is refused.
func TestRemoteWithHeaders(t *testing.T) {
	_, c := serve(t)
	h := get(t, c, "io.modelcontextprotocol.anonymous/hybrid-mcp", "")
	ch, err := Choose(&h.Server, "remote")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(h, ch, &BuildOptions{Values: map[string]string{"X-API-Key": "sk-live-1"}})
	if err != nil {
		t.Fatal(err)
	}
	s := p.Server
	if s.URL != "https://mcp.anonymous.modelcontextprotocol.io/http" || s.Command != "" || s.Transport() != registry.TransportHTTP || p.Runtime != "" {
		t.Errorf("remote: %+v", s)
	}
	if s.Headers["X-API-Key"] != "${keyring:hybrid-mcp.X-API-Key}" || s.Headers["X-Region"] != "us-east-1" || p.Secrets["hybrid-mcp.X-API-Key"] != "sk-live-1" {
		t.Errorf("headers %q secrets %q", s.Headers, p.Secrets)
	}
	_, err = Build(h, ch, &BuildOptions{Values: map[string]string{"X-API-Key": "k", "X-Region": "mars-1"}})
	if err == nil || !strings.Contains(err.Error(), `"mars-1" is not one of us-east-1, eu-west-1, ap-southeast-1`) {
		t.Errorf("bad choice: %v", err)
	}
	// The npm package's named argument: --mode and its default.
	ch, _ = Choose(&h.Server, "")
	p, err = Build(h, ch, &BuildOptions{Resolve: found})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Server.Args, []string{"-y", "@example/hybrid-mcp-server@1.5.0", "--mode", "local"}) {
		t.Errorf("npm with --mode: %q", p.Server.Args)
	}
}

func TestDeprecatedIsWarned(t *testing.T) {
	_, c := serve(t)
	w := get(t, c, "io.github.example/weather-mcp", "0.5.0")
	if w.Status() != "deprecated" {
		t.Fatalf("status %q", w.Status())
	}
	ch, _ := Choose(&w.Server, "")
	p, err := Build(w, ch, &BuildOptions{Values: map[string]string{"WEATHER_API_KEY": "k"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Warnings) == 0 || p.Warnings[0] != "io.github.example/weather-mcp 0.5.0 is deprecated in the registry: Please upgrade to version 2.0.0" {
		t.Errorf("warnings: %q", p.Warnings)
	}
}

func TestUnknownSchemaIsRefused(t *testing.T) {
	_, c := serve(t)
	old := get(t, c, "io.modelcontextprotocol/brave-search", "")
	ch := Choice{Package: &Package{RegistryType: "npm", Identifier: "x", Version: "1"}}
	_, err := Build(old, ch, nil)
	var se *SchemaError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "2025-07-09 snake_case format") {
		t.Fatalf("2025-07-09: %v", err)
	}
	for _, tt := range []struct{ schema, want string }{
		{"https://static.modelcontextprotocol.io/schemas/2027-01-01/server.schema.json", "unknown to this mcptray (it reads 2025-09-16 to 2025-12-11)"},
		{"https://static.modelcontextprotocol.io/schemas/draft/server.schema.json", "unknown to this mcptray"},
		{"https://example.com/server.json", "not a server.json schema URL"},
		{"https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json", ""},
	} {
		s := &ServerJSON{Name: "io.x/y", Schema: tt.schema}
		err := s.CheckSchema()
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s: %v, want %q", tt.schema, err, tt.want)
		}
	}
}

func TestMissingRuntimeSaysWhatToInstall(t *testing.T) {
	_, c := serve(t)
	w := get(t, c, "io.github.example/weather-mcp", "")
	ch, _ := Choose(&w.Server, "")
	_, err := Build(w, ch, &BuildOptions{Values: map[string]string{"WEATHER_API_KEY": "k"},
		Resolve: func(string) (string, error) { return "", exec.ErrNotFound }})
	var re *RuntimeError
	if !errors.As(err, &re) || re.Command != "uvx" || !strings.Contains(err.Error(), "install uv") {
		t.Fatalf("err = %v", err)
	}
}

func TestCheckUpdate(t *testing.T) {
	_, c := serve(t)
	u, err := c.CheckUpdate(context.Background(), "registry:io.github.domdomegg/airtable-mcp-server@1.7.2")
	if err != nil {
		t.Fatal(err)
	}
	if !u.Newer || u.Latest.Server.Version != "1.7.3" {
		t.Errorf("update: newer %v latest %s", u.Newer, u.Latest.Server.Version)
	}
	u, _ = c.CheckUpdate(context.Background(), "registry:io.github.domdomegg/airtable-mcp-server@1.7.3")
	if u.Newer {
		t.Error("1.7.3 is the latest")
	}
	if _, err := c.CheckUpdate(context.Background(), ""); !errors.Is(err, ErrNoSource) {
		t.Errorf("no source: %v", err)
	}
	for _, tt := range []struct {
		a, b string
		want int
	}{{"1.10.0", "1.9.0", 1}, {"1.0.0-beta", "1.0.0", -1}, {"1.0.0-beta.2", "1.0.0-beta.10", -1}, {"2.0.0", "2.0.0", 0}, {"v1.2", "1.1.9", 1}} {
		if got := CompareVersions(tt.a, tt.b); (got > 0) != (tt.want > 0) || (got < 0) != (tt.want < 0) {
			t.Errorf("CompareVersions(%s, %s) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

// TestFetchBundleChecksSHA256 serves a file and fetches it with the right
// and a wrong hash.
func TestFetchBundleChecksSHA256(t *testing.T) {
	content := []byte("PK\x03\x04 a bundle's bytes")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(content) }))
	defer srv.Close()
	c, _ := New(srv.URL, nil)
	sum := sha256.Sum256(content)
	dir := t.TempDir()
	pk := &Package{RegistryType: "mcpb", Identifier: srv.URL + "/x.mcpb", FileSHA256: hex.EncodeToString(sum[:])}
	p, err := c.FetchBundle(context.Background(), pk, dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); string(got) != string(content) {
		t.Errorf("downloaded %q", got)
	}
	os.Remove(p)
	pk.FileSHA256 = strings.Repeat("0", 64)
	if _, err := c.FetchBundle(context.Background(), pk, dir); err == nil || !strings.Contains(err.Error(), "not the file the publisher listed") {
		t.Errorf("wrong hash: %v", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("a refused download left %v", left)
	}
}
