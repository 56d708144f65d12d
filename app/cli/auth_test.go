//go:build unix

// Unix only: the browser that signs in is an sh script (browserScript,
// auth_conformance_test.go).

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mcptray/healthcheck/authtest"
)

// TestSignInAsAUser: a protected remote server is `sign-in-required` in
// check (not failed), with the command to run; `auth login` signs in in the
// "browser" (a program following the redirects) against a real
// authorization server; check is then ready; `auth status` lists the
// sign-in without its tokens; `auth logout` revokes them, and the server
// needs sign-in again. No token lands in servers.toml.
func TestSignInAsAUser(t *testing.T) {
	p := authtest.Start(t)
	dir := t.TempDir()
	browser := filepath.Join(dir, "browser.js")
	os.WriteFile(browser, []byte(browserScript), 0o755)
	env := append(secretsEnv(dir), "BROWSER="+browser)
	cfg := filepath.Join(dir, "servers.toml")
	os.WriteFile(cfg, []byte("[servers.prot]\nurl = \""+p.MCPURL+"\"\n"), 0o600)

	out, err := runWith(t, env, "", "check", "--config", cfg, "--timeout", "10s")
	if err == nil || !strings.Contains(out, "sign-in-required") || !strings.Contains(out, "mcptray auth login prot") {
		t.Fatalf("check before sign-in: %v\n%s", err, out)
	}
	out, err = runWith(t, env, "", "auth", "login", "--config", cfg, "--timeout", "30s", "prot")
	if err != nil || !strings.Contains(out, "Signed in to prot") || !strings.Contains(out, "dynamic registration") {
		t.Fatalf("auth login: %v\n%s", err, out)
	}
	out, err = runWith(t, env, "", "check", "--config", cfg, "--timeout", "10s", "--json")
	if err != nil || !strings.Contains(out, `"status": "ready"`) {
		t.Fatalf("check after sign-in: %v\n%s", err, out)
	}
	out, err = runWith(t, env, "", "auth", "status", "--json")
	if err != nil || !strings.Contains(out, p.MCPURL) || !strings.Contains(out, `"hasRefreshToken": true`) {
		t.Fatalf("auth status: %v\n%s", err, out)
	}
	store, _ := os.ReadFile(filepath.Join(dir, "data", "mcptray", "secrets.json"))
	toml, _ := os.ReadFile(cfg)
	if !strings.Contains(string(store), "accessToken") && !strings.Contains(string(store), "access_token") {
		t.Fatalf("no token in the secret store:\n%s", store)
	}
	if strings.Contains(string(toml), "token") || strings.Contains(out, "access_token") {
		t.Fatalf("a token outside the secret store:\n%s\n%s", toml, out)
	}
	out, err = runWith(t, env, "", "auth", "logout", "--config", cfg, "prot")
	if err != nil || !strings.Contains(out, "revoked the tokens") {
		t.Fatalf("auth logout: %v\n%s", err, out)
	}
	if r := p.Revoked(); len(r) != 2 {
		t.Fatalf("revocations at the authorization server: %v", r)
	}
	out, err = runWith(t, env, "", "check", "--config", cfg, "--timeout", "10s")
	if err == nil || !strings.Contains(out, "sign-in-required") {
		t.Fatalf("check after sign-out: %v\n%s", err, out)
	}
	// A sign-in that is never completed: a clear timeout, nothing kept.
	out, err = runWith(t, append(env, "BROWSER=true"), "", "auth", "login", "--config", cfg, "--timeout", "2s", "prot")
	if err == nil || !strings.Contains(out, "not completed in the browser in time") {
		t.Fatalf("abandoned auth login: %v\n%s", err, out)
	}
	if out, _ := runWith(t, env, "", "auth", "status"); !strings.Contains(out, "Not signed in") {
		t.Fatalf("an abandoned sign-in left something:\n%s", out)
	}
}
