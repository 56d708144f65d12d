//go:build unix

package app

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
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
