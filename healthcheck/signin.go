package healthcheck

import (
	"time"

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
