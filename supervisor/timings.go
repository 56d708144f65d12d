package supervisor

import (
	"time"

	"mcptray/registry"
)

// Timings are the settings a running supervisor takes from a reloaded
// config ([settings] startup_timeout, probe_interval, probe_timeout,
// log_limit): each attempt reads them when it uses them, so a change
// applies to the next handshake, probe and log line. A zero field is the
// default.
type Timings struct {
	StartupTimeout time.Duration
	ProbeInterval  time.Duration
	ProbeTimeout   time.Duration
	LogLimitBytes  int64
	LogLimitLines  int
}

// TimingsOf are the timings settings s ask for.
func TimingsOf(s registry.Settings) Timings {
	s = s.WithDefaults()
	return Timings{StartupTimeout: s.StartupTimeout, ProbeInterval: s.ProbeInterval, ProbeTimeout: s.ProbeTimeout,
		LogLimitBytes: s.LogLimitBytes, LogLimitLines: s.LogLimitLines}
}

func (t Timings) withDefaults() Timings {
	t.StartupTimeout = dur(t.StartupTimeout, registry.DefaultStartupTimeout)
	t.ProbeInterval = dur(t.ProbeInterval, registry.DefaultProbeInterval)
	t.ProbeTimeout = dur(t.ProbeTimeout, registry.DefaultProbeTimeout)
	if t.LogLimitBytes <= 0 {
		t.LogLimitBytes = registry.DefaultLogLimitBytes
	}
	if t.LogLimitLines <= 0 {
		t.LogLimitLines = registry.DefaultLogLimitLines
	}
	return t
}

// SetTimings applies t to every server from now on: the next handshake,
// probe and stderr line use them; what is under way finishes as it
// started.
func (s *Supervisor) SetTimings(t Timings) {
	t = t.withDefaults()
	s.timings.Store(&t)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range append(append([]*unit{}, s.units...), s.instances...) {
		u.ring.setLimits(t.LogLimitLines, t.LogLimitBytes)
	}
}

// timing is what SetTimings set last, else the options'.
func (s *Supervisor) timing() Timings { return *s.timings.Load() }
