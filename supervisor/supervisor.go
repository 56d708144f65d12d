package supervisor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"mcptray/registry"
)

// Errors returned by commands.
var (
	ErrUnknownServer = errors.New("no such server")
	ErrDisabled      = errors.New("server is disabled in the config")
	ErrRunning       = errors.New("supervisor is already running")
)

// Supervisor runs one unit per configured server. Create it with [New], run
// it with [Supervisor.Run]; its methods are safe for concurrent use.
type Supervisor struct {
	opts        Options
	changes     chan struct{}
	changed     *Broadcast
	transitions transitionLog
	records     *procRecords            // the servers it runs, for the next supervisor if this one is killed
	timings     atomic.Pointer[Timings] // the options', then SetTimings'

	// mu guards the fields below.
	//
	// Lock order: mu before a unit's mu (Reload holds mu while it edits
	// each unit); never take mu while holding a unit's mu. The stderr
	// ring's, the transition log's and the broadcast's mutexes are leaves:
	// nothing else is locked while one is held. No lock is held across a
	// channel operation that can block, nor across a call into a process
	// or the health check.
	mu    sync.Mutex
	units []*unit // in config-file order
	// instances are the per-session units of share = false servers, in
	// the order they were made; instanceSeq numbers them per server.
	instances   []*unit
	instanceSeq map[string]int
	runCtx      context.Context
	started     bool
	wg          sync.WaitGroup // unit goroutines (Add under mu)

	live liveSessions // the units' live sessions, for Use
}

// New creates a supervisor for servers (in file order). Nothing runs until
// Run is called. opts may be nil.
func New(servers []*registry.Server, opts *Options) *Supervisor {
	s := &Supervisor{opts: opts.withDefaults(), changes: make(chan struct{}, 1), changed: NewBroadcast()}
	o := &s.opts
	s.timings.Store(&Timings{StartupTimeout: o.StartupTimeout, ProbeInterval: o.ProbeInterval, ProbeTimeout: o.ProbeTimeout,
		LogLimitBytes: o.LogLimitBytes, LogLimitLines: o.LogLimitLines})
	s.records = newProcRecords(s.opts.ProcDir, s.opts.Logger)
	for _, srv := range servers {
		s.units = append(s.units, newUnit(s, srv, ""))
	}
	return s
}

// Run starts the servers that should run and supervises them until ctx ends;
// then it stops every server, all in parallel, and returns once nothing it
// started is left. Commands given before Run take effect when it starts.
//
// Before it starts any server it ends what a supervisor of the same user
// that was killed left running (see pidrecord.go).
func (s *Supervisor) Run(ctx context.Context) error {
	s.mu.Lock()
	if s.started {
		s.mu.Unlock()
		return ErrRunning
	}
	s.started = true
	s.mu.Unlock()
	cleanStaleRecords(s.opts.ProcDir, s.opts.Logger)
	s.mu.Lock()
	s.runCtx = ctx
	for _, u := range s.units {
		s.goLocked(u)
	}
	for _, u := range s.instances {
		s.goLocked(u)
	}
	s.mu.Unlock()
	<-ctx.Done()
	s.wg.Wait()
	return nil
}

// goLocked starts u's goroutine. s.mu must be held.
func (s *Supervisor) goLocked(u *unit) {
	if s.runCtx == nil {
		return
	}
	uctx, cancel := context.WithCancel(s.runCtx)
	u.cancel = cancel
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer cancel()
		u.run(uctx)
		if u.instanceOf != "" {
			s.dropInstance(u) // its process is gone
		}
	}()
}

func (s *Supervisor) notify() {
	s.live.broadcast()
	select {
	case s.changes <- struct{}{}:
	default:
	}
	s.changed.Signal()
}

// Changes signals that the snapshot changed. The channel holds one signal at
// most: several changes before a read come as one, and the engine never waits
// for a reader. Call Snapshot after each signal. It has one reader; several
// watchers use [Supervisor.Watch].
func (s *Supervisor) Changes() <-chan struct{} { return s.changes }

// Watch returns a channel that is closed at the next change of the snapshot
// or the transitions. Any number of watchers may wait on it; take it before
// reading the snapshot so that a change in between is not missed, and call
// Watch again after each wake-up.
func (s *Supervisor) Watch() <-chan struct{} { return s.changed.Wait() }

// Transitions returns every server's state transitions with a sequence
// number of at least since (oldest first; the engine keeps the last 1000),
// and the number to pass next time. Start with since = 0.
func (s *Supervisor) Transitions(since uint64) ([]Transition, uint64) {
	return s.transitions.since(since)
}

// Snapshot returns a copy of every server's state in config-file order,
// each server's instances (share = false) right after it.
func (s *Supervisor) Snapshot() Snapshot {
	s.mu.Lock()
	units := s.allUnitsLocked()
	s.mu.Unlock()
	snap := Snapshot{Time: s.opts.Clock.Now(), Servers: make([]ServerState, 0, len(units))}
	instances := map[string]int{}
	for _, u := range units {
		if u.instanceOf != "" {
			instances[u.instanceOf]++
		}
	}
	for _, u := range units {
		u.mu.Lock()
		st := u.st
		st.Clients, st.LastUse = u.leases, u.lastUse
		u.mu.Unlock()
		st.Instances = instances[u.name]
		if st.LastExit != nil {
			e := *st.LastExit
			st.LastExit = &e
		}
		st.StderrTail = u.ring.tail(tailLines)
		snap.Servers = append(snap.Servers, st)
	}
	return snap
}

// Log returns the stderr lines of server name with a sequence number of at
// least since, and the number to pass next time. Start with since = 0. Lines
// that left the ring are skipped.
func (s *Supervisor) Log(name string, since uint64) ([]LogLine, uint64) {
	u := s.unit(name)
	if u == nil {
		return nil, since
	}
	return u.ring.since(since)
}

func (s *Supervisor) unit(name string) *unit {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range s.units {
		if u.name == name {
			return u
		}
	}
	for _, u := range s.instances {
		if u.name == name {
			return u
		}
	}
	return nil
}

// allUnitsLocked is every unit in snapshot order: each configured one,
// then its instances. s.mu must be held.
func (s *Supervisor) allUnitsLocked() []*unit {
	if len(s.instances) == 0 {
		return slices.Clone(s.units)
	}
	out := make([]*unit, 0, len(s.units)+len(s.instances))
	placed := map[*unit]bool{}
	for _, u := range s.units {
		out = append(out, u)
		for _, in := range s.instances {
			if in.instanceOf == u.name {
				out = append(out, in)
				placed[in] = true
			}
		}
	}
	for _, in := range s.instances {
		if !placed[in] { // its server left the config; it is stopping
			out = append(out, in)
		}
	}
	return out
}

func (s *Supervisor) lookup(name string) (*unit, error) {
	u := s.unit(name)
	if u == nil {
		return nil, fmt.Errorf("%w: %q", ErrUnknownServer, name)
	}
	return u, nil
}

// startable reports why u cannot start. u.mu must be held.
func (u *unit) startableLocked() error {
	switch {
	case u.server.Invalid != nil:
		return fmt.Errorf("%s cannot start: %w", u.name, u.server.Invalid)
	case u.server.Disabled:
		return fmt.Errorf("%s: %w", u.name, ErrDisabled)
	}
	return nil
}

// Start starts a stopped server, or one that gave up (crash-looping, failed,
// in backoff: at once). It returns before the server is up; watch Changes.
func (s *Supervisor) Start(name string) error { return s.start(name, false) }

// Stop stops a server (and everything it started) and keeps it stopped.
func (s *Supervisor) Stop(name string) error {
	u, err := s.lookup(name)
	if err != nil {
		return err
	}
	u.command(func() {
		u.want, u.stopReason = false, "stopped by request"
		u.userStopped, u.idleStopped = true, false
	})
	return nil
}

// Restart stops a server if it runs and starts it again, forgetting its
// crash history.
func (s *Supervisor) Restart(name string) error { return s.start(name, true) }

// start is a person's Start (or Restart): it counts as a use, and undoes
// a stop by request or by idle_stop.
func (s *Supervisor) start(name string, restart bool) error {
	u, err := s.lookup(name)
	if err != nil {
		return err
	}
	u.mu.Lock()
	err = u.startableLocked()
	u.mu.Unlock()
	if err != nil {
		return err
	}
	now := s.opts.Clock.Now()
	u.command(func() {
		u.want, u.userStart, u.restart = true, true, u.restart || restart
		u.userStopped, u.idleStopped, u.lastUse = false, false, now
	})
	return nil
}

// CheckNow probes a ready server at once, or retries one in backoff (a
// remote server reconnects). name "" means every server.
func (s *Supervisor) CheckNow(name string) error {
	var units []*unit
	if name == "" {
		s.mu.Lock()
		units = s.allUnitsLocked()
		s.mu.Unlock()
	} else {
		u, err := s.lookup(name)
		if err != nil {
			return err
		}
		units = []*unit{u}
	}
	for _, u := range units {
		u.command(func() { u.checkNow = true })
	}
	return nil
}

// Reload applies a new list of servers: added ones are created (and started
// if start = "auto"), removed ones stopped and dropped, changed ones
// restarted with the new entry, unchanged ones left alone. The snapshot
// takes the new order. Instances (see [Supervisor.NewInstance]) are not
// servers of the list: they follow theirs (restarted with its new entry,
// stopped with it when it is removed).
func (s *Supervisor) Reload(servers []*registry.Server) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := map[string]*unit{}
	for _, u := range s.units {
		old[u.name] = u
	}
	var next []*unit
	for _, srv := range servers {
		u, ok := old[srv.Name]
		if !ok {
			u = newUnit(s, srv, "")
			next = append(next, u)
			s.goLocked(u)
			continue
		}
		delete(old, srv.Name)
		next = append(next, u)
		u.reconfigure(srv)
		for _, in := range s.instances {
			if in.instanceOf == srv.Name {
				in.reconfigure(instanceEntry(srv, in.name))
			}
		}
	}
	for _, u := range old {
		u.end("removed from the config")
		for _, in := range s.instances {
			if in.instanceOf == u.name {
				in.end("removed from the config")
			}
		}
	}
	s.units = next
	s.notify()
}

// reconfigure gives u a (possibly) new entry: a changed one restarts it.
func (u *unit) reconfigure(srv *registry.Server) {
	u.mu.Lock()
	same := u.server.Equal(srv) && u.server.Name == srv.Name
	if !same {
		u.setServerLocked(srv, u.want)
		u.reconfig = true
		u.wishGen++
		u.st.Server, u.st.Transport = srv, srv.Transport()
	} else {
		// Same content: keep the newer pointer (its Line may differ).
		u.server, u.st.Server = srv, srv
	}
	u.lifecycleLocked()
	u.mu.Unlock()
	if !same {
		u.poke()
	}
}

// end stops u's run for good, saying why.
func (u *unit) end(reason string) {
	u.mu.Lock()
	u.quitReason = reason
	u.mu.Unlock()
	if u.cancel != nil {
		u.cancel()
	}
}
