package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"mcptray/healthcheck"
	"mcptray/registry"
	"mcptray/supervisor"
)

// EngineOptions turns a loaded config's [settings] into the supervisor's
// options, with the health check plugged in. Everything not set here keeps
// the supervisor's default. The GUI, `up`, `check` and the daemon all build
// their engine from it, so they behave the same.
func EngineOptions(cfg *registry.Config) *supervisor.Options {
	st := cfg.Settings.WithDefaults()
	return &supervisor.Options{
		Checker:        &healthChecker{opts: healthcheck.Options{ClientName: "mcptray", ClientVersion: Version}},
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

// warningLogger prints the engine's warnings (not its state changes, which
// the commands print themselves) as lines with a prefix.
func warningLogger(w io.Writer, prefix string) *slog.Logger {
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
