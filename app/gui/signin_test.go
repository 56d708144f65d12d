package gui

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"mcptray/app"
	"mcptray/healthcheck"
	"mcptray/healthcheck/authtest"
	"mcptray/registry"
	"mcptray/registry/secrets"
	"mcptray/supervisor"
)

const browserJS = `#!/usr/bin/env node
fetch(process.argv[2], {redirect: "follow"}).then(r => r.text()).then(() => process.exit(0), e => { console.error(e.message); process.exit(1) })
`

// TestSignInFromTheApp: a remote server that needs sign-in offers Sign in
// in the tray and on its diagnosis card; Sign in runs the real flow
// against a real authorization server (the browser is a program that
// follows the redirects), keeps the tokens and restarts the server.
func TestSignInFromTheApp(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node is not on PATH (the test's browser runs on it)")
	}
	p := authtest.Start(t)
	dir := t.TempDir()
	t.Setenv("MCPTRAY_KEYRING", "file")
	t.Setenv("XDG_DATA_HOME", filepath.Join(dir, "data"))
	browser := filepath.Join(dir, "browser.js")
	os.WriteFile(browser, []byte(browserJS), 0o755)

	srv := &registry.Server{Name: "prot", URL: p.MCPURL, Autostart: true}
	snap := sampleSnapshot()
	snap.Servers = append(snap.Servers, supervisor.ServerState{Name: "prot", Server: srv, Transport: srv.Transport(),
		State: supervisor.StateFailed, Since: t0, Reason: "needs sign-in",
		Diagnosis: &healthcheck.Diagnosis{Code: healthcheck.CodeAuthRequired, Message: p.MCPURL + " requires authorisation (HTTP 401 Unauthorized).",
			Fix: "Sign in: run `mcptray auth login prot` (or use Sign in in the app)."}})
	eng := newFakeEngine(snap)

	menu := buildTrayMenu(snap, nil, "", trayActions{signIn: func(string) {}})
	item := func(prefix string) *fyne.MenuItem {
		for _, it := range menu.Items {
			if strings.HasPrefix(it.Label, prefix) {
				return it
			}
		}
		t.Fatalf("no %q in the tray menu", prefix)
		return nil
	}
	prot := item("prot: ")
	if first := prot.ChildMenu.Items[0].Label; first != "Sign in…" {
		t.Fatalf("tray submenu of a server that needs sign-in starts with %q", first)
	}
	if item("demo: ").ChildMenu.Items[0].Label == "Sign in…" {
		t.Fatal("a ready stdio server offers Sign in")
	}

	c := newTestController(t, eng, "")
	c.env = &app.Env{LookupEnv: func(k string) (string, bool) {
		if k == "BROWSER" {
			return browser, true
		}
		return os.LookupEnv(k)
	}}
	c.apply(eng.Snapshot())
	m := c.main
	m.selectServer("demo")
	if m.signInRow.Visible() {
		t.Fatal("Sign in shown for a server that does not need it")
	}
	m.selectServer("prot")
	if !m.signInRow.Visible() {
		t.Fatal("no Sign in on the card of a server that needs sign-in")
	}
	test.Tap(m.signIn)
	eng.waitCommand(t, "restart prot")

	st, err := secrets.Open(nil)
	if err != nil {
		t.Fatal(err)
	}
	cred, err := app.LoadCredential(st, p.MCPURL)
	if err != nil || cred == nil || cred.Token == nil || cred.Token.AccessToken == "" {
		t.Fatalf("no sign-in kept: %v %+v", err, cred)
	}
	if cred.Registration != "dynamic" || time.Until(cred.Token.Expiry) <= 0 {
		t.Errorf("kept sign-in: %+v", cred.Status())
	}
}

// TestFormKeepsSecretsInTheKeyring: a literal secret in the form is a hint,
// not a blocked Save, and "Keep in the keyring" stores it and writes a
// ${keyring:} reference in its place.
func TestFormKeepsSecretsInTheKeyring(t *testing.T) {
	test.NewTempApp(t)
	dir := t.TempDir()
	t.Setenv("MCPTRAY_KEYRING", "file")
	t.Setenv("XDG_DATA_HOME", filepath.Join(dir, "data"))
	f := newServerForm(&registry.Server{Name: "gh", Command: "gh-mcp", Env: map[string]string{"GITHUB_TOKEN": "ghp_literal", "LOG_LEVEL": "debug"}}, nil)
	f.keep = func(s *registry.Server) (*registry.Server, []string, string, error) {
		return app.KeepSecrets(&app.Env{}, s)
	}
	if !f.validate() {
		t.Fatalf("a literal secret blocks Save: %s", f.problemText())
	}
	if !f.keepRows["env"].Visible() {
		t.Fatal("no Keep in the keyring for a literal secret")
	}
	test.Tap(f.keepBtns["env"])
	s, _ := f.server()
	if s.Env["GITHUB_TOKEN"] != "${keyring:gh.GITHUB_TOKEN}" || s.Env["LOG_LEVEL"] != "debug" {
		t.Fatalf("env after keeping: %v", s.Env)
	}
	if f.keepRows["env"].Visible() {
		t.Error("the offer stays after the secret was kept")
	}
	st, _ := secrets.Open(nil)
	if v, err := st.Get(secrets.SecretKey("gh.GITHUB_TOKEN")); err != nil || v != "ghp_literal" {
		t.Fatalf("kept secret: %q, %v", v, err)
	}
}
