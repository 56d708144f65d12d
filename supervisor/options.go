package supervisor

import (
	"context"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"mcptray/healthcheck"
	"mcptray/internal/clock"
	"mcptray/internal/human"
	"mcptray/registry"
)

// Checker connects to a server for the supervisor. The health check package
// provides the real one; a nil Checker means servers are not checked.
type Checker interface {
	// Connect performs the handshake and discovery. For a stdio server the
	// target holds the process's pipes and an Exited channel.
	Connect(ctx context.Context, t healthcheck.Target) (Session, error)
}

// Session is a live connection made by a [Checker].
type Session interface {
	Report() *healthcheck.Report
	// Probe checks liveness once and returns the round-trip time.
	Probe(ctx context.Context) (time.Duration, error)
	Close() error
}

// Clock is the time source, injectable so that backoff, crash-loop and
// timeout logic can be tested without waiting (internal/clock/fakeclock).
// It is the engine's one clock type: one clock drives the supervisor and
// its health checks.
type Clock = clock.Clock

// Timer is a [time.Timer] behind an interface.
type Timer = clock.Timer

// Options tunes a [Supervisor]. A zero field means its default; for the
// durations where zero is a useful value (no backoff, no grace) a negative
// value means zero.
type Options struct {
	// Checker runs the health check; nil means none: a spawned stdio server
	// is "running", a remote server stays "stopped".
	Checker Checker

	BackoffBase time.Duration // first delay after a crash; default 1 s
	BackoffMax  time.Duration // cap; default 60 s
	// Jitter spreads each delay by ±Jitter of itself, so that servers that
	// crashed together do not restart in lockstep; default 0.2, negative
	// for none.
	Jitter float64
	// StableRun is how long a process must stay up for the backoff to start
	// again from BackoffBase; default 30 s.
	StableRun time.Duration
	// CrashLoopCount crashes within CrashLoopWindow make a server
	// crash-looping; defaults 5 and 2 min.
	CrashLoopCount  int
	CrashLoopWindow time.Duration
	// StartupSettle: with no health check, a process that exits sooner than
	// this after its start "exited during startup"; default 1 s.
	StartupSettle time.Duration

	// StopGrace is how long a stopping process gets after its stdin is
	// closed before SIGTERM goes to its process group; default 2 s.
	StopGrace time.Duration
	// KillGrace is how long after SIGTERM before SIGKILL; default 3 s.
	KillGrace time.Duration

	// The health check's timings; defaults are [registry]'s (the
	// [settings] a config leaves out): 60 s, 30 s, 10 s.
	StartupTimeout   time.Duration // connect bound
	ProbeInterval    time.Duration
	ProbeTimeout     time.Duration
	FailureThreshold int // consecutive failed probes of one process that make it unhealthy; default 3
	// ProbeAtReady sends the first probe as soon as the handshake is
	// done, not a probe interval after it: `mcptray check` wants one at
	// once.
	ProbeAtReady bool
	// Deadline, when set (on Clock), is when the engine's work must be
	// done: no handshake or probe runs past it, their timeouts are cut to
	// end there. `mcptray check` sets it so that an unanswered probe is a
	// probe-timeout the check can report, not a check that gave up.
	Deadline time.Time

	LogLimitBytes int64 // stderr ring cap per server; default registry's 2 MiB
	LogLimitLines int   // default registry's 10,000
	// MaxLineBytes cuts longer stderr lines into Partial pieces; default 16 KiB.
	MaxLineBytes int
	// LogDir holds the NAME.log files; default os.UserCacheDir()/mcptray/logs.
	LogDir string
	// NoLogFiles turns the log files off (the ring stays).
	NoLogFiles bool
	// LogFileMaxBytes is the size at which NAME.log is rotated to NAME.log.1;
	// default 5 MiB. One old file is kept.
	LogFileMaxBytes int64
	// ProcDir holds the record files of running supervisors, by which a
	// new one ends what a killed one left; default
	// registry.RuntimeDir()/procs.
	ProcDir string

	Clock Clock
	// Environ gives the environment servers start from (the server's own
	// env goes on top); default LoginEnvironment.
	Environ func(ctx context.Context) []string
	// Secret resolves ${keyring:NAME} references when a server starts; nil
	// makes such a reference an error for that server.
	Secret registry.SecretFunc
	// Logger receives state changes; default: discard.
	Logger *slog.Logger
	// Rand returns a number in [0, 1) for jitter; default math/rand/v2.
	Rand func() float64
}

func dur(v, def time.Duration) time.Duration {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

// withDefaults returns a filled copy.
func (o *Options) withDefaults() Options {
	var c Options
	if o != nil {
		c = *o
	}
	c.BackoffBase = dur(c.BackoffBase, time.Second)
	c.BackoffMax = dur(c.BackoffMax, time.Minute)
	if c.Jitter == 0 {
		c.Jitter = 0.2
	} else if c.Jitter < 0 {
		c.Jitter = 0
	}
	c.StableRun = dur(c.StableRun, 30*time.Second)
	if c.CrashLoopCount <= 0 {
		c.CrashLoopCount = 5
	}
	c.CrashLoopWindow = dur(c.CrashLoopWindow, 2*time.Minute)
	c.StartupSettle = dur(c.StartupSettle, time.Second)
	c.StopGrace = dur(c.StopGrace, 2*time.Second)
	c.KillGrace = dur(c.KillGrace, 3*time.Second)
	c.StartupTimeout = dur(c.StartupTimeout, registry.DefaultStartupTimeout)
	c.ProbeInterval = dur(c.ProbeInterval, registry.DefaultProbeInterval)
	c.ProbeTimeout = dur(c.ProbeTimeout, registry.DefaultProbeTimeout)
	if c.FailureThreshold <= 0 {
		c.FailureThreshold = 3
	}
	if c.LogLimitBytes <= 0 {
		c.LogLimitBytes = registry.DefaultLogLimitBytes
	}
	if c.LogLimitLines <= 0 {
		c.LogLimitLines = registry.DefaultLogLimitLines
	}
	if c.MaxLineBytes <= 0 {
		c.MaxLineBytes = 16 << 10
	}
	if c.LogDir == "" {
		if dir, err := os.UserCacheDir(); err == nil {
			c.LogDir = filepath.Join(dir, "mcptray", "logs")
		} else {
			c.NoLogFiles = true
		}
	}
	if c.ProcDir == "" {
		c.ProcDir = defaultProcDir()
	}
	if c.LogFileMaxBytes <= 0 {
		c.LogFileMaxBytes = 5 << 20
	}
	if c.Clock == nil {
		c.Clock = clock.Real
	}
	if c.Environ == nil {
		c.Environ = LoginEnvironment
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.Rand == nil {
		c.Rand = rand.Float64
	}
	return c
}

// backoff is the delay before restart number attempt (1-based).
func (o *Options) backoff(attempt int) time.Duration {
	d := o.BackoffBase
	for i := 1; i < attempt && d < o.BackoffMax; i++ {
		d *= 2
	}
	d = min(d, o.BackoffMax)
	if o.Jitter > 0 {
		d = time.Duration(float64(d) * (1 + o.Jitter*(2*o.Rand()-1)))
	}
	return d
}

func itoa(n int) string { return strconv.Itoa(n) }

// roundDuration prints a duration the way a person reads it (human.Duration,
// the one rule for waits and ages: 120ms, 3.2s, 5m3s).
var roundDuration = human.Duration
