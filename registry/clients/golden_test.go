package clients

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/tailscale/hujson"
	"go.yaml.in/yaml/v3"

	"mcptray/registry"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// cases are the four server kinds every client's golden files cover.
func cases() map[string]*registry.Server {
	return map[string]*registry.Server{
		"stdio": {Name: "files", Autostart: true, Command: "npx",
			Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/home/me/Documents"}},
		"stdio-secret": {Name: "github", Autostart: true, Command: "npx",
			Args: []string{"-y", "@modelcontextprotocol/server-github"},
			Env:  map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "${env:GITHUB_PERSONAL_ACCESS_TOKEN}", "GITHUB_API_URL": "https://api.github.com"}},
		"http-secret": {Name: "remote", Autostart: true, URL: "https://mcp.example.com/mcp",
			Headers: map[string]string{"Authorization": "Bearer ${env:EXAMPLE_TOKEN}", "X-Tenant": "acme"}},
		"sse": {Name: "legacy", Autostart: true, URL: "https://sse.example.com/sse", TransportName: registry.TransportSSE},
	}
}

var caseNames = []string{"stdio", "stdio-secret", "http-secret", "sse"}

func fakeResolve(cmd string) (string, error) {
	if cmd == "npx" {
		return "/usr/local/bin/npx", nil
	}
	return "", errors.New("not found")
}

func goldenOpts(os string) *Options {
	return &Options{OS: os, HostOS: "linux", Resolve: fakeResolve, Home: "/home/me",
		ProjectDir: "/home/me/project", Getenv: func(string) string { return "" }}
}

func ext(f Format) string {
	switch f {
	case FormatYAML:
		return "yaml"
	case FormatTOML:
		return "toml"
	}
	return "json"
}

// parseReal parses data with a real parser of the client's format and
// returns it as plain values.
func parseReal(t *testing.T, f Format, data []byte) map[string]any {
	t.Helper()
	var v map[string]any
	var err error
	switch f {
	case FormatJSON:
		err = json.Unmarshal(data, &v)
	case FormatJSONC:
		var std []byte
		if std, err = hujson.Standardize(bytes.Clone(data)); err == nil {
			err = json.Unmarshal(std, &v)
		}
	case FormatYAML:
		err = yaml.Unmarshal(data, &v)
	case FormatTOML:
		_, err = toml.Decode(string(data), &v)
	}
	if err != nil {
		t.Fatalf("%s output does not parse: %v\n%s", f, err, data)
	}
	return v
}

func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./registry/clients -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs:\n%s", path, UnifiedDiff("want", "got", want, got))
	}
}

func TestGolden(t *testing.T) {
	for _, c := range All() {
		for _, cn := range caseNames {
			for _, goos := range []string{"linux", "darwin", "windows"} {
				t.Run(fmt.Sprintf("%s/%s/%s", c.ID, cn, goos), func(t *testing.T) {
					s := cases()[cn]
					o := goldenOpts(goos)
					res, err := c.Snippet([]*registry.Server{s}, o)
					if err != nil {
						t.Fatal(err)
					}
					base := filepath.Join("testdata", "golden", c.ID, cn+"."+goos)
					checkGolden(t, base+"."+ext(c.Format), res.Data)
					checkNoMask(t, res)
					doc := parseReal(t, c.Format, res.Data)
					checkShape(t, c, s, doc)
					if c.HasCLI() {
						r, err := c.CLI([]*registry.Server{s}, o)
						if err != nil {
							t.Fatal(err)
						}
						checkGolden(t, base+".cli.txt", r.Data)
						checkNoMask(t, r)
					}
					if c.HasDeepLink() {
						r, err := c.DeepLinks([]*registry.Server{s}, o)
						if err != nil {
							t.Fatal(err)
						}
						checkGolden(t, base+".link.txt", r.Data)
						checkNoMask(t, r)
					}
				})
			}
		}
	}
}

// checkNoMask checks that output meant to be pasted or run never carries
// the display mask as a value, and that a hidden secret is said.
func checkNoMask(t *testing.T, r *Result) {
	t.Helper()
	if strings.Contains(string(r.Data), registry.Masked) {
		t.Errorf("output holds the mask %s as a value:\n%s", registry.Masked, r.Data)
	}
	if strings.Contains(string(r.Data), Hidden) || strings.Contains(string(r.Data), url.QueryEscape(Hidden)) {
		said := false
		for _, w := range r.Warnings {
			said = said || strings.Contains(w, "not a working value")
		}
		if !said {
			t.Errorf("%s written without a warning: %q", Hidden, r.Warnings)
		}
	}
}

// checkShape checks the parsed snippet against the client's documented
// shape: the top-level key, the name, and the fields a kind needs.
func checkShape(t *testing.T, c *Client, s *registry.Server, doc map[string]any) {
	t.Helper()
	var entry map[string]any
	switch top := doc[c.Key[0]].(type) {
	case map[string]any:
		entry, _ = top[s.Name].(map[string]any)
	case []any:
		for _, e := range top {
			if m, ok := e.(map[string]any); ok && m["name"] == s.Name {
				entry = m
			}
		}
	}
	if entry == nil {
		t.Fatalf("no entry %q under %q in %v", s.Name, c.Key[0], doc)
	}
	bridged := s.IsRemote() && (c.Bridge || (s.Transport() == registry.TransportSSE && c.shape.noSSE))
	switch {
	case !s.IsRemote() || bridged:
		if _, ok := entry[c.shape.command]; !ok {
			t.Errorf("stdio entry lacks %q: %v", c.shape.command, entry)
		}
	default:
		if k := c.shape.urlKey(s.Transport()); entry[k] != s.URL {
			t.Errorf("remote entry %q = %v, want %s", k, entry[k], s.URL)
		}
		want := c.shape.httpType
		if s.Transport() == registry.TransportSSE {
			want = c.shape.sseType
		}
		if got, _ := entry["type"].(string); got != want {
			t.Errorf("type = %q, want %q", got, want)
		}
	}
	if c.Ref == nil {
		if strings.Contains(fmt.Sprint(entry), "${env:") {
			t.Errorf("client without references got one: %v", entry)
		}
	}
	if strings.Contains(fmt.Sprint(entry), "acme") || strings.Contains(fmt.Sprint(entry), "api.github.com") {
		t.Errorf("literal secret not masked: %v", entry)
	}
}
