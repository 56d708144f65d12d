package supervisor

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"mcptray/registry"
)

// Clients and the lifecycle they drive: the gateway tells the supervisor
// when a client arrives (Acquire), uses a server (Touch) and leaves
// (Release), and asks for a process of a session's own for a server that
// must not be shared (NewInstance, EndInstance).
//
// What idle_stop counts is use, not open sessions: a server is stopped once
// no client has called Acquire or Touch for idle_stop, even while client
// sessions stay open and silent (an idle Claude Code session does not keep
// a browser running all day). The session's next request starts it again:
// the gateway calls Touch before it relays a request, and Touch starts a
// server that waits for a client. A session that only waits for what the
// server sends by itself (a subscription's updates) sees nothing while its
// server is stopped; keep idle_stop off for such servers.
//
// A server a person stopped (Stop) stays stopped: no client starts it
// until a person starts it again. A start = "manual" server is never
// started by a client either.

// Errors of the instance commands.
var (
	ErrShared      = errors.New("server is shared (share = true): its clients use the server itself")
	ErrNotInstance = errors.New("not an instance")
	ErrStopped     = errors.New("the engine has stopped")
)

// Acquire tells the supervisor that a client arrived for server name (or
// an instance of one): it is counted until Release, it counts as a use,
// and a server that waits for a client (start = "lazy" not started yet, or
// stopped by idle_stop) is started. Nothing else changes: a running
// server is left alone; a manual or stopped-by-request one stays as it is,
// and [Supervisor.Use] says why. It fails for an unknown, disabled or
// invalid server.
func (s *Supervisor) Acquire(name string) error {
	u, err := s.lookup(name)
	if err != nil {
		return err
	}
	return u.use(1)
}

// Release tells the supervisor that a client of server name left. It is
// not a use: the idle_stop clock keeps counting from the last one.
func (s *Supervisor) Release(name string) {
	u := s.unit(name)
	if u == nil {
		return
	}
	u.mu.Lock()
	if u.leases > 0 {
		u.leases--
	}
	u.mu.Unlock()
	s.notify()
}

// Touch tells the supervisor that a client used server name now (a
// request): the idle_stop clock starts again, and a server that waits for
// a client is started. It is cheap enough to call on every request: only
// a start publishes a change.
func (s *Supervisor) Touch(name string) {
	if u := s.unit(name); u != nil {
		_ = u.use(0)
	}
}

// use records a use by a client (and delta more of them holding u), and
// starts u when it waits for one.
func (u *unit) use(delta int) error {
	now := u.sup.opts.Clock.Now()
	u.mu.Lock()
	if err := u.startableLocked(); err != nil {
		u.mu.Unlock()
		return err
	}
	u.leases += delta
	u.lastUse = now
	start := u.startsOnUseLocked()
	if start {
		u.want, u.userStart, u.idleStopped = true, true, false
		u.wishGen++
		u.stopReason = ReasonNotStarted
		u.lifecycleLocked()
	}
	u.mu.Unlock()
	if start {
		u.sup.opts.Logger.Info("server starts for a client", "server", u.name)
		u.poke()
	}
	if start || delta != 0 {
		u.sup.notify()
	}
	return nil
}

// startsOnUseLocked reports whether a client's use starts u now. u.mu
// must be held.
func (u *unit) startsOnUseLocked() bool {
	if u.want || u.userStopped || u.server.Invalid != nil || u.server.Disabled {
		return false
	}
	return u.idleStopped || u.server.StartMode() == registry.StartLazy
}

// idleStopLocked is u's idle_stop: 0 when it has none, or when it starts
// only by hand (start = "manual": the loader warns that it is ignored).
func (u *unit) idleStopLocked() time.Duration {
	if u.server.StartMode() == registry.StartManual {
		return 0
	}
	return max(u.server.IdleStop, 0)
}

// lifecycleLocked refreshes the published lifecycle fields. u.mu held.
func (u *unit) lifecycleLocked() {
	u.st.Start, u.st.IdleStop = u.server.StartMode(), u.idleStopLocked()
	u.st.WaitsForClient = u.st.State == StateStopped && u.startsOnUseLocked()
}

// IdleReason is the reason of a server stopped by its idle_stop of d.
func IdleReason(d time.Duration) string {
	return fmt.Sprintf("stopped after %s without use (idle_stop); starts again with its next client", registry.FormatDuration(d))
}

// idleDue is when u's idle_stop stops it (ok false: never).
func (u *unit) idleDue() (due time.Time, ok bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	d := u.idleStopLocked()
	if d <= 0 || !u.want {
		return time.Time{}, false
	}
	return u.lastUse.Add(d), true
}

// idleStopIfDue stops u (a wish, like Stop) when nobody used it for its
// idle_stop, and says why; "" when it is not due. Run goroutine.
func (u *unit) idleStopIfDue() string {
	now := u.sup.opts.Clock.Now()
	u.mu.Lock()
	defer u.mu.Unlock()
	d := u.idleStopLocked()
	if d <= 0 || !u.want || now.Before(u.lastUse.Add(d)) {
		return ""
	}
	u.want, u.idleStopped, u.stopReason = false, true, IdleReason(d)
	u.wishGen++
	return u.stopReason
}

// NewInstance makes and starts a unit of server name's own for one client
// session, for a server with share = false: "NAME#2", "NAME#3", … (a
// number is not used twice in an engine's life). The instance runs name's
// entry whatever its start mode, is shown in the snapshot right after
// name with InstanceOf set, takes the commands (Use, Touch, Stop, Restart)
// by its own name, follows name's entry on Reload, and ends with
// [Supervisor.EndInstance], with name's removal from the config, or with
// the engine. It is never written to servers.toml.
func (s *Supervisor) NewInstance(name string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var base *unit
	for _, u := range s.units {
		if u.name == name {
			base = u
		}
	}
	if base == nil {
		for _, u := range s.instances {
			if u.name == name {
				return "", fmt.Errorf("%s is an instance of %s: ask for an instance of %s", name, u.instanceOf, u.instanceOf)
			}
		}
		return "", fmt.Errorf("%w: %q", ErrUnknownServer, name)
	}
	base.mu.Lock()
	srv := base.server
	err := base.startableLocked()
	base.mu.Unlock()
	switch {
	case err != nil:
		return "", err
	case !srv.Unshared:
		return "", fmt.Errorf("%s: %w", name, ErrShared)
	case s.runCtx != nil && s.runCtx.Err() != nil:
		return "", ErrStopped
	}
	if s.instanceSeq == nil {
		s.instanceSeq = map[string]int{}
	}
	s.instanceSeq[name]++
	inst := fmt.Sprintf("%s#%d", name, s.instanceSeq[name]+1)
	u := newUnit(s, instanceEntry(srv, inst), name)
	u.lastUse = s.opts.Clock.Now()
	s.instances = append(s.instances, u)
	s.goLocked(u)
	s.notify()
	return inst, nil
}

// instanceEntry is srv's entry under an instance's name (the name the
// health check and the gateway know the process by).
func instanceEntry(srv *registry.Server, inst string) *registry.Server {
	c := srv.Clone()
	c.Name = inst
	return c
}

// EndInstance stops instance (made by [Supervisor.NewInstance]) and
// everything it started; it leaves the snapshot once its process is gone.
// It returns at once.
func (s *Supervisor) EndInstance(instance string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.instances, func(u *unit) bool { return u.name == instance })
	if i < 0 {
		if slices.ContainsFunc(s.units, func(u *unit) bool { return u.name == instance }) {
			return fmt.Errorf("%s: %w of a server (it is a server of the config)", instance, ErrNotInstance)
		}
		return fmt.Errorf("%w: %q", ErrUnknownServer, instance)
	}
	u := s.instances[i]
	if u.cancel == nil {
		// Never run (the engine has not started): nothing to stop.
		s.instances = slices.Delete(s.instances, i, i+1)
		s.notify()
		return nil
	}
	u.end("its client session ended")
	return nil
}

// dropInstance removes an instance whose run ended.
func (s *Supervisor) dropInstance(u *unit) {
	s.mu.Lock()
	s.instances = slices.DeleteFunc(s.instances, func(o *unit) bool { return o == u })
	s.mu.Unlock()
	s.notify()
}
