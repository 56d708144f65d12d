package healthcheck

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"mcptray/registry"
)

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
