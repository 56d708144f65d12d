package healthcheck

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"mcptray/registry"
)

// Sign-in to remote servers that require the MCP authorization flow
// (OAuth 2.1 with PKCE, protected-resource and authorization-server
// metadata discovery, client registration by pre-registration, a Client ID
// Metadata Document or dynamic registration). The go-sdk's
// auth.AuthorizationCodeHandler runs the flow; this file gives it a browser
// and a loopback redirect, keeps what it produced as a [Credential], and
// turns a stored Credential back into authorization for unattended
// checks, with refresh.

// Credential is what a sign-in leaves: the tokens and what refreshing and
// revoking them needs. It holds secrets: keep it in the secrets store, never
// in a log or an export.
type Credential struct {
	Server string `json:"server"` // the MCP endpoint signed in to
	Issuer string `json:"issuer,omitempty"`
	// How the client was registered: "pre-registered", "metadata-document"
	// or "dynamic".
	Registration string `json:"registration"`
	ClientID     string `json:"clientId"`
	// ClientSecret is kept for dynamically registered clients (the
	// authorization server issued it to this install); a pre-registered
	// client's secret is read from ClientSecretEnv each time instead.
	ClientSecret    string           `json:"clientSecret,omitempty"`
	ClientSecretEnv string           `json:"clientSecretEnv,omitempty"`
	TokenURL        string           `json:"tokenUrl"`
	AuthStyle       oauth2.AuthStyle `json:"authStyle"`
	RevocationURL   string           `json:"revocationUrl,omitempty"`
	Scopes          []string         `json:"scopes,omitempty"`
	Token           *oauth2.Token    `json:"token"`
	SignedInAt      time.Time        `json:"signedInAt"`
}

// Status is a Credential without its secrets, for `auth status`.
type Status struct {
	Server          string    `json:"server"`
	Issuer          string    `json:"issuer,omitempty"`
	Registration    string    `json:"registration"`
	ClientID        string    `json:"clientId"`
	Scopes          []string  `json:"scopes,omitempty"`
	Expires         time.Time `json:"expires,omitzero"`
	HasRefreshToken bool      `json:"hasRefreshToken"`
	SignedInAt      time.Time `json:"signedInAt"`
}

// Status describes c without its secrets.
func (c *Credential) Status() Status {
	s := Status{Server: safeURL(c.Server), Issuer: c.Issuer, Registration: c.Registration, ClientID: c.ClientID,
		Scopes: c.Scopes, SignedInAt: c.SignedInAt}
	if c.Token != nil {
		s.Expires = c.Token.Expiry
		s.HasRefreshToken = c.Token.RefreshToken != ""
	}
	return s
}

func (c *Credential) oauthConfig(lookup registry.LookupFunc) *oauth2.Config {
	secret := c.ClientSecret
	if c.ClientSecretEnv != "" && lookup != nil {
		secret, _ = lookup(c.ClientSecretEnv)
	}
	return &oauth2.Config{ClientID: c.ClientID, ClientSecret: secret, Scopes: c.Scopes,
		Endpoint: oauth2.Endpoint{TokenURL: c.TokenURL, AuthStyle: c.AuthStyle}}
}

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

	cred := &Credential{Server: srv.URL}
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
	if o.ClientID != "" {
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
		cfg.PreregisteredClient = pc
	}
	if len(o.Scopes) > 0 {
		cfg.ScopeFilter = func([]string) []string { return slices.Clone(o.Scopes) }
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return nil, fmt.Errorf("sign-in: %w", err)
	}
	counting := &countingHandler{inner: h}

	httpClient, _ := newHTTPClient(base, srv.Headers, realClock{})
	if err := proveSignIn(ctx, srv, httpClient, counting, o); err != nil {
		if ctx.Err() != nil && recv.waiting() {
			return nil, fmt.Errorf("sign-in was not completed in the browser in time (%w); run the command again, or pass --timeout", ctx.Err())
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
	cred.Token = tok
	cred.ClientID = captured.ClientID
	cred.TokenURL = captured.Endpoint.TokenURL
	cred.AuthStyle = captured.Endpoint.AuthStyle
	cred.Scopes = captured.Scopes
	cred.SignedInAt = o.Now()
	switch {
	case cfg.PreregisteredClient != nil && captured.ClientID == o.ClientID:
		cred.Registration, cred.ClientSecretEnv = "pre-registered", o.ClientSecretEnv
	case o.ClientMetadataURL != "" && captured.ClientID == o.ClientMetadataURL:
		cred.Registration = "metadata-document"
	default:
		cred.Registration, cred.ClientSecret = "dynamic", captured.ClientSecret
	}
	if asm := meta.authServer(); asm != nil {
		cred.Issuer, cred.RevocationURL = asm.Issuer, asm.RevocationEndpoint
	}
	return cred, nil
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

// bearerTransport adds the handler's current token to each request.
type bearerTransport struct {
	base http.RoundTripper
	auth auth.OAuthHandler
}

func (b *bearerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := b.base
	if base == nil {
		base = http.DefaultTransport
	}
	ts, err := b.auth.TokenSource(req.Context())
	if err != nil || ts == nil {
		return base.RoundTrip(req)
	}
	tok, err := ts.Token()
	if err != nil {
		return nil, err
	}
	r := req.Clone(req.Context())
	tok.SetAuthHeader(r)
	return base.RoundTrip(r)
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

// redirectReceiver is the loopback listener the authorization server
// redirects the browser to.
type redirectReceiver struct {
	ln          net.Listener
	srv         *http.Server
	redirectURL string
	results     chan callbackResult
	mu          sync.Mutex
	pending     bool // the browser was sent and has not come back
}

type callbackResult struct {
	res *auth.AuthorizationResult
	err error
}

func newRedirectReceiver() (*redirectReceiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for the sign-in redirect on 127.0.0.1: %w", err)
	}
	r := &redirectReceiver{ln: ln, results: make(chan callbackResult, 1),
		redirectURL: fmt.Sprintf("http://127.0.0.1:%d/callback", ln.Addr().(*net.TCPAddr).Port)}
	mux := http.NewServeMux()
	mux.HandleFunc("/callback", r.callback)
	r.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go r.srv.Serve(ln)
	return r, nil
}

func (r *redirectReceiver) callback(w http.ResponseWriter, req *http.Request) {
	q := req.URL.Query()
	var res callbackResult
	title, text := "Signed in", "mcptray has what it needs: you can close this tab."
	switch {
	case q.Get("error") != "":
		msg := q.Get("error")
		if d := q.Get("error_description"); d != "" {
			msg += ": " + d
		}
		res.err = fmt.Errorf("the authorization server refused the sign-in: %s", msg)
		title, text = "Sign-in refused", "The authorization server said: "+msg+". You can close this tab."
	case q.Get("code") == "":
		http.Error(w, "no authorization code in this request", http.StatusBadRequest)
		return
	default:
		res.res = &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}
	}
	select {
	case r.results <- res:
	default: // a second redirect (a reload): the first one counts
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, "<!doctype html><title>mcptray: %s</title><body style=\"font-family:sans-serif;margin:3em\"><h1>%s</h1><p>%s</p></body>",
		html.EscapeString(title), html.EscapeString(title), html.EscapeString(text))
}

func (r *redirectReceiver) wait(ctx context.Context) (*auth.AuthorizationResult, error) {
	r.mu.Lock()
	r.pending = true
	r.mu.Unlock()
	select {
	case res := <-r.results:
		r.mu.Lock()
		r.pending = false
		r.mu.Unlock()
		return res.res, res.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (r *redirectReceiver) waiting() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pending
}

func (r *redirectReceiver) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	r.srv.Shutdown(ctx)
}

// SignInRequiredError means a server needs (a new) sign-in before mcptray
// can use it: no stored credential, an expired refresh token, a scope the
// token lacks.
type SignInRequiredError struct {
	Server string
	Reason string
}

func (e *SignInRequiredError) Error() string {
	return fmt.Sprintf("%s needs sign-in: %s", safeURL(e.Server), e.Reason)
}

// Is makes errors.Is(err, ErrSignInRequired) true.
func (e *SignInRequiredError) Is(target error) bool { return target == ErrSignInRequired }

// ErrSignInRequired is the cause of an auth-required diagnosis that a
// sign-in (`mcptray auth login`) can fix: the server's challenge is OAuth's,
// or a stored sign-in no longer works. A 401 without a Bearer challenge
// wants credentials in the headers instead, and lacks it.
var ErrSignInRequired = errors.New("sign-in required")

// StoredAuth authorizes unattended connections with a stored Credential: it
// sends the access token, refreshes it before it expires and once on a 401,
// and hands every new token to Save. It never opens a browser: when the
// refresh token is gone or refused, or the server wants a scope the token
// lacks, the connection fails with a *SignInRequiredError.
type StoredAuth struct {
	mu     sync.Mutex // guards cred and ts
	cred   *Credential
	ts     oauth2.TokenSource
	save   func(*Credential) error
	lookup registry.LookupFunc
	client *http.Client
}

// NewStoredAuth authorizes with cred; save (may be nil) persists refreshed
// tokens; lookup reads a pre-registered client's secret variable.
func NewStoredAuth(cred *Credential, save func(*Credential) error, lookup registry.LookupFunc, client *http.Client) *StoredAuth {
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	a := &StoredAuth{cred: cred, save: save, lookup: lookup, client: client}
	a.ts = a.newSourceLocked(cred.Token)
	return a
}

func (a *StoredAuth) newSourceLocked(tok *oauth2.Token) oauth2.TokenSource {
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, a.client)
	return oauth2.ReuseTokenSource(tok, a.cred.oauthConfig(a.lookup).TokenSource(ctx, tok))
}

// TokenSource implements auth.OAuthHandler.
func (a *StoredAuth) TokenSource(context.Context) (oauth2.TokenSource, error) {
	return savingSource{a}, nil
}

type savingSource struct{ a *StoredAuth }

func (s savingSource) Token() (*oauth2.Token, error) {
	a := s.a
	a.mu.Lock()
	defer a.mu.Unlock()
	tok, err := a.ts.Token()
	if err != nil {
		return nil, a.refreshFailedLocked(err)
	}
	a.noteLocked(tok)
	return tok, nil
}

func (a *StoredAuth) noteLocked(tok *oauth2.Token) {
	if a.cred.Token != nil && tok.AccessToken == a.cred.Token.AccessToken {
		return
	}
	c := *a.cred
	if tok.RefreshToken == "" && c.Token != nil {
		tok.RefreshToken = c.Token.RefreshToken // servers may not rotate it
	}
	c.Token = tok
	a.cred = &c
	if a.save != nil {
		_ = a.save(&c) // a token kept only in memory still serves this run
	}
}

func (a *StoredAuth) refreshFailedLocked(err error) error {
	reason := "the access token expired and could not be refreshed"
	if a.cred.Token == nil || a.cred.Token.RefreshToken == "" {
		reason = "the access token expired and there is no refresh token"
	}
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.ErrorCode != "" {
		reason += " (" + re.ErrorCode + ")"
	}
	return &SignInRequiredError{Server: a.cred.Server, Reason: reason}
}

// Authorize implements auth.OAuthHandler: on a 401 it refreshes once; on a
// 403 insufficient_scope it asks for a new sign-in.
func (a *StoredAuth) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	cs, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if resp.StatusCode == http.StatusForbidden {
		for _, c := range cs {
			if c.Params["error"] == "insufficient_scope" {
				reason := "the server wants more access than the sign-in granted"
				if s := c.Params["scope"]; s != "" {
					reason += " (scope " + s + ")"
				}
				return &SignInRequiredError{Server: a.cred.Server, Reason: reason}
			}
		}
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cred.Token == nil || a.cred.Token.RefreshToken == "" {
		return &SignInRequiredError{Server: a.cred.Server, Reason: "the server refused the access token and there is no refresh token"}
	}
	ctx = context.WithValue(ctx, oauth2.HTTPClient, a.client)
	tok, err := a.cred.oauthConfig(a.lookup).TokenSource(ctx, &oauth2.Token{RefreshToken: a.cred.Token.RefreshToken}).Token()
	if err != nil {
		return a.refreshFailedLocked(err)
	}
	a.noteLocked(tok)
	a.ts = a.newSourceLocked(tok)
	return nil
}

// Credential returns the credential as it is now (tokens refreshed).
func (a *StoredAuth) Credential() *Credential {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cred
}

// Revoke asks the authorization server to revoke the refresh and access
// tokens (RFC 7009) where it has a revocation endpoint. It reports whether
// it could.
func Revoke(ctx context.Context, cred *Credential, lookup registry.LookupFunc, client *http.Client) (bool, error) {
	if cred.RevocationURL == "" || cred.Token == nil {
		return false, nil
	}
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	cfg := cred.oauthConfig(lookup)
	for _, t := range []struct{ tok, hint string }{{cred.Token.RefreshToken, "refresh_token"}, {cred.Token.AccessToken, "access_token"}} {
		if t.tok == "" {
			continue
		}
		form := url.Values{"token": {t.tok}, "token_type_hint": {t.hint}}
		if cfg.Endpoint.AuthStyle != oauth2.AuthStyleInHeader || cfg.ClientSecret == "" {
			form.Set("client_id", cfg.ClientID)
			if cfg.ClientSecret != "" {
				form.Set("client_secret", cfg.ClientSecret)
			}
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, cred.RevocationURL, strings.NewReader(form.Encode()))
		if err != nil {
			return false, err
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if cfg.Endpoint.AuthStyle == oauth2.AuthStyleInHeader && cfg.ClientSecret != "" {
			req.SetBasicAuth(url.QueryEscape(cfg.ClientID), url.QueryEscape(cfg.ClientSecret))
		}
		resp, err := client.Do(req)
		if err != nil {
			return false, fmt.Errorf("revoke at %s: %w", cred.RevocationURL, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return false, fmt.Errorf("revoke at %s: HTTP %d", cred.RevocationURL, resp.StatusCode)
		}
	}
	return true, nil
}

// signInDiagnosis explains a connection that failed for want of a (new)
// sign-in; nil when err is something else.
func signInDiagnosis(srv *registry.Server, err error, hadSignIn bool) *Diagnosis {
	var sre *SignInRequiredError
	if !errors.As(err, &sre) {
		return nil
	}
	return &Diagnosis{
		Code:    CodeAuthRequired,
		Message: fmt.Sprintf("%s needs sign-in: %s.", safeURL(srv.URL), sre.Reason),
		Fix:     signInFix(srv, true),
		Err:     sre,
	}
}

// withSignInFix points an auth-required diagnosis at `mcptray auth login`
// when the server's challenge is OAuth's (a Bearer challenge).
func withSignInFix(err error, srv *registry.Server, rec *recorder) error {
	d, ok := err.(*Diagnosis)
	if !ok || d.Code != CodeAuthRequired {
		return err
	}
	last := rec.latest()
	oauth := last != nil && strings.HasPrefix(strings.ToLower(strings.TrimSpace(last.wwwAuthenticate)), "bearer")
	d.Fix = signInFix(srv, oauth)
	if oauth && d.Err == nil {
		d.Err = ErrSignInRequired
	}
	return d
}

func signInFix(srv *registry.Server, oauth bool) string {
	// A server checked without being configured (`check URL`) is named by
	// its host, which is no config name: sign in to its URL.
	target := srv.Name
	if !registry.ValidName(target) {
		target = quoteArg(safeURL(srv.URL))
	}
	if oauth {
		return fmt.Sprintf("Sign in: run `mcptray auth login %s` (or use Sign in in the app); mcptray keeps the tokens and refreshes them.", target)
	}
	if !registry.ValidName(srv.Name) {
		return fmt.Sprintf("Pass the credentials the server expects with --header (for example --header 'Authorization: Bearer …'), or run `mcptray auth login %s` if it uses OAuth sign-in.", target)
	}
	return fmt.Sprintf("Add the credentials the server expects under [servers.%s.headers] (for example Authorization = \"Bearer ${keyring:TOKEN}\"), or run `mcptray auth login %s` if it uses OAuth sign-in.", srv.Name, target)
}

// quoteArg quotes s for a shell when it needs it.
func quoteArg(s string) string {
	if !strings.ContainsAny(s, " \t'\"\\$`&;|<>()*?[]#~!{}") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}
