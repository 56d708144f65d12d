package healthcheck

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/oauth2-proxy/mockoidc"

	"mcptray/registry"
)

// protectedServer is a real MCP server (the go-sdk's Streamable HTTP
// handler) behind the go-sdk's bearer-token middleware, whose tokens come
// from a real OpenID provider (mockoidc) on loopback. The authorization
// server metadata is served in front of mockoidc so it can name a
// revocation endpoint, which mockoidc lacks; revocations are recorded.
type protectedServer struct {
	oidc      *mockoidc.MockOIDC
	mcpURL    string
	asURL     string
	revoked   []string // token_type_hint of each revocation
	mu        sync.Mutex
	rejectIt  atomic.Value // string: an access token the server refuses once
	refreshes atomic.Int32 // refresh_token grants at the token endpoint
}

func startProtected(t *testing.T) *protectedServer {
	t.Helper()
	m, err := mockoidc.NewServer(nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &protectedServer{oidc: m}
	p.rejectIt.Store("")
	m.AddMiddleware(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == mockoidc.TokenEndpoint && r.ParseForm() == nil && r.Form.Get("grant_type") == "refresh_token" {
				p.refreshes.Add(1)
			}
			next.ServeHTTP(w, r)
		})
	})
	oln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(oln, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Shutdown() })

	as := http.NewServeMux()
	asSrv := httptest.NewServer(as)
	t.Cleanup(asSrv.Close)
	p.asURL = asSrv.URL
	as.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"issuer":                                p.asURL,
			"authorization_endpoint":                m.AuthorizationEndpoint(),
			"token_endpoint":                        m.TokenEndpoint(),
			"revocation_endpoint":                   p.asURL + "/revoke",
			"response_types_supported":              []string{"code"},
			"grant_types_supported":                 []string{"authorization_code", "refresh_token"},
			"code_challenge_methods_supported":      []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post"},
			"scopes_supported":                      []string{"openid", "email"},
		})
	})
	as.HandleFunc("/revoke", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		p.mu.Lock()
		p.revoked = append(p.revoked, r.Form.Get("token_type_hint"))
		p.mu.Unlock()
	})

	srv := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1.0.0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "whoami", Description: "says who you are"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "you"}}}, nil, nil
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	p.mcpURL = base + "/mcp"
	verify := func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		if token == p.rejectIt.Load().(string) {
			p.rejectIt.Store("")
			return nil, auth.ErrInvalidToken
		}
		tok, err := m.Keypair.VerifyJWT(token, m.Now)
		if err != nil {
			return nil, auth.ErrInvalidToken
		}
		exp, err := tok.Claims.(jwt.MapClaims).GetExpirationTime()
		if err != nil || exp == nil {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{Expiration: exp.Time}, nil
	}
	mux := http.NewServeMux()
	mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: p.mcpURL, AuthorizationServers: []string{p.asURL}, ScopesSupported: []string{"openid", "email"},
	}))
	mux.Handle("/mcp", auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{
		ResourceMetadataURL: base + "/.well-known/oauth-protected-resource/mcp",
	})(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)))
	hs := &http.Server{Handler: mux}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return p
}

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

func (p *protectedServer) login(t *testing.T, ctx context.Context) *Credential {
	t.Helper()
	cred, err := Login(ctx, &LoginOptions{
		Server:          &registry.Server{Name: "prot", URL: p.mcpURL},
		ClientID:        p.oidc.ClientID,
		ClientSecretEnv: "PROT_SECRET",
		Lookup: func(name string) (string, bool) {
			if name == "PROT_SECRET" {
				return p.oidc.ClientSecret, true
			}
			return "", false
		},
		OpenBrowser: followRedirects(t),
	})
	if err != nil {
		t.Fatalf("Login: %v", err)
	}
	return cred
}

func (p *protectedServer) lookup(name string) (string, bool) {
	if name == "PROT_SECRET" {
		return p.oidc.ClientSecret, true
	}
	return "", false
}

func TestSignInRefreshRevoke(t *testing.T) {
	p := startProtected(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	target := Target{Server: &registry.Server{Name: "prot", URL: p.mcpURL}}

	// Without a sign-in: auth-required, pointing at `mcptray auth login`.
	_, err := Connect(ctx, target, nil)
	var d *Diagnosis
	if !errors.As(err, &d) || d.Code != CodeAuthRequired || !strings.Contains(d.Fix, "mcptray auth login prot") {
		t.Fatalf("unsigned connect: %v", err)
	}

	// Checked without a config entry (`check URL`): the fix names the URL.
	_, err = Connect(ctx, Target{Server: &registry.Server{Name: "127.0.0.1:1", URL: p.mcpURL}}, nil)
	if !errors.As(err, &d) || !strings.Contains(d.Fix, "mcptray auth login "+p.mcpURL) {
		t.Fatalf("unsigned ad-hoc connect: %v", err)
	}

	cred := p.login(t, ctx)
	if cred.Registration != "pre-registered" || cred.ClientID != p.oidc.ClientID || cred.ClientSecret != "" || cred.ClientSecretEnv != "PROT_SECRET" {
		t.Errorf("credential: %+v", cred.Status())
	}
	if cred.Issuer != p.asURL || cred.RevocationURL != p.asURL+"/revoke" || cred.TokenURL != p.oidc.TokenEndpoint() {
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
	save := func(c *Credential) error { saveMu.Lock(); saved = append(saved, c); saveMu.Unlock(); return nil }
	sa := NewStoredAuth(cred, save, p.lookup, nil)
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
	p.oidc.FastForward(2 * time.Second) // a refreshed token differs from the first
	p.rejectIt.Store(cred.Token.AccessToken)
	s, err = Connect(ctx, target, opts)
	if err != nil {
		t.Fatalf("connect after a refused token: %v", err)
	}
	s.Close()
	if n := p.refreshes.Load(); n != 1 {
		t.Fatalf("%d refreshes after a 401, want 1", n)
	}
	if len(saved) == 0 || saved[len(saved)-1].Token.AccessToken == cred.Token.AccessToken {
		t.Fatalf("no refreshed token saved after a 401 (%d saves)", len(saved))
	}

	// The access token expires: refreshed before use.
	before := sa.Credential().Token.AccessToken
	p.oidc.FastForward(11 * time.Minute)
	s, err = Connect(ctx, target, opts)
	if err != nil {
		t.Fatalf("connect after expiry: %v", err)
	}
	s.Close()
	if sa.Credential().Token.AccessToken == before {
		t.Fatal("the expired access token was not refreshed")
	}

	// The refresh token expires too: sign-in required, saying why.
	p.oidc.FastForward(2 * time.Hour)
	_, err = Connect(ctx, target, opts)
	if !errors.As(err, &d) || d.Code != CodeAuthRequired || !strings.Contains(d.Message, "needs sign-in") || !strings.Contains(d.Fix, "auth login prot") {
		t.Fatalf("connect with an expired refresh token: %v", err)
	}

	// Sign-out revokes at the authorization server.
	ok, err := Revoke(ctx, sa.Credential(), p.lookup, nil)
	if err != nil || !ok {
		t.Fatalf("Revoke: %v %v", ok, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if strings.Join(p.revoked, ",") != "refresh_token,access_token" {
		t.Fatalf("revocations: %v", p.revoked)
	}
}

func TestSignInTimeoutAndNotNeeded(t *testing.T) {
	p := startProtected(t)
	// A person who never completes the flow: a clear timeout, no credential.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	cred, err := Login(ctx, &LoginOptions{
		Server:      &registry.Server{Name: "prot", URL: p.mcpURL},
		ClientID:    p.oidc.ClientID,
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
	_, err = Login(ctx2, &LoginOptions{Server: &registry.Server{Name: "prot", URL: p.mcpURL}, ClientID: "x",
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
