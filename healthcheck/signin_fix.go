package healthcheck

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"mcptray/registry"
)

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
// when the server's challenge is OAuth's (a Bearer challenge) and it offers
// the sign-in; a Bearer challenge with no sign-in offered wants a token in
// the headers. client is the base client, without the server's headers.
func withSignInFix(ctx context.Context, err error, srv *registry.Server, rec *recorder, client *http.Client) error {
	d, ok := err.(*Diagnosis)
	if !ok || d.Code != CodeAuthRequired {
		return err
	}
	last := rec.latest()
	oauth := last != nil && bearerChallenge(last.wwwAuthenticate)
	if oauth && !offersSignIn(ctx, client, srv.URL, last.wwwAuthenticate) {
		return noSignInOffered(d, srv)
	}
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
		return "Pass the credentials the server expects with --header (for example --header 'Authorization: Bearer …')."
	}
	return fmt.Sprintf("Add the credentials the server expects under [servers.%s.headers] (for example Authorization = \"Bearer ${keyring:TOKEN}\").", srv.Name)
}

// quoteArg quotes s for a shell when it needs it.
func quoteArg(s string) string {
	if !strings.ContainsAny(s, " \t'\"\\$`&;|<>()*?[]#~!{}") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}

// bearerChallenge reports whether a WWW-Authenticate header is OAuth's.
func bearerChallenge(h string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(h)), "bearer")
}
