package gui

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"mcptray/app"
	"mcptray/registry"
)

// TestSignInErrorsInWords: a sign-in that cannot reach the server, and one
// whose server offers no sign-in, are said in a sentence that names the
// server and what to check, not as the chain of Go errors behind them.
func TestSignInErrorsInWords(t *testing.T) {
	t.Setenv("MCPTRAY_KEYRING", "file")
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/mcp"
	ln.Close() // nothing listens there now: the connection is refused
	plain := httptest.NewServer(http.NotFoundHandler())
	defer plain.Close()

	env := &app.Env{Stdout: os.Stdout, Stderr: os.Stderr, LookupEnv: os.LookupEnv}
	for _, tc := range []struct {
		url  string
		want []string
	}{
		{closed, []string{"Could not sign in to prot: mcptray could not reach " + ln.Addr().String() + " (connection refused)"}},
		{plain.URL + "/mcp", []string{"Could not sign in to prot: " + strings.TrimPrefix(plain.URL, "http://") + ` answered "Not Found".`}},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		_, _, err := app.SignIn(ctx, env, &registry.Server{Name: "prot", URL: tc.url}, &app.SignInOptions{OnBrowser: func(string) {}})
		cancel()
		if err == nil {
			t.Fatalf("%s: signed in", tc.url)
		}
		got := signInWords("prot", tc.url, err)
		t.Logf("%s: %v\n  says: %s", tc.url, err, got)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: says %q, want %q in it", tc.url, got, w)
			}
		}
	}
}
