package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"mcptray/gateway"
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
	sec := &LazySecrets{}
	return &supervisor.Options{
		Checker:        &healthChecker{opts: healthcheck.Options{ClientName: "mcptray", ClientVersion: Version, Authorizer: sec.signIn}},
		Secret:         sec.Secret,
		StartupTimeout: st.StartupTimeout,
		ProbeInterval:  st.ProbeInterval,
		ProbeTimeout:   st.ProbeTimeout,
		LogLimitBytes:  st.LogLimitBytes,
		LogLimitLines:  st.LogLimitLines,
	}
}

// TerminalEngineOptions are engineOptions for commands run from a terminal
// or a script (check, up): servers start with mcptray's own environment,
// which already is what the person's shell set, instead of asking the login
// shell again as the GUI and the daemon must.
func TerminalEngineOptions(cfg *registry.Config) *supervisor.Options {
	o := EngineOptions(cfg)
	o.Environ = func(context.Context) []string { return supervisor.ProcessEnvironment() }
	return o
}

// healthChecker is the health check as the supervisor sees it.
type healthChecker struct {
	opts healthcheck.Options
	// gateway, when set, is the gateway the sessions serve: each server's
	// session is made with its handlers and traced into it.
	gateway func() *gateway.Gateway
}

func (h *healthChecker) Connect(ctx context.Context, t healthcheck.Target) (supervisor.Session, error) {
	opts := h.opts
	if h.gateway != nil && t.Server != nil {
		if gw := h.gateway(); gw != nil {
			name := t.Server.Name
			opts.Client = gw.Handlers(name)
			opts.PreferLegacy = true
			opts.Trace = func(f healthcheck.Frame) { gw.Trace(name, f) }
		}
	}
	s, err := healthcheck.Connect(ctx, t, &opts)
	if err != nil {
		return nil, err // not a typed nil: the supervisor tests Session != nil
	}
	return s, nil
}

// LazySecrets opens the secret store on first use: most configs need none,
// and opening the OS keyring is a D-Bus round trip.
type LazySecrets struct {
	once  sync.Once
	store secrets.Store
	err   error
}

func (l *LazySecrets) get() (secrets.Store, error) {
	l.once.Do(func() {
		l.store, l.err = secrets.Open(&secrets.Options{Notice: func(s string) { fmt.Fprintln(os.Stderr, "mcptray: "+s) }})
	})
	return l.store, l.err
}

// Secret resolves ${keyring:NAME}.
func (l *LazySecrets) Secret(name string) (string, error) {
	st, err := l.get()
	if err != nil {
		return "", err
	}
	return st.Get(secrets.SecretKey(name))
}

// signIn authorizes connections to remote servers with the sign-ins
// `mcptray auth login` stored. Each connection reads the sign-in again, so
// a login made while the engine runs is used at the next connection.
func (l *LazySecrets) signIn(serverURL string) auth.OAuthHandler {
	st, err := l.get()
	if err != nil {
		return nil
	}
	cred, err := LoadCredential(st, serverURL)
	if err != nil || cred == nil {
		return nil
	}
	return healthcheck.NewStoredAuth(cred, func(c *healthcheck.Credential) error { return SaveCredential(st, c) }, os.LookupEnv, nil)
}

// WarningLogger prints the engine's warnings (not its state changes, which
// the commands print themselves) as lines with a prefix.
func WarningLogger(w io.Writer, prefix string) *slog.Logger {
	return slog.New(&lineHandler{w: w, prefix: prefix})
}

type lineHandler struct {
	w      io.Writer
	prefix string
}

func (h *lineHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (h *lineHandler) WithAttrs([]slog.Attr) slog.Handler           { return h }
func (h *lineHandler) WithGroup(string) slog.Handler                { return h }
func (h *lineHandler) Handle(_ context.Context, r slog.Record) error {
	line := h.prefix + r.Message
	r.Attrs(func(a slog.Attr) bool {
		line += fmt.Sprintf(" %s=%v", a.Key, a.Value)
		return true
	})
	_, err := fmt.Fprintln(h.w, line)
	return err
}
