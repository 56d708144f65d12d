package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"mcptray/app"
	"mcptray/healthcheck"
	"mcptray/registry"
	"mcptray/registry/secrets"
)

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
func authTarget(env *app.Env, cfgPath, arg string) (*registry.Server, error) {
	if strings.HasPrefix(arg, "http://") || strings.HasPrefix(arg, "https://") {
		u, err := url.Parse(arg)
		if err != nil || u.Host == "" {
			return nil, app.Usagef("%q is not a URL", arg)
		}
		return &registry.Server{Name: u.Host, URL: arg}, nil
	}
	cfg, err := app.LoadConfig(env, cfgPath, true)
	if err != nil {
		return nil, err
	}
	srvs, err := app.SelectServers(cfg, []string{arg})
	if err != nil {
		return nil, err
	}
	s := srvs[0]
	if s.URL == "" {
		return nil, app.Usagef("%s is a stdio server (command %q): sign-in is for remote servers", s.Name, s.Command)
	}
	exp, err := s.Expand(env.LookupEnv)
	if err != nil {
		return nil, err
	}
	return exp, nil
}

func authLoginFlags(fs *flag.FlagSet) runFunc {
	cfgPath := configFlag(fs)
	clientID := fs.String("client-id", "", "a client pre-registered with the authorization server")
	secretEnv := fs.String("client-secret-env", "", "the environment variable holding that client's secret")
	metaURL := fs.String("client-metadata-url", "", "an https URL of this install's Client ID Metadata Document")
	scope := fs.String("scope", "", "scopes to ask for, space-separated (default: what the server names)")
	timeout := fs.Duration("timeout", 5*time.Minute, "how long to wait for the sign-in in the browser")
	return func(ctx context.Context, env *app.Env, args []string) error {
		if len(args) != 1 {
			return app.Usagef("name one server or URL")
		}
		if *secretEnv != "" && *clientID == "" {
			return app.Usagef("--client-secret-env needs --client-id")
		}
		if *metaURL != "" {
			if u, err := url.Parse(*metaURL); err != nil || u.Scheme != "https" || u.Path == "" || u.Path == "/" {
				return app.Usagef("--client-metadata-url must be an https URL with a path, not %q", *metaURL)
			}
		}
		if *timeout <= 0 {
			return app.Usagef("--timeout must be positive")
		}
		srv, err := authTarget(env, *cfgPath, args[0])
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(ctx, *timeout)
		defer cancel()
		fmt.Fprintf(env.Stderr, "Signing in to %s (%s)…\n", srv.Name, registry.MaskURL(srv.URL))
		cred, where, err := app.SignIn(ctx, env, srv, &app.SignInOptions{
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
		app.RestartInDaemon(ctx, env, srv.URL)
		return nil
	}
}

func authLogoutFlags(fs *flag.FlagSet) runFunc {
	cfgPath := configFlag(fs)
	return func(ctx context.Context, env *app.Env, args []string) error {
		if len(args) != 1 {
			return app.Usagef("name one server or URL")
		}
		srv, err := authTarget(env, *cfgPath, args[0])
		if err != nil {
			return err
		}
		st, err := app.OpenSecrets(env)
		if err != nil {
			return err
		}
		cred, err := app.LoadCredential(st, srv.URL)
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
		if err := st.Delete(app.TokenKey(cred.Server)); err != nil && !errors.Is(err, secrets.ErrNotFound) {
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

func authStatusFlags(fs *flag.FlagSet) runFunc {
	asJSON := fs.Bool("json", false, "print JSON")
	return func(ctx context.Context, env *app.Env, args []string) error {
		if len(args) > 0 {
			return app.Usagef("takes no arguments")
		}
		st, err := app.OpenSecrets(env)
		if err != nil {
			return err
		}
		keys, err := st.List(secrets.TokenPrefix)
		if err != nil {
			return err
		}
		list := []healthcheck.Status{}
		for _, k := range keys {
			c, err := app.LoadCredential(st, strings.TrimPrefix(k, secrets.TokenPrefix))
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
