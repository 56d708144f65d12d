package app

import (
	"mcptray/registry"
	"mcptray/supervisor"
)

// engineOptions turns a loaded config's [settings] into the supervisor's
// options. Everything not set here keeps the supervisor's default.
func engineOptions(cfg *registry.Config) *supervisor.Options {
	st := cfg.Settings.WithDefaults()
	return &supervisor.Options{
		StartupTimeout: st.StartupTimeout,
		ProbeInterval:  st.ProbeInterval,
		ProbeTimeout:   st.ProbeTimeout,
		LogLimitBytes:  st.LogLimitBytes,
		LogLimitLines:  st.LogLimitLines,
	}
}
