// Package authtest runs a protected MCP server for sign-in tests: a real
// MCP server (the go-sdk's Streamable HTTP handler) behind the go-sdk's
// bearer-token middleware, with a real OpenID provider (mockoidc) on
// loopback as its authorization server. Tests only.
package authtest

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/oauth2-proxy/mockoidc"
)

// Server is a real MCP server (the go-sdk's Streamable HTTP
// handler) behind the go-sdk's bearer-token middleware, whose tokens come
// from a real OpenID provider (mockoidc) on loopback. The authorization
// server metadata is served in front of mockoidc so it can name a
// revocation endpoint, which mockoidc lacks; revocations are recorded.
type Server struct {
	OIDC   *mockoidc.MockOIDC
	MCPURL string // the protected MCP endpoint
	ASURL  string // the authorization server (metadata, registration, revocation)
	// RejectOnce holds an access token the MCP server refuses once (as if
	// revoked on its side).
	RejectOnce atomic.Value
	// Refreshes counts refresh_token grants at the token endpoint.
	Refreshes atomic.Int32

	mu      sync.Mutex
	revoked []string // token_type_hint of each revocation
}

// Revoked lists the token_type_hint of each revocation request.
func (p *Server) Revoked() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.revoked)
}

// Lookup resolves PROT_SECRET to the pre-registered client's secret.
func (p *Server) Lookup(name string) (string, bool) {
	if name == "PROT_SECRET" {
		return p.OIDC.ClientSecret, true
	}
	return "", false
}

// Start runs the servers until the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	m, err := mockoidc.NewServer(nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &Server{OIDC: m}
	p.RejectOnce.Store("")
	m.AddMiddleware(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == mockoidc.TokenEndpoint && r.ParseForm() == nil && r.Form.Get("grant_type") == "refresh_token" {
				p.Refreshes.Add(1)
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
	p.ASURL = asSrv.URL
	as.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"issuer":                                p.ASURL,
			"authorization_endpoint":                m.AuthorizationEndpoint(),
			"token_endpoint":                        m.TokenEndpoint(),
			"revocation_endpoint":                   p.ASURL + "/revoke",
			"registration_endpoint":                 p.ASURL + "/register",
			"response_types_supported":              []string{"code"},
			"grant_types_supported":                 []string{"authorization_code", "refresh_token"},
			"code_challenge_methods_supported":      []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post"},
			"scopes_supported":                      []string{"openid", "email"},
		})
	})
	as.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		// Dynamic registration hands out the one client mockoidc knows.
		var req map[string]any
		json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(map[string]any{"client_id": m.ClientID, "client_secret": m.ClientSecret,
			"redirect_uris": req["redirect_uris"], "token_endpoint_auth_method": "client_secret_post"})
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
	p.MCPURL = base + "/mcp"
	verify := func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		if token == p.RejectOnce.Load().(string) {
			p.RejectOnce.Store("")
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
		Resource: p.MCPURL, AuthorizationServers: []string{p.ASURL}, ScopesSupported: []string{"openid", "email"},
	}))
	mux.Handle("/mcp", auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{
		ResourceMetadataURL: base + "/.well-known/oauth-protected-resource/mcp",
	})(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)))
	hs := &http.Server{Handler: mux}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return p
}
