package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"golang.org/x/oauth2"

	"mcptray/gateway"
	"mcptray/healthcheck"
	"mcptray/registry"
	"mcptray/registry/secrets"
	"mcptray/supervisor"
)

// EngineSetup is what an engine is built for, beyond the config's
// [settings]: all of it is decided before the engine exists, so nothing
// patches the options afterwards.
type EngineSetup struct {
	// Terminal: servers start with mcptray's own environment, which
	// already is what the person's shell set (check, up, call), instead
	// of asking the login shell as the GUI and the daemon must.
	Terminal bool
	// Gateway, when set, is the gateway the sessions serve (the daemon's,
	// made after the engine it relays to): each server's session is made
	// with its handlers and traced into it.
	Gateway func() *gateway.Gateway
	// Client answers what servers ask during calls (a trial's elicitation,
	// roots, progress…), which the engine's health-check sessions never do.
	Client *healthcheck.ClientHandlers
	// Skip names the lists a trial's sessions do not fetch.
	Skip healthcheck.Lists
}

// NewEngineOptions turns a loaded config's [settings] and setup into the
// supervisor's options, with the health check plugged in. Everything not
// set here keeps the supervisor's default. The GUI, `up`, `check`, trials
// and the daemon all build their engine from it, so they behave the same.
func NewEngineOptions(cfg *registry.Config, setup EngineSetup) *supervisor.Options {
	st := cfg.Settings.WithDefaults()
	sec := &LazySecrets{}
	hc := &healthChecker{
		// Every engine speaks initialize first, the daemon's and a
		// check's alike: a check reports the era clients get through
		// mcptray (see healthcheck.Options.PreferLegacy).
		opts:    healthcheck.Options{ClientName: "mcptray", ClientVersion: Version, Authorizer: sec.signIn, Client: setup.Client, Skip: setup.Skip, PreferLegacy: true},
		gateway: setup.Gateway,
	}
	o := &supervisor.Options{
		Checker:        hc,
		Secret:         sec.Secret,
		StartupTimeout: st.StartupTimeout,
		ProbeInterval:  st.ProbeInterval,
		ProbeTimeout:   st.ProbeTimeout,
		LogLimitBytes:  st.LogLimitBytes,
		LogLimitLines:  st.LogLimitLines,
	}
	if setup.Terminal {
		o.Environ = func(context.Context) []string { return supervisor.ProcessEnvironment() }
	}
	return o
}

// EngineOptions are the engine options the desktop app runs servers with.
func EngineOptions(cfg *registry.Config) *supervisor.Options {
	return NewEngineOptions(cfg, EngineSetup{})
}

// healthChecker is the health check as the supervisor sees it.
type healthChecker struct {
	opts healthcheck.Options
	// gateway, when set, is the gateway the sessions serve: each server's
	// session is made with its handlers and traced into it.
	gateway func() *gateway.Gateway
}

// PrefersLegacy: the engine offers initialize first (see NewEngineOptions),
// so a process that dies in that handshake is started once more with
// server/discover.
func (h *healthChecker) PrefersLegacy() bool { return h.opts.PreferLegacy }

var _ supervisor.LegacyFirst = (*healthChecker)(nil)

func (h *healthChecker) Connect(ctx context.Context, t healthcheck.Target) (supervisor.Session, error) {
	opts := h.opts
	if h.gateway != nil && t.Server != nil {
		if gw := h.gateway(); gw != nil {
			name := t.Server.Name
			opts.Client = gw.Handlers(name)
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
		// Whether this server needs a sign-in is not known yet: it is told
		// why there is none only if it asks for one.
		return unreadableSignIn{err: fmt.Errorf("the stored sign-ins cannot be read: %w", err)}
	}
	cred, err := LoadCredential(st, serverURL)
	if err != nil {
		// There is a sign-in for this server, and it is unusable: say so
		// before anything is sent, not "not signed in".
		return unreadableSignIn{err: err, atOnce: true}
	}
	if cred == nil {
		return nil
	}
	return healthcheck.NewStoredAuth(cred, func(c *healthcheck.Credential) error { return SaveCredential(st, c) }, os.LookupEnv, nil)
}

// unreadableSignIn stands for a sign-in that could not be read: the
// connection fails with why, instead of going on as if never signed in.
type unreadableSignIn struct {
	err    error
	atOnce bool // fail before the first request, not only when asked to sign in
}

func (u unreadableSignIn) TokenSource(context.Context) (oauth2.TokenSource, error) {
	if u.atOnce {
		return nil, u.err
	}
	return nil, nil
}

func (u unreadableSignIn) Authorize(_ context.Context, _ *http.Request, res *http.Response) error {
	if res != nil && res.Body != nil {
		res.Body.Close()
	}
	return u.err
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
