package healthcheck

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/healthcheck/authtest"
	"mcptray/registry"
)

// followRedirects plays the person's browser: it opens the authorization
// URL and follows the redirects back to mcptray's loopback listener.
func followRedirects(t *testing.T) func(string) error {
	return func(u string) error {
		go func() {
			resp, err := http.Get(u)
			if err != nil {
				t.Logf("browser: %v", err)
				return
			}
			resp.Body.Close()
		}()
		return nil
	}
}

func login(t *testing.T, p *authtest.Server, ctx context.Context) *Credential {
	t.Helper()
	cred, err := Login(ctx, &LoginOptions{
		Server:          &registry.Server{Name: "prot", URL: p.MCPURL},
		ClientID:        p.OIDC.ClientID,
		ClientSecretEnv: "PROT_SECRET",
		Lookup:          p.Lookup,
		OpenBrowser:     followRedirects(t),
	})
	if err != nil {
		t.Fatalf("Login: %v", err)
	}
	return cred
}

func TestSignInRefreshRevoke(t *testing.T) {
	p := authtest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	target := Target{Server: &registry.Server{Name: "prot", URL: p.MCPURL}}

	// Without a sign-in: auth-required, pointing at `mcptray auth login`.
	_, err := Connect(ctx, target, nil)
	var d *Diagnosis
	if !errors.As(err, &d) || d.Code != CodeAuthRequired || !strings.Contains(d.Fix, "mcptray auth login prot") || !errors.Is(err, ErrSignInRequired) {
		t.Fatalf("unsigned connect: %v", err)
	}

	// Checked without a config entry (`check URL`): the fix names the URL.
	_, err = Connect(ctx, Target{Server: &registry.Server{Name: "127.0.0.1:1", URL: p.MCPURL}}, nil)
	if !errors.As(err, &d) || !strings.Contains(d.Fix, "mcptray auth login "+p.MCPURL) {
		t.Fatalf("unsigned ad-hoc connect: %v", err)
	}

	cred := login(t, p, ctx)
	if cred.Registration != "pre-registered" || cred.ClientID != p.OIDC.ClientID || cred.ClientSecret != "" || cred.ClientSecretEnv != "PROT_SECRET" {
		t.Errorf("credential: %+v", cred.Status())
	}
	if cred.Issuer != p.ASURL || cred.RevocationURL != p.ASURL+"/revoke" || cred.TokenURL != p.OIDC.TokenEndpoint() {
		t.Errorf("credential endpoints: issuer %q revocation %q token %q", cred.Issuer, cred.RevocationURL, cred.TokenURL)
	}
	if cred.Token == nil || cred.Token.AccessToken == "" || cred.Token.RefreshToken == "" {
		t.Fatalf("credential token: %+v", cred.Token)
	}
	b, _ := json.Marshal(cred.Status())
	if strings.Contains(string(b), cred.Token.AccessToken) || strings.Contains(string(b), cred.Token.RefreshToken) {
		t.Fatalf("Status carries a token: %s", b)
	}

	var saved []*Credential
	var saveMu sync.Mutex
	var storeDown atomic.Bool
	save := func(c *Credential) error {
		if storeDown.Load() {
			return errors.New("the secret store is locked")
		}
		saveMu.Lock()
		saved = append(saved, c)
		saveMu.Unlock()
		return nil
	}
	sa := NewStoredAuth(cred, save, p.Lookup, nil)
	opts := &Options{Authorizer: func(string) auth.OAuthHandler { return sa }}
	s, err := Connect(ctx, target, opts)
	if err != nil {
		t.Fatalf("signed-in connect: %v", err)
	}
	if r := s.Report(); len(r.Tools) != 1 || r.Tools[0].Name != "whoami" {
		t.Fatalf("tools: %+v", r.Tools)
	}
	s.Close()
	if len(saved) != 0 {
		t.Fatalf("a valid token was saved again: %d", len(saved))
	}

	// The server refuses the token once (revoked on its side): one
	// refresh, the new token saved, the connection made.
	p.OIDC.FastForward(2 * time.Second) // a refreshed token differs from the first
	p.RejectOnce.Store(cred.Token.AccessToken)
	s, err = Connect(ctx, target, opts)
	if err != nil {
		t.Fatalf("connect after a refused token: %v", err)
	}
	s.Close()
	if n := p.Refreshes.Load(); n != 1 {
		t.Fatalf("%d refreshes after a 401, want 1", n)
	}
	if len(saved) == 0 || saved[len(saved)-1].Token.AccessToken == cred.Token.AccessToken {
		t.Fatalf("no refreshed token saved after a 401 (%d saves)", len(saved))
	}

	// The access token expires: refreshed before use. A refreshed token
	// the store refuses is shown, not swallowed.
	before := sa.Credential().Token.AccessToken
	p.OIDC.FastForward(11 * time.Minute)
	storeDown.Store(true)
	s, err = Connect(ctx, target, opts)
	if err != nil {
		t.Fatalf("connect after expiry: %v", err)
	}
	if d := findDiagnosis(s.Report(), CodeTokenNotSaved); d == nil || !strings.Contains(strings.Join(d.Evidence, " "), "the secret store is locked") {
		t.Fatalf("a refreshed token that was not saved: %+v", s.Report().Diagnoses)
	}
	s.Close()
	storeDown.Store(false)
	if sa.Credential().Token.AccessToken == before {
		t.Fatal("the expired access token was not refreshed")
	}

	// The refresh token expires too: sign-in required, saying why.
	p.OIDC.FastForward(2 * time.Hour)
	_, err = Connect(ctx, target, opts)
	if !errors.As(err, &d) || d.Code != CodeAuthRequired || !strings.Contains(d.Message, "needs sign-in") || !strings.Contains(d.Fix, "auth login prot") {
		t.Fatalf("connect with an expired refresh token: %v", err)
	}

	// Sign-out revokes at the authorization server.
	ok, err := Revoke(ctx, sa.Credential(), p.Lookup, nil)
	if err != nil || !ok {
		t.Fatalf("Revoke: %v %v", ok, err)
	}
	if r := p.Revoked(); strings.Join(r, ",") != "refresh_token,access_token" {
		t.Fatalf("revocations: %v", r)
	}
}

func TestSignInTimeoutAndNotNeeded(t *testing.T) {
	p := authtest.Start(t)
	// A person who never completes the flow: a clear timeout, no credential.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	cred, err := Login(ctx, &LoginOptions{
		Server:      &registry.Server{Name: "prot", URL: p.MCPURL},
		ClientID:    p.OIDC.ClientID,
		OpenBrowser: func(string) error { return nil },
	})
	if cred != nil || err == nil || !strings.Contains(err.Error(), "not completed in the browser in time") {
		t.Fatalf("abandoned sign-in: %v, %v", cred, err)
	}

	// A server that asks for nothing.
	srv := mcp.NewServer(&mcp.Implementation{Name: "open", Version: "1"}, nil)
	open := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer open.Close()
	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	_, err = Login(ctx2, &LoginOptions{Server: &registry.Server{Name: "open", URL: open.URL}, OpenBrowser: func(string) error {
		t.Error("the browser was opened for a server that asks for nothing")
		return nil
	}})
	if !errors.Is(err, ErrNoSignInNeeded) {
		t.Fatalf("sign-in to an open server: %v", err)
	}

	// A secret variable that is not set is said before anything happens.
	_, err = Login(ctx2, &LoginOptions{Server: &registry.Server{Name: "prot", URL: p.MCPURL}, ClientID: "x",
		ClientSecretEnv: "NOPE_SECRET", Lookup: func(string) (string, bool) { return "", false }, OpenBrowser: func(string) error { return nil }})
	if err == nil || !strings.Contains(err.Error(), "$NOPE_SECRET") {
		t.Fatalf("unset secret variable: %v", err)
	}
}

func TestRedirectReceiverRefusal(t *testing.T) {
	r, err := newRedirectReceiver()
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	if !strings.HasPrefix(r.redirectURL, "http://127.0.0.1:") {
		t.Fatalf("redirect URL %q is not loopback", r.redirectURL)
	}
	go func() {
		resp, err := http.Get(r.redirectURL + "?error=access_denied&error_description=the+user+said+no")
		if err == nil {
			resp.Body.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = r.wait(ctx)
	if err == nil || !strings.Contains(err.Error(), "access_denied: the user said no") {
		t.Fatalf("refused sign-in: %v", err)
	}
}
