package control

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"time"

	"mcptray/gateway"
	"mcptray/internal/human"
	"mcptray/registry"
	"mcptray/registry/tooltrust"
	"mcptray/supervisor"
)

// LocalOptions tunes a [Local] engine. Zero fields mean defaults.
type LocalOptions struct {
	// Supervisor are the engine's options (timeouts, health check, …).
	Supervisor *supervisor.Options
	// LoadConfig reads the config (default registry.LoadSettled, which
	// never returns a save in progress).
	LoadConfig func(path string) (*registry.Config, error)
	// NoWatch leaves edits of the file to Reload.
	NoWatch bool
	// Debounce is the quiet time after an edit before the file is read
	// (default 300 ms).
	Debounce time.Duration
	// Logf reports what the watcher applied and why a file did not load
	// (the daemon's stderr); nil: silent.
	Logf func(format string, args ...any)
	// Trust is the store of approved tool definitions the gateway holds
	// tools by: a reload applies [settings] approve_new_servers to it.
	Trust *tooltrust.Store
	// OnSettings applies the [settings] of a reloaded file that the
	// engine does not apply itself (the daemon's gateway_port), when they
	// differ from the last loaded, and says what it did.
	OnSettings func(was, now registry.Settings) []string
}

// Local is the engine in this process: a supervisor running the servers of
// one config file, and following that file. Create it with [NewLocal] and
// run it with [Local.Run]; its methods are safe for concurrent use.
type Local struct {
	sup     *supervisor.Supervisor
	path    string
	opts    LocalOptions
	changes chan struct{}
	changed *supervisor.Broadcast // Watch's

	reloadMu sync.Mutex // serialises reading the file and applying it

	mu     sync.Mutex // guards status, profiles and gateway
	status Status
	// profiles and separator are the config's, as last loaded; gateway,
	// when set, is given them at every load ([Local.ServeProfiles]).
	profiles  []*registry.Profile
	separator string
	gateway   *gateway.Gateway
	settings  registry.Settings // the last loaded (reloadMu)

	following func() // tests: called once the file is watched and read
}

// NewLocal creates the engine for cfg's servers. cfg.Path is the file it
// follows ("" for none). opts may be nil.
func NewLocal(cfg *registry.Config, opts *LocalOptions) *Local {
	l := &Local{path: cfg.Path, changes: make(chan struct{}, 1), changed: supervisor.NewBroadcast()}
	if opts != nil {
		l.opts = *opts
	}
	if l.opts.LoadConfig == nil {
		l.opts.LoadConfig = registry.LoadSettled
	}
	if l.opts.Debounce <= 0 {
		l.opts.Debounce = 300 * time.Millisecond
	}
	l.status.ConfigPath = cfg.Path
	l.settings = cfg.Settings
	l.profiles, l.separator = cfg.Profiles, cfg.Settings.NameSeparator()
	l.sup = supervisor.New(cfg.Servers, l.opts.Supervisor)
	return l
}

// ServeProfiles gives gw the config's profiles now and after every reload:
// the aggregates follow the file.
func (l *Local) ServeProfiles(gw *gateway.Gateway) {
	l.mu.Lock()
	l.gateway = gw
	ps, sep := l.profiles, l.separator
	l.mu.Unlock()
	gw.SetProfiles(sep, ps)
}

// PatternWarnings are the warnings for profile patterns that match none of
// their server's tools, judged against the catalogues of the servers
// mcptray has seen (a server never seen is not judged).
func PatternWarnings(cfg *registry.Config, snap supervisor.Snapshot) []registry.Diagnostic {
	return cfg.PatternWarnings(func(server string) ([]string, bool) {
		st := snap.Server(server)
		if st == nil || st.Report == nil {
			return nil, false
		}
		names := make([]string, 0, len(st.Report.Tools))
		for _, t := range st.Report.Tools {
			names = append(names, t.Name)
		}
		return names, true
	})
}

// Run runs the servers and follows the config file until ctx ends, then
// stops every server and returns once nothing it started is left.
func (l *Local) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var err error
	wg.Go(func() {
		err = l.sup.Run(ctx)
		cancel()
	})
	wg.Go(func() {
		ch := l.sup.Watch()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ch:
				ch = l.sup.Watch()
				l.signal()
			}
		}
	})
	if l.path != "" && !l.opts.NoWatch {
		wg.Go(func() { l.watch(ctx) })
	}
	wg.Wait()
	return err
}

func (l *Local) watch(ctx context.Context) {
	first := true
	err := watchFile(ctx, l.path, l.opts.Debounce, func() {
		res, err := l.Reload(ctx)
		if first {
			first = false
			if l.following != nil {
				l.following()
			}
			if err == nil {
				return // what was loaded at the start: nothing to say
			}
		}
		switch {
		case err != nil:
			l.logf("not applied: %v", err)
		default:
			l.logf("applied %s: %d servers", res.ConfigPath, res.Servers)
		}
	}, func(err error) {
		msg := ""
		if err != nil {
			msg = err.Error()
			l.logf("not following every change of %s: %v", l.path, err)
		}
		l.setStatus(func(s *Status) { s.WatchProblem = msg })
	})
	if err != nil && ctx.Err() == nil {
		l.logf("not watching %s for changes: %v (use `mcptray reload`)", l.path, err)
		l.setStatus(func(s *Status) { s.WatchProblem = fmt.Sprintf("not watching %s for changes: %v", l.path, err) })
	}
}

func (l *Local) logf(format string, args ...any) {
	if l.opts.Logf != nil {
		l.opts.Logf(format, args...)
	}
}

func (l *Local) signal() {
	select {
	case l.changes <- struct{}{}:
	default:
	}
	l.changed.Signal()
}

func (l *Local) setStatus(change func(*Status)) {
	l.mu.Lock()
	change(&l.status)
	l.mu.Unlock()
	l.signal()
}

// Supervisor is the engine's supervisor (for the gateway, which relays
// client sessions to its servers).
func (l *Local) Supervisor() *supervisor.Supervisor { return l.sup }

// Snapshot is every server's state.
func (l *Local) Snapshot() supervisor.Snapshot { return l.sup.Snapshot() }

// Status is the engine's config file and whether it loads.
func (l *Local) Status() Status {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.status
	if s.ConfigProblem != nil {
		d := *s.ConfigProblem
		s.ConfigProblem = &d
	}
	return s
}

// Changes signals that Snapshot or Status changed.
func (l *Local) Changes() <-chan struct{} { return l.changes }

// Watch returns a channel closed at the next change (any number of
// watchers).
func (l *Local) Watch() <-chan struct{} { return l.changed.Wait() }

// Transitions returns the servers' state transitions from since on.
func (l *Local) Transitions(since uint64) ([]supervisor.Transition, uint64) {
	return l.sup.Transitions(since)
}

// Start starts a server.
func (l *Local) Start(_ context.Context, name string) error { return l.sup.Start(name) }

// Stop stops a server and keeps it stopped.
func (l *Local) Stop(_ context.Context, name string) error { return l.sup.Stop(name) }

// Restart restarts a server.
func (l *Local) Restart(_ context.Context, name string) error { return l.sup.Restart(name) }

// CheckNow probes a server at once ("" for all).
func (l *Local) CheckNow(_ context.Context, name string) error { return l.sup.CheckNow(name) }

// Log returns a server's stderr lines after since.
func (l *Local) Log(_ context.Context, name string, since uint64) ([]supervisor.LogLine, uint64, error) {
	lines, next := l.sup.Log(name, since)
	if len(lines) == 0 && l.sup.Snapshot().Server(name) == nil {
		return nil, since, fmt.Errorf("%w: %q", supervisor.ErrUnknownServer, name)
	}
	return lines, next, nil
}

// Reload reads the config file again and applies it.
func (l *Local) Reload(ctx context.Context) (*ReloadResult, error) {
	if l.path == "" {
		return nil, ErrNoConfig
	}
	l.reloadMu.Lock()
	defer l.reloadMu.Unlock()
	cfg, err := l.opts.LoadConfig(l.path)
	if errors.Is(err, registry.ErrUnsettled) {
		// Being written: its next change is read again; what runs stays.
		return nil, err
	}
	if err != nil {
		d := loadProblem(l.path, err)
		l.setStatus(func(s *Status) { s.ConfigProblem = &d })
		return nil, &ConfigError{Diagnostic: d}
	}
	l.sup.Reload(cfg.Servers)
	if l.opts.Trust != nil {
		l.opts.Trust.SetHoldNewServers(cfg.Settings.ApproveNewServers)
	}
	l.mu.Lock()
	l.profiles, l.separator = cfg.Profiles, cfg.Settings.NameSeparator()
	gw := l.gateway
	l.mu.Unlock()
	if gw != nil {
		gw.SetProfiles(cfg.Settings.NameSeparator(), cfg.Profiles)
	}
	l.setStatus(func(s *Status) { s.ConfigProblem = nil })
	res := &ReloadResult{ConfigPath: cfg.Path, Servers: len(cfg.Servers), Notes: l.applySettings(cfg.Settings)}
	for _, d := range append(cfg.Diagnostics, PatternWarnings(cfg, l.sup.Snapshot())...) {
		res.Diagnostics = append(res.Diagnostics, d.String())
		if d.Severity == registry.SeverityError {
			res.Errors++
		}
	}
	return res, nil
}

// applySettings applies the [settings] that changed since the last load,
// and says what changed (reloadMu held).
func (l *Local) applySettings(now registry.Settings) []string {
	was := l.settings
	l.settings = now
	var notes []string
	if a, b := supervisor.TimingsOf(was), supervisor.TimingsOf(now); a != b {
		l.sup.SetTimings(b)
		d := human.Duration
		for _, c := range []struct{ key, was, now string }{
			{"startup_timeout", d(a.StartupTimeout), d(b.StartupTimeout)},
			{"probe_interval", d(a.ProbeInterval), d(b.ProbeInterval)},
			{"probe_timeout", d(a.ProbeTimeout), d(b.ProbeTimeout)},
			{"log_lines", fmt.Sprint(a.LogLimitLines), fmt.Sprint(b.LogLimitLines)},
			{"log_limit", fmt.Sprint(a.LogLimitBytes) + " bytes", fmt.Sprint(b.LogLimitBytes) + " bytes"},
		} {
			if c.was != c.now {
				notes = append(notes, fmt.Sprintf("[settings] %s is now %s (was %s): it applies to what each server does next (a handshake, a probe, a stderr line; a probe already scheduled keeps its time)", c.key, c.now, c.was))
			}
		}
	}
	if l.opts.OnSettings != nil {
		notes = append(notes, l.opts.OnSettings(was, now)...)
	}
	for _, n := range notes {
		if l.opts.Logf != nil {
			l.opts.Logf("%s", n)
		}
	}
	return notes
}

// loadProblem is why the file at path did not load, as a diagnostic with
// its position when there is one.
func loadProblem(path string, err error) registry.Diagnostic {
	var se *registry.SyntaxError
	if errors.As(err, &se) {
		return se.Diagnostic
	}
	d := registry.Diagnostic{Severity: registry.SeverityError, File: path, Message: err.Error()}
	var pe *fs.PathError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d.Message = "the file is not there (deleted, or its folder moved away)"
	case errors.As(err, &pe):
		d.Message = fmt.Sprintf("cannot %s it: %v", pe.Op, pe.Err)
	}
	return d
}
