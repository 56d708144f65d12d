package app

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"text/tabwriter"
	"time"

	"mcptray/healthcheck"
	"mcptray/registry"
	"mcptray/registry/secrets"
)

func init() {
	register(&command{
		name:    "auth",
		summary: "sign in to remote servers that require it (OAuth), sign out, show sign-ins",
		children: []*command{
			{name: "login", args: "NAME|URL", summary: "sign in to a remote server in the browser", help: authLoginHelp, flags: authLoginFlags},
			{name: "logout", args: "NAME|URL", summary: "sign out: revoke the tokens where the server allows it and forget them", flags: authLogoutFlags},
			{name: "status", summary: "list the servers signed in to", flags: authStatusFlags},
		},
	})
}

const authLoginHelp = `Runs the MCP authorization flow (OAuth 2.1 with PKCE): finds the server's
authorization server from its metadata, registers mcptray as a client
(pre-registered with --client-id, a Client ID Metadata Document with
--client-metadata-url, else dynamic registration), opens the browser
($BROWSER, else the system's opener) and waits on a loopback address
(127.0.0.1, a random port) for the authorization server to send it back.
The tokens are kept in the OS keyring, or in a file readable only by you
where there is none (MCPTRAY_KEYRING=keyring|file chooses). Checks,
the daemon and the desktop app use them and refresh them by themselves.`

// authTarget resolves NAME|URL to the remote server to sign in to.
func authTarget(env *Env, cfgPath, arg string) (*registry.Server, error) {
	if strings.HasPrefix(arg, "http://") || strings.HasPrefix(arg, "https://") {
		u, err := url.Parse(arg)
		if err != nil || u.Host == "" {
			return nil, usagef("%q is not a URL", arg)
		}
		return &registry.Server{Name: u.Host, URL: arg}, nil
	}
	cfg, err := LoadConfig(env, cfgPath, true)
	if err != nil {
		return nil, err
	}
	srvs, err := selectServers(cfg, []string{arg})
	if err != nil {
		return nil, err
	}
	s := srvs[0]
	if s.URL == "" {
		return nil, usagef("%s is a stdio server (command %q): sign-in is for remote servers", s.Name, s.Command)
	}
	exp, err := s.Expand(env.LookupEnv)
	if err != nil {
		return nil, err
	}
	return exp, nil
}

// tokenKey is where a server's sign-in is kept: its URL without userinfo.
func tokenKey(rawURL string) string {
	if u, err := url.Parse(rawURL); err == nil && u.User != nil {
		u.User = nil
		return secrets.TokenKey(u.String())
	}
	return secrets.TokenKey(rawURL)
}

func openSecrets(env *Env) (secrets.Store, error) {
	w := env.Stderr
	if w == nil {
		w = os.Stderr
	}
	return secrets.Open(&secrets.Options{Notice: func(s string) { fmt.Fprintln(w, "mcptray: "+s) }})
}

// LoadCredential reads the stored sign-in to the server at rawURL; nil
// when there is none.
func LoadCredential(st secrets.Store, rawURL string) (*healthcheck.Credential, error) {
	v, err := st.Get(tokenKey(rawURL))
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
	return st.Set(tokenKey(c.Server), string(b))
}

func authLoginFlags(fs *flag.FlagSet) func(context.Context, *Env, []string) error {
	cfgPath := configFlag(fs)
	clientID := fs.String("client-id", "", "a client pre-registered with the authorization server")
	secretEnv := fs.String("client-secret-env", "", "the environment variable holding that client's secret")
	metaURL := fs.String("client-metadata-url", "", "an https URL of this install's Client ID Metadata Document")
	scope := fs.String("scope", "", "scopes to ask for, space-separated (default: what the server names)")
	timeout := fs.Duration("timeout", 5*time.Minute, "how long to wait for the sign-in in the browser")
	return func(ctx context.Context, env *Env, args []string) error {
		if len(args) != 1 {
			return usagef("name one server or URL")
		}
		if *secretEnv != "" && *clientID == "" {
			return usagef("--client-secret-env needs --client-id")
		}
		if *metaURL != "" {
			if u, err := url.Parse(*metaURL); err != nil || u.Scheme != "https" || u.Path == "" || u.Path == "/" {
				return usagef("--client-metadata-url must be an https URL with a path, not %q", *metaURL)
			}
		}
		if *timeout <= 0 {
			return usagef("--timeout must be positive")
		}
		srv, err := authTarget(env, *cfgPath, args[0])
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(ctx, *timeout)
		defer cancel()
		fmt.Fprintf(env.Stderr, "Signing in to %s (%s)…\n", srv.Name, safeURLText(srv.URL))
		cred, where, err := SignIn(ctx, env, srv, &SignInOptions{
			ClientID:          *clientID,
			ClientSecretEnv:   *secretEnv,
			ClientMetadataURL: *metaURL,
			Scopes:            strings.Fields(*scope),
			OnBrowser: func(authURL string) {
				fmt.Fprintf(env.Stderr, "Opening your browser. If it does not open, visit:\n  %s\n", authURL)
			},
		})
		if d := (*healthcheck.Diagnosis)(nil); errors.As(err, &d) && d.Fix != "" {
			return fmt.Errorf("%w\nfix: %s", err, d.Fix)
		}
		if err != nil {
			return err
		}
		s := cred.Status()
		fmt.Fprintf(env.Stdout, "Signed in to %s: client %s (%s registration)", srv.Name, s.ClientID, s.Registration)
		if !s.Expires.IsZero() {
			fmt.Fprintf(env.Stdout, ", token valid until %s", s.Expires.Local().Format("15:04 Jan 2"))
		}
		if s.HasRefreshToken {
			fmt.Fprint(env.Stdout, ", refreshed by itself")
		}
		fmt.Fprintf(env.Stdout, ". Kept in %s.\n", where)
		restartInDaemon(ctx, env, srv.URL)
		return nil
	}
}

// restartInDaemon has a running daemon reconnect the servers at rawURL, so
// they use a sign-in made from the command line at once.
func restartInDaemon(ctx context.Context, env *Env, rawURL string) {
	c, err := dialDaemon(ctx)
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
		if err != nil || tokenKey(exp.URL) != tokenKey(rawURL) {
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
	st, err := openSecrets(env)
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
			return openBrowser(env, authURL)
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

func authLogoutFlags(fs *flag.FlagSet) func(context.Context, *Env, []string) error {
	cfgPath := configFlag(fs)
	return func(ctx context.Context, env *Env, args []string) error {
		if len(args) != 1 {
			return usagef("name one server or URL")
		}
		srv, err := authTarget(env, *cfgPath, args[0])
		if err != nil {
			return err
		}
		st, err := openSecrets(env)
		if err != nil {
			return err
		}
		cred, err := LoadCredential(st, srv.URL)
		if err != nil {
			return err
		}
		if cred == nil {
			fmt.Fprintf(env.Stdout, "Not signed in to %s.\n", srv.Name)
			return nil
		}
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		revoked, rerr := healthcheck.Revoke(ctx, cred, env.LookupEnv, nil)
		if err := st.Delete(tokenKey(cred.Server)); err != nil && !errors.Is(err, secrets.ErrNotFound) {
			return fmt.Errorf("forget the sign-in to %s: %w", srv.Name, err)
		}
		switch {
		case rerr != nil:
			fmt.Fprintf(env.Stdout, "Signed out of %s: the tokens are forgotten, but revoking them failed (%v); they stop working when they expire.\n", srv.Name, rerr)
		case revoked:
			fmt.Fprintf(env.Stdout, "Signed out of %s: the authorization server revoked the tokens.\n", srv.Name)
		default:
			fmt.Fprintf(env.Stdout, "Signed out of %s: the tokens are forgotten (the authorization server offers no revocation; they stop working when they expire).\n", srv.Name)
		}
		return nil
	}
}

func authStatusFlags(fs *flag.FlagSet) func(context.Context, *Env, []string) error {
	asJSON := fs.Bool("json", false, "print JSON")
	return func(ctx context.Context, env *Env, args []string) error {
		if len(args) > 0 {
			return usagef("takes no arguments")
		}
		st, err := openSecrets(env)
		if err != nil {
			return err
		}
		keys, err := st.List(secrets.TokenPrefix)
		if err != nil {
			return err
		}
		list := []healthcheck.Status{}
		for _, k := range keys {
			c, err := LoadCredential(st, strings.TrimPrefix(k, secrets.TokenPrefix))
			if err != nil {
				fmt.Fprintf(env.Stderr, "mcptray: %v\n", err)
				continue
			}
			if c != nil {
				list = append(list, c.Status())
			}
		}
		if *asJSON {
			enc := json.NewEncoder(env.Stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(list)
		}
		if len(list) == 0 {
			fmt.Fprintf(env.Stdout, "Not signed in to any server (sign-ins are kept in %s).\n", st.Where())
			return nil
		}
		tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "SERVER\tCLIENT\tREGISTRATION\tTOKEN\tREFRESH")
		for _, s := range list {
			exp := "no expiry"
			if !s.Expires.IsZero() {
				if d := time.Until(s.Expires); d > 0 {
					exp = "valid " + d.Round(time.Minute).String()
				} else {
					exp = "expired"
				}
			}
			refresh := "no"
			if s.HasRefreshToken {
				refresh = "yes"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Server, s.ClientID, s.Registration, exp, refresh)
		}
		tw.Flush()
		fmt.Fprintf(env.Stdout, "Kept in %s.\n", st.Where())
		return nil
	}
}

// openBrowser shows url in the person's browser: $BROWSER (the first of a
// colon-separated list; "%s" is replaced by the URL), else the system's
// opener. The browser keeps running after mcptray.
func openBrowser(env *Env, rawURL string) error {
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

// safeURLText is a URL without its userinfo and query values, for messages.
func safeURLText(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(a URL that does not parse)"
	}
	u.User = nil
	if u.RawQuery != "" {
		u.RawQuery = "…"
	}
	return u.String()
}
