package cli

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/demo"
)

// bearerOnly is a server that wants a bearer token and offers no OAuth
// sign-in: 401 with a Bearer challenge, and every metadata URL 404.
func bearerOnly(t *testing.T, token string) *httptest.Server {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return demo.NewServer("", nil) }, &mcp.StreamableHTTPOptions{Stateless: true})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/.well-known/") {
			http.NotFound(w, r)
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+token {
			w.Header().Set("WWW-Authenticate", `Bearer realm="example"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A bearer challenge from a server with no OAuth metadata is
// auth-required (failed), its fix puts a token in headers through the
// keyring, `auth login` says the same instead of a registration error, and
// following the fix makes the server ready.
func TestBearerOnlyFixWorksWhenFollowed(t *testing.T) {
	const token = "provider-issued-token"
	srv := bearerOnly(t, token)
	dir := t.TempDir()
	env := secretsEnv(dir)
	cfg := filepath.Join(dir, "servers.toml")
	writeFile(t, cfg, fmt.Sprintf("[servers.tokened]\nurl = %q\n", srv.URL+"/mcp"))

	out, err := runWith(t, env, "", "check", "--config", cfg, "--timeout", "10s")
	const secretCmd = "mcptray secret set TOKENED_TOKEN"
	const header = `Authorization = "Bearer ${keyring:TOKENED_TOKEN}" under [servers.tokened.headers]`
	if err == nil || !strings.Contains(out, "auth-required") || strings.Contains(out, "sign-in-required") ||
		!strings.Contains(out, secretCmd) || !strings.Contains(out, header) || strings.Contains(out, "auth login") {
		t.Fatalf("check of a bearer-only server: %v\n%s", err, out)
	}
	out, err = runWith(t, append(env, "BROWSER=true"), "", "auth", "login", "--config", cfg, "--timeout", "10s", "tokened")
	if err == nil || !strings.Contains(out, "offers no OAuth sign-in") || !strings.Contains(out, secretCmd) || strings.Contains(out, "register") {
		t.Fatalf("auth login on a bearer-only server: %v\n%s", err, out)
	}

	// Follow the fix: the secret, then the header.
	if out, err := runWith(t, env, token+"\n", "secret", "set", "TOKENED_TOKEN"); err != nil {
		t.Fatalf("secret set: %v\n%s", err, out)
	}
	f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, "\n[servers.tokened.headers]\nAuthorization = \"Bearer ${keyring:TOKENED_TOKEN}\"")
	f.Close()
	out, err = runWith(t, env, "", "check", "--config", cfg, "--timeout", "10s", "--json")
	if err != nil || !strings.Contains(out, `"status": "ready"`) {
		t.Fatalf("check after following the fix: %v\n%s", err, out)
	}
	if strings.Contains(out, token) {
		t.Fatalf("the token shows in check:\n%s", out)
	}
}

// Each diagnosis whose fix a test can carry out: check names the code and
// the fix; doing what the fix says (the command it names, the change to
// servers.toml or to the environment it asks for) makes check ready.
func TestFixesWorkWhenFollowed(t *testing.T) {
	bin := mcptrayBinary(t)
	demoHTTP := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return demo.NewServer("", nil) }, &mcp.StreamableHTTPOptions{Stateless: true}))
	defer demoHTTP.Close()
	sseDemo := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return demo.NewServer("", nil) }, nil))
	defer sseDemo.Close()
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return demo.NewServer("", nil) }, &mcp.StreamableHTTPOptions{Stateless: true}))
	onlyMCP := httptest.NewServer(mux)
	defer onlyMCP.Close()
	port := freePort(t)
	stdio := func(extra string) string {
		return fmt.Sprintf("[servers.s]\ncommand = %q\nargs = [\"serve-demo\"]\n%s", bin, extra)
	}
	for _, tt := range []struct {
		name, config, code, fix string
		unix                    bool // the fix is Unix's (an execute bit)
		// follow carries out the fix in dir (servers.toml is dir/servers.toml)
		// and returns the environment to check with.
		follow func(t *testing.T, dir string, env []string) []string
	}{
		{
			name: "a secret not stored", config: stdio("env = { DEMO_KEY = \"${keyring:DEMO_KEY}\" }\n"),
			code: "unset-variable", fix: "run `mcptray secret set DEMO_KEY`",
			follow: func(t *testing.T, dir string, env []string) []string {
				if out, err := runWith(t, env, "value\n", "secret", "set", "DEMO_KEY"); err != nil {
					t.Fatalf("secret set: %v\n%s", err, out)
				}
				return env
			},
		},
		{
			name: "a variable not set", config: stdio("env = { DEMO_KEY = \"${env:DEMO_FIX_VAR}\" }\n"),
			code: "unset-variable", fix: "Set DEMO_FIX_VAR in your shell profile",
			follow: func(t *testing.T, dir string, env []string) []string { return append(env, "DEMO_FIX_VAR=1") },
		},
		{
			name: "a missing folder", config: stdio("cwd = '{{dir}}/work'\n"),
			code: "bad-cwd", fix: "Create the folder",
			follow: func(t *testing.T, dir string, env []string) []string {
				if err := os.Mkdir(filepath.Join(dir, "work"), 0o755); err != nil {
					t.Fatal(err)
				}
				return env
			},
		},
		{
			name: "a script not executable", config: "[servers.s]\ncommand = '{{dir}}/run.sh'\n", unix: true,
			code: "permission-denied", fix: "chmod +x {{dir}}/run.sh",
			follow: func(t *testing.T, dir string, env []string) []string {
				if err := os.Chmod(filepath.Join(dir, "run.sh"), 0o755); err != nil {
					t.Fatal(err)
				}
				return env
			},
		},
		{
			name: "a url without its path", config: fmt.Sprintf("[servers.s]\nurl = %q\n", onlyMCP.URL+"/"),
			code: "http-status", fix: "Streamable HTTP servers usually serve /mcp",
			follow: func(t *testing.T, dir string, env []string) []string {
				writeFile(t, filepath.Join(dir, "servers.toml"), fmt.Sprintf("[servers.s]\nurl = %q\n", onlyMCP.URL+"/mcp"))
				return env
			},
		},
		{
			name: "a server not started", config: fmt.Sprintf("[servers.s]\nurl = \"http://127.0.0.1:%d/mcp\"\n", port),
			code: "connection-refused", fix: "Start the server",
			follow: func(t *testing.T, dir string, env []string) []string {
				ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
				if err != nil {
					t.Fatal(err)
				}
				s := &http.Server{Handler: mux}
				go s.Serve(ln)
				t.Cleanup(func() { s.Close() })
				return env
			},
		},
		{
			name: "an old SSE endpoint", config: fmt.Sprintf("[servers.s]\nurl = %q\n", sseDemo.URL),
			code: "deprecated-transport", fix: `Set transport = "sse"`,
			follow: func(t *testing.T, dir string, env []string) []string {
				appendFile(t, filepath.Join(dir, "servers.toml"), "transport = \"sse\"\n")
				return env
			},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.unix && runtime.GOOS == "windows" {
				t.Skip("Windows has no execute bit: a script runs by its extension's program")
			}
			dir := t.TempDir()
			env := secretsEnv(dir)
			cfg := filepath.Join(dir, "servers.toml")
			writeFile(t, cfg, strings.ReplaceAll(tt.config, "{{dir}}", dir))
			os.WriteFile(filepath.Join(dir, "run.sh"), []byte(fmt.Sprintf("#!/bin/sh\nexec %q serve-demo\n", bin)), 0o644)
			out, _ := runWith(t, env, "", "check", "--config", cfg, "--timeout", "20s", "--json")
			if fix := strings.ReplaceAll(tt.fix, "{{dir}}", dir); !strings.Contains(out, `"code": "`+tt.code+`"`) || !strings.Contains(out, jsonText(fix)) {
				t.Fatalf("check before the fix: want %s with %q\n%s", tt.code, fix, out)
			}
			env = tt.follow(t, dir, env)
			out, err := runWith(t, env, "", "check", "--config", cfg, "--timeout", "20s", "--json")
			if err != nil || !strings.Contains(out, `"status": "ready"`) || strings.Contains(out, `"code": "`+tt.code+`"`) {
				t.Fatalf("check after following %q: %v\n%s", tt.fix, err, out)
			}
		})
	}
}

// jsonText is s as it reads inside a JSON string.
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return strings.Trim(string(b), `"`)
}

func appendFile(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}
