package healthcheck

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

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
