package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strings"

	"mcptray/healthcheck"
	"mcptray/registry"
	"mcptray/registry/secrets"
)

// TokenKey is where a server's sign-in is kept: its URL without userinfo.
func TokenKey(rawURL string) string {
	if u, err := url.Parse(rawURL); err == nil && u.User != nil {
		u.User = nil
		return secrets.TokenKey(u.String())
	}
	return secrets.TokenKey(rawURL)
}

func OpenSecrets(env *Env) (secrets.Store, error) {
	w := env.Stderr
	if w == nil {
		w = os.Stderr
	}
	return secrets.Open(&secrets.Options{Notice: func(s string) { fmt.Fprintln(w, "mcptray: "+s) }})
}

// LoadCredential reads the stored sign-in to the server at rawURL; nil
// when there is none.
func LoadCredential(st secrets.Store, rawURL string) (*healthcheck.Credential, error) {
	v, err := st.Get(TokenKey(rawURL))
	if errors.Is(err, secrets.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var c healthcheck.Credential
	if err := json.Unmarshal([]byte(v), &c); err != nil {
		return nil, fmt.Errorf("the stored sign-in to %s is damaged (%v): sign in again", rawURL, err)
	}
	return &c, nil
}

// SaveCredential stores a sign-in.
func SaveCredential(st secrets.Store, c *healthcheck.Credential) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return st.Set(TokenKey(c.Server), string(b))
}

// RestartInDaemon has a running daemon reconnect the servers at rawURL, so
// they use a sign-in made from the command line at once.
func RestartInDaemon(ctx context.Context, env *Env, rawURL string) {
	c, err := DialDaemon(ctx)
	if err != nil {
		return // no daemon: the next start uses the sign-in
	}
	snap := c.Snapshot()
	for i := range snap.Servers {
		s := &snap.Servers[i]
		if s.Server == nil || s.Server.URL == "" {
			continue
		}
		exp, err := s.Server.Expand(env.LookupEnv)
		if err != nil || TokenKey(exp.URL) != TokenKey(rawURL) {
			continue
		}
		if err := c.Restart(ctx, s.Name); err == nil {
			fmt.Fprintf(env.Stdout, "The daemon reconnects %s with it now.\n", s.Name)
		}
	}
}

// SignInOptions tunes [SignIn].
type SignInOptions struct {
	ClientID, ClientSecretEnv, ClientMetadataURL string
	Scopes                                       []string
	// OnBrowser is told the authorization URL as the browser opens on it.
	OnBrowser func(authURL string)
}

// SignIn runs the sign-in flow for srv (references resolved) in the
// browser and keeps the credential in the secret store, whose place it
// returns. The command line and the desktop app's Sign in both use it.
func SignIn(ctx context.Context, env *Env, srv *registry.Server, o *SignInOptions) (*healthcheck.Credential, string, error) {
	if o == nil {
		o = &SignInOptions{}
	}
	if env.LookupEnv == nil {
		env = &Env{Stdout: env.Stdout, Stderr: env.Stderr, Stdin: env.Stdin, Exe: env.Exe, LookupEnv: os.LookupEnv}
	}
	st, err := OpenSecrets(env)
	if err != nil {
		return nil, "", err
	}
	cred, err := healthcheck.Login(ctx, &healthcheck.LoginOptions{
		Server:            srv,
		ClientID:          o.ClientID,
		ClientSecretEnv:   o.ClientSecretEnv,
		Lookup:            env.LookupEnv,
		ClientMetadataURL: o.ClientMetadataURL,
		Scopes:            o.Scopes,
		ClientName:        "mcptray",
		ClientVersion:     Version,
		OpenBrowser: func(authURL string) error {
			if o.OnBrowser != nil {
				o.OnBrowser(authURL)
			}
			return OpenBrowser(env, authURL)
		},
	})
	if err != nil {
		return nil, "", err
	}
	if err := SaveCredential(st, cred); err != nil {
		return nil, "", fmt.Errorf("signed in, but the tokens could not be kept: %w", err)
	}
	return cred, st.Where(), nil
}

// OpenBrowser shows url in the person's browser: $BROWSER (the first of a
// colon-separated list; "%s" is replaced by the URL), else the system's
// opener. The browser keeps running after mcptray.
func OpenBrowser(env *Env, rawURL string) error {
	var argv []string
	if b, ok := env.LookupEnv("BROWSER"); ok && strings.TrimSpace(b) != "" {
		first := strings.TrimSpace(strings.Split(b, string(os.PathListSeparator))[0])
		replaced := false
		for _, f := range strings.Fields(first) {
			if strings.Contains(f, "%s") {
				f, replaced = strings.ReplaceAll(f, "%s", rawURL), true
			}
			argv = append(argv, f)
		}
		if !replaced {
			argv = append(argv, rawURL)
		}
	} else {
		argv = systemOpener(rawURL)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}
