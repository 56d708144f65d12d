package app

import (
	"context"
	"strings"
	"testing"

	"mcptray/registry/secrets"
)

// TestDamagedSignInIsAnError: a stored sign-in that does not load makes the
// connection fail with why, not go on as if the server were never signed in
// to (which would end in "needs sign-in" for a person who did sign in).
func TestDamagedSignInIsAnError(t *testing.T) {
	t.Setenv("MCPTRAY_KEYRING", "file")
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	const url = "https://mcp.example.com/mcp"
	st, err := secrets.Open(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Set(TokenKey(url), "{not json"); err != nil {
		t.Fatal(err)
	}
	h := (&LazySecrets{}).signIn(url)
	if h == nil {
		t.Fatal("a damaged sign-in reads as no sign-in")
	}
	if _, err := h.TokenSource(context.Background()); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("TokenSource: %v, want the damaged sign-in named", err)
	}
	if h := (&LazySecrets{}).signIn("https://other.example.com/mcp"); h != nil {
		t.Errorf("a server never signed in to gets a handler: %T", h)
	}
}
