package app

import (
	"context"
	"fmt"
	"time"

	"mcptray/healthcheck"
	"mcptray/registry"
	"mcptray/supervisor"
)

// Trial is a server run for trying it out, on an engine of its own: its
// session declares the client handlers it was started with (elicitation,
// roots, progress…), which the engine's health-check session never does.
// `mcptray call` starts one for its one call; the window keeps one per
// server while it is open, so calls after the first do not wait for a
// start.
type Trial struct {
	srv  *registry.Server
	sup  *supervisor.Supervisor
	stop context.CancelFunc
	done chan struct{}
}

// StartTrial starts srv, a server of cfg, with cfg's settings and the
// environment the desktop app gives servers. handlers answer what the
// server sends during calls. Close stops it.
func StartTrial(cfg *registry.Config, srv *registry.Server, handlers *healthcheck.ClientHandlers) *Trial {
	return StartTrialWith(cfg, srv, EngineSetup{Client: handlers}, 0)
}

// StartTrialWith starts srv on an engine built for setup (its Client
// answers what the server sends during calls); startup, when set, bounds
// its start.
func StartTrialWith(cfg *registry.Config, srv *registry.Server, setup EngineSetup, startup time.Duration) *Trial {
	opts := NewEngineOptions(cfg, setup)
	srv = srv.Clone()
	srv.Start, srv.Autostart, srv.Disabled = registry.StartAuto, true, false
	opts.StopGrace, opts.KillGrace, opts.NoLogFiles = checkStopGrace, checkKillGrace, true
	opts.ProbeInterval = 24 * time.Hour // calls show whether it answers
	if startup > 0 && (opts.StartupTimeout <= 0 || opts.StartupTimeout > startup) {
		opts.StartupTimeout = startup
	}
	t := &Trial{srv: srv, sup: supervisor.New([]*registry.Server{srv}, opts), done: make(chan struct{})}
	var ctx context.Context
	ctx, t.stop = context.WithCancel(context.Background())
	go func() {
		defer close(t.done)
		_ = t.sup.Run(ctx)
	}()
	return t
}

// Server is the server as the trial runs it.
func (t *Trial) Server() *registry.Server { return t.srv }

// Use waits until the server has a session and runs fn with it; see
// [supervisor.Supervisor.Use] for how it fails. The session stays the
// trial's: fn must not close it.
func (t *Trial) Use(ctx context.Context, fn func(context.Context, *healthcheck.Session) error) error {
	return t.sup.Use(ctx, t.srv.Name, func(ctx context.Context, s supervisor.Session) error {
		hs, ok := s.(*healthcheck.Session)
		if !ok {
			return fmt.Errorf("the engine's session to %s is not a health-check session", t.srv.Name)
		}
		return fn(ctx, hs)
	})
}

// Close stops the server and returns once it is stopped.
func (t *Trial) Close() {
	t.stop()
	<-t.done
}
