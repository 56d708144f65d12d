package healthcheck

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"mcptray/registry"
)

// SignInRequiredError means a server needs (a new) sign-in before mcptray
// can use it: no stored credential, an expired refresh token, a scope the
// token lacks.
type SignInRequiredError struct {
	Server string
	Reason string
	// Scope is what the server asked for when the token lacks a scope (a
	// 403 insufficient_scope): sign in again asking for it.
	Scope string
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
	mu      sync.Mutex // guards cred, ts and saveErr
	cred    *Credential
	ts      oauth2.TokenSource
	saveErr error // the last save of a refreshed token failed
	save    func(*Credential) error
	lookup  registry.LookupFunc
	client  *http.Client
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
		// A token kept only in memory still serves this run; the failure
		// is kept for the session's report (the next start may need a
		// new sign-in).
		a.saveErr = nil
		if err := a.save(&c); err != nil {
			a.saveErr = err
		}
	}
}

// SaveError is why the last refreshed token could not be saved, or nil.
func (a *StoredAuth) SaveError() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.saveErr
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
				return &SignInRequiredError{Server: a.cred.Server, Reason: reason, Scope: c.Params["scope"]}
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
