package healthcheck

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"mcptray/internal/clock"
	"mcptray/registry"
)

// LoginOptions tunes [Login].
type LoginOptions struct {
	// Server is the remote server, references resolved.
	Server *registry.Server
	// A pre-registered client: ClientID, with its secret (read from
	// ClientSecretEnv through Lookup; empty for a public client).
	ClientID        string
	ClientSecretEnv string
	Lookup          registry.LookupFunc
	// ClientMetadataURL is this install's Client ID Metadata Document
	// (an https URL), tried before dynamic registration.
	ClientMetadataURL string
	// Scopes, when set, are requested instead of the ones the server names.
	Scopes []string
	// OpenBrowser shows the authorization URL to the person (required).
	OpenBrowser func(authURL string) error
	// HTTPClient is the base client (nil: a default one).
	HTTPClient *http.Client
	// ClientName and ClientVersion identify mcptray.
	ClientName, ClientVersion string
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// ErrNoSignInNeeded means the server answered without asking for
// authorization.
var ErrNoSignInNeeded = errors.New("the server does not ask for sign-in: it answers without a token")

// Login runs the authorization flow against opts.Server: it opens the
// browser on the authorization server, waits for the redirect on a
// loopback listener (127.0.0.1, a random port), exchanges the code, and
// proves the token by connecting. Nothing is kept when it fails; the caller
// stores the Credential it returns. ctx bounds the whole flow: a person who
// never completes it gets ctx's error.
func Login(ctx context.Context, opts *LoginOptions) (*Credential, error) {
	o := *opts
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.ClientName == "" {
		o.ClientName = DefaultClientName
	}
	if o.ClientVersion == "" {
		o.ClientVersion = DefaultClientVersion
	}
	srv := o.Server
	if srv == nil || srv.URL == "" {
		return nil, errors.New("sign-in needs a remote server's URL")
	}
	recv, err := newRedirectReceiver()
	if err != nil {
		return nil, err
	}
	defer recv.close()

	meta := &metadataRecorder{}
	base := o.HTTPClient
	if base == nil {
		base = &http.Client{Timeout: 30 * time.Second}
	}
	flowClient := &http.Client{Timeout: base.Timeout, Transport: meta.wrap(base.Transport)}

	var captured *oauth2.Config
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL: recv.redirectURL,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			if err := o.OpenBrowser(args.URL); err != nil {
				return nil, fmt.Errorf("open the browser: %w", err)
			}
			return recv.wait(ctx)
		},
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs:            []string{recv.redirectURL},
			ClientName:              o.ClientName,
			GrantTypes:              []string{"authorization_code", "refresh_token"},
			ResponseTypes:           []string{"code"},
			TokenEndpointAuthMethod: "none",
			SoftwareID:              "mcptray",
			SoftwareVersion:         o.ClientVersion,
		}},
		RequestRefreshToken: true,
		Client:              flowClient,
		NewTokenSource: func(ctx context.Context, c *oauth2.Config, t *oauth2.Token) (oauth2.TokenSource, error) {
			captured = c
			return c.TokenSource(ctx, t), nil
		},
	}
	if o.ClientMetadataURL != "" {
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: o.ClientMetadataURL}
	}
	if cfg.PreregisteredClient, err = preregisteredClient(&o); err != nil {
		return nil, err
	}
	if len(o.Scopes) > 0 {
		cfg.ScopeFilter = func([]string) []string { return slices.Clone(o.Scopes) }
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return nil, fmt.Errorf("sign-in: %w", err)
	}
	counting := &countingHandler{inner: h}

	httpClient, rec := newHTTPClient(base, srv.Headers, clock.Real)
	if err := proveSignIn(ctx, srv, httpClient, counting, o); err != nil {
		if ctx.Err() != nil && recv.waiting() {
			return nil, fmt.Errorf("sign-in was not completed in the browser in time (%w); run the command again, or pass --timeout", ctx.Err())
		}
		if last := rec.latest(); ctx.Err() == nil && last != nil && bearerChallenge(last.wwwAuthenticate) &&
			!offersSignIn(ctx, base, srv.URL, last.wwwAuthenticate) {
			// The flow's own error (a failed client registration) says
			// nothing a person can act on.
			return nil, &Diagnosis{
				Code:    CodeAuthRequired,
				Message: fmt.Sprintf("%s asks for a bearer token but offers no OAuth sign-in (no protected-resource or authorization-server metadata), so there is nothing to sign in to.", safeURL(srv.URL)),
				Fix:     tokenFix(srv),
			}
		}
		return nil, err
	}
	if counting.authorized == 0 || captured == nil {
		return nil, ErrNoSignInNeeded
	}
	ts, _ := h.TokenSource(ctx)
	tok, err := ts.Token()
	if err != nil {
		return nil, fmt.Errorf("sign-in: read the token: %w", err)
	}
	cred := credentialFrom(srv.URL, tok, captured, &o, cfg.PreregisteredClient != nil)
	if asm := meta.authServer(); asm != nil {
		cred.Issuer, cred.RevocationURL = asm.Issuer, asm.RevocationEndpoint
	}
	return cred, nil
}

// preregisteredClient is the client mcptray signs in as when the server's
// entry names one (nil when it does not), its secret read from the
// environment variable the entry names.
func preregisteredClient(o *LoginOptions) (*oauthex.ClientCredentials, error) {
	if o.ClientID == "" {
		return nil, nil
	}
	pc := &oauthex.ClientCredentials{ClientID: o.ClientID}
	if o.ClientSecretEnv != "" {
		secret, ok := "", false
		if o.Lookup != nil {
			secret, ok = o.Lookup(o.ClientSecretEnv)
		}
		if !ok || secret == "" {
			return nil, fmt.Errorf("the client secret is read from $%s, which is not set", o.ClientSecretEnv)
		}
		pc.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: secret}
	}
	return pc, nil
}

// credentialFrom is what a completed flow leaves to keep: the token, and
// how the client was registered (which decides what a refresh needs).
func credentialFrom(server string, tok *oauth2.Token, c *oauth2.Config, o *LoginOptions, preregistered bool) *Credential {
	cred := &Credential{Server: server, Token: tok, ClientID: c.ClientID, TokenURL: c.Endpoint.TokenURL,
		AuthStyle: c.Endpoint.AuthStyle, Scopes: c.Scopes, SignedInAt: o.Now()}
	switch {
	case preregistered && c.ClientID == o.ClientID:
		cred.Registration, cred.ClientSecretEnv = "pre-registered", o.ClientSecretEnv
	case o.ClientMetadataURL != "" && c.ClientID == o.ClientMetadataURL:
		cred.Registration = "metadata-document"
	default:
		cred.Registration, cred.ClientSecret = "dynamic", c.ClientSecret
	}
	return cred
}

// proveSignIn connects to the server with h, which runs the flow on the
// server's first 401, and lists its tools (a server may ask for more scope
// there).
func proveSignIn(ctx context.Context, srv *registry.Server, client *http.Client, h auth.OAuthHandler, o LoginOptions) error {
	c := mcp.NewClient(&mcp.Implementation{Name: o.ClientName, Version: o.ClientVersion}, nil)
	if srv.Transport() == registry.TransportSSE {
		// The SSE transport has no hook for the flow: ask the endpoint
		// itself, run the flow on its challenge, then connect with the token.
		if err := authorizeByProbe(ctx, srv.URL, client, h); err != nil {
			return err
		}
		client = &http.Client{Timeout: client.Timeout, Transport: &bearerTransport{base: client.Transport, auth: h}}
		cs, err := c.Connect(ctx, &mcp.SSEClientTransport{Endpoint: srv.URL, HTTPClient: client}, nil)
		if err != nil {
			return fmt.Errorf("connect after sign-in: %w", err)
		}
		defer cs.Close()
		_, err = cs.ListTools(ctx, nil)
		return err
	}
	tr := &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: client, OAuthHandler: h, DisableStandaloneSSE: true}
	cs, err := c.Connect(ctx, tr, nil)
	if err != nil {
		return fmt.Errorf("sign-in: %w", err)
	}
	defer cs.Close()
	if cs.InitializeResult().Capabilities.Tools != nil {
		if _, err := cs.ListTools(ctx, nil); err != nil {
			return fmt.Errorf("list tools after sign-in: %w", err)
		}
	}
	return nil
}

// authorizeByProbe opens the SSE stream without a token; a 401 or 403
// challenge starts the flow.
func authorizeByProbe(ctx context.Context, rawURL string, client *http.Client, h auth.OAuthHandler) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
		resp.Body.Close()
		return nil
	}
	return h.Authorize(ctx, req, resp)
}

// countingHandler counts completed authorizations, so Login can tell a
// server that never asked.
type countingHandler struct {
	inner      auth.OAuthHandler
	authorized int
}

func (c *countingHandler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	return c.inner.TokenSource(ctx)
}

func (c *countingHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	err := c.inner.Authorize(ctx, req, resp)
	if err == nil {
		c.authorized++
	}
	return err
}

// metadataRecorder keeps the authorization server's metadata as the flow
// fetched it (the issuer and the revocation endpoint are not exposed
// otherwise).
type metadataRecorder struct {
	mu  sync.Mutex
	asm *oauthex.AuthServerMeta
}

func (m *metadataRecorder) wrap(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := base.RoundTrip(req)
		if err != nil || resp.StatusCode != http.StatusOK || !isAuthServerMetadata(req.URL.Path) {
			return resp, err
		}
		body, rerr := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		if rerr == nil {
			var asm oauthex.AuthServerMeta
			if json.Unmarshal(body, &asm) == nil && asm.TokenEndpoint != "" {
				m.mu.Lock()
				m.asm = &asm
				m.mu.Unlock()
			}
		}
		return resp, err
	})
}

func (m *metadataRecorder) authServer() *oauthex.AuthServerMeta {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.asm
}

func isAuthServerMetadata(path string) bool {
	return strings.Contains(path, "/.well-known/oauth-authorization-server") || strings.Contains(path, "/.well-known/openid-configuration")
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
