package healthcheck

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"mcptray/registry"
)

// metadataWait bounds each metadata request of [offersSignIn].
const metadataWait = 5 * time.Second

// offersSignIn reports whether a server that answered with a Bearer
// challenge offers the MCP sign-in: protected-resource metadata (named by
// the challenge, or at the well-known places for its URL, RFC 9728), or,
// as servers of 2025-03-26 do, authorization-server metadata at its origin
// (RFC 8414, OpenID Connect discovery). A server with none wants a token
// the person gets elsewhere: `mcptray auth login` cannot get one.
//
// client must not carry the server's configured headers: the resource
// metadata may live on another origin.
func offersSignIn(ctx context.Context, client *http.Client, serverURL, challenge string) bool {
	u, err := url.Parse(serverURL)
	if err != nil || u.Host == "" {
		return false
	}
	if client == nil {
		client = &http.Client{}
	}
	origin := u.Scheme + "://" + u.Host
	var resource []string
	if m := resourceMetadataRE().FindStringSubmatch(challenge); m != nil {
		resource = append(resource, m[1])
	}
	if p := strings.TrimRight(u.Path, "/"); p != "" {
		resource = append(resource, origin+"/.well-known/oauth-protected-resource"+p)
	}
	resource = append(resource, origin+"/.well-known/oauth-protected-resource")
	for _, m := range resource {
		if hasMetadata(ctx, client, m, "authorization_servers") {
			return true
		}
	}
	for _, m := range []string{origin + "/.well-known/oauth-authorization-server", origin + "/.well-known/openid-configuration"} {
		if hasMetadata(ctx, client, m, "authorization_endpoint") {
			return true
		}
	}
	return false
}

// hasMetadata reports whether GET metadataURL answers a JSON object with
// key.
func hasMetadata(ctx context.Context, client *http.Client, metadataURL, key string) bool {
	ctx, cancel := context.WithTimeout(ctx, metadataWait)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, metadataURL, nil)
	if err != nil {
		return false
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false
	}
	var doc map[string]json.RawMessage
	if json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&doc) != nil {
		return false
	}
	_, ok := doc[key]
	return ok
}

// tokenSecretName is the secret a token fix suggests for server name.
func tokenSecretName(name string) string {
	return strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(name)) + "_TOKEN"
}

// noSignInOffered is the diagnosis of a Bearer challenge from a server
// that offers no sign-in.
func noSignInOffered(d *Diagnosis, srv *registry.Server) *Diagnosis {
	c := *d
	c.Message = strings.TrimSuffix(d.Message, ".") + ". It offers no OAuth sign-in (no protected-resource or authorization-server metadata): it takes a token you get from its provider."
	c.Evidence = append(append([]string(nil), d.Evidence...), "no OAuth metadata at the server's well-known URLs")
	c.Fix = tokenFix(srv)
	c.Err = nil
	return &c
}

// tokenFix says where a token from the server's provider goes.
func tokenFix(srv *registry.Server) string {
	if !registry.ValidName(srv.Name) {
		return "Pass the token with --header 'Authorization: Bearer …'."
	}
	secret := tokenSecretName(srv.Name)
	return fmt.Sprintf("Get a token from the server's provider, store it with `mcptray secret set %s`, and add Authorization = \"Bearer ${keyring:%s}\" under [servers.%s.headers].", secret, secret, srv.Name)
}
