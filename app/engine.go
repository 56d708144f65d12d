package app

import (
	"context"

	"mcptray/healthcheck"
	"mcptray/registry"
	"mcptray/supervisor"
)

// engineOptions turns a loaded config's [settings] into the supervisor's
// options, with the health check plugged in. Everything not set here keeps
// the supervisor's default. The GUI, `up`, `check` and the daemon all build
// their engine from it, so they behave the same.
func engineOptions(cfg *registry.Config) *supervisor.Options {
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

// healthChecker is the health check as the supervisor sees it.
type healthChecker struct{ opts healthcheck.Options }

func (h *healthChecker) Connect(ctx context.Context, t healthcheck.Target) (supervisor.Session, error) {
	s, err := healthcheck.Connect(ctx, t, &h.opts)
	if err != nil {
		return nil, err // not a typed nil: the supervisor tests Session != nil
	}
	return s, nil
}
