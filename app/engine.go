package app

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"mcptray/healthcheck"
	"mcptray/registry"
	"mcptray/registry/secrets"
	"mcptray/supervisor"
)

// EngineOptions turns a loaded config's [settings] into the supervisor's
// options, with the health check plugged in. Everything not set here keeps
// the supervisor's default. The GUI, `up`, `check` and the daemon all build
// their engine from it, so they behave the same.
func EngineOptions(cfg *registry.Config) *supervisor.Options {
	st := cfg.Settings.WithDefaults()
	return &supervisor.Options{
		Checker:        &healthChecker{opts: healthcheck.Options{ClientName: "mcptray", ClientVersion: Version, Authorizer: storedSignIns()}},
		StartupTimeout: st.StartupTimeout,
		ProbeInterval:  st.ProbeInterval,
		ProbeTimeout:   st.ProbeTimeout,
		LogLimitBytes:  st.LogLimitBytes,
		LogLimitLines:  st.LogLimitLines,
	}
}

// terminalEngineOptions are engineOptions for commands run from a terminal
// or a script (check, up): servers start with mcptray's own environment,
// which already is what the person's shell set, instead of asking the login
// shell again as the GUI and the daemon must.
func terminalEngineOptions(cfg *registry.Config) *supervisor.Options {
	o := EngineOptions(cfg)
	o.Environ = func(context.Context) []string { return supervisor.ProcessEnvironment() }
	return o
}

// healthChecker is the health check as the supervisor sees it.
type healthChecker struct{ opts healthcheck.Options }

func (h *healthChecker) Connect(ctx context.Context, t healthcheck.Target) (supervisor.Session, error) {
	s, err := healthcheck.Connect(ctx, t, &h.opts)
	if err != nil {
		return nil, err // not a typed nil: the supervisor tests Session != nil
	}
	return s, nil
}

// storedSignIns authorizes connections to remote servers with the sign-ins
// `mcptray auth login` stored. The store is opened on the first remote
// connection (most configs have none), and each connection reads the
// sign-in again, so a login made while the engine runs is used at the next
// connection.
func storedSignIns() func(string) auth.OAuthHandler {
	var once sync.Once
	var st secrets.Store
	return func(serverURL string) auth.OAuthHandler {
		once.Do(func() {
			var err error
			st, err = secrets.Open(&secrets.Options{Notice: func(s string) { fmt.Fprintln(os.Stderr, "mcptray: "+s) }})
			if err != nil {
				fmt.Fprintf(os.Stderr, "mcptray: sign-ins cannot be read: %v\n", err)
			}
		})
		if st == nil {
			return nil
		}
		cred, err := LoadCredential(st, serverURL)
		if err != nil || cred == nil {
			return nil
		}
		return healthcheck.NewStoredAuth(cred, func(c *healthcheck.Credential) error { return SaveCredential(st, c) }, os.LookupEnv, nil)
	}
}
