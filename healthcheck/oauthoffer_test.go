package healthcheck

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// Sign-in is offered by protected-resource metadata (named by the
// challenge, or at its well-known URLs) or, for 2025-03-26 servers, by
// authorization-server metadata at the origin; by nothing else.
func TestOffersSignIn(t *testing.T) {
	serve := func(docs map[string]string) *httptest.Server {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if d, ok := docs[r.URL.Path]; ok {
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(d))
				return
			}
			http.NotFound(w, r)
		}))
		t.Cleanup(s.Close)
		return s
	}
	prm := `{"resource":"x","authorization_servers":["https://as.example"]}`
	asm := `{"issuer":"x","authorization_endpoint":"https://as.example/authorize"}`
	elsewhere := serve(map[string]string{"/prm": prm})
	for _, tt := range []struct {
		name      string
		docs      map[string]string
		challenge string
		want      bool
	}{
		{"no metadata", nil, `Bearer realm="x"`, false},
		{"not metadata at all", map[string]string{"/.well-known/oauth-protected-resource": `{"hello":1}`}, `Bearer`, false},
		{"resource metadata for the path", map[string]string{"/.well-known/oauth-protected-resource/mcp": prm}, `Bearer`, true},
		{"resource metadata at the root", map[string]string{"/.well-known/oauth-protected-resource": prm}, `Bearer`, true},
		{"named by the challenge", nil, `Bearer resource_metadata="` + elsewhere.URL + `/prm"`, true},
		{"2025-03-26: authorization server at the origin", map[string]string{"/.well-known/oauth-authorization-server": asm}, `Bearer`, true},
		{"OpenID discovery at the origin", map[string]string{"/.well-known/openid-configuration": asm}, `Bearer`, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := serve(tt.docs)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if got := offersSignIn(ctx, nil, s.URL+"/mcp", tt.challenge); got != tt.want {
				t.Fatalf("offersSignIn = %v, want %v", got, tt.want)
			}
		})
	}
}
