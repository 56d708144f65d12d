package supervisor

import (
	"context"
	"fmt"
	"sync"

	"mcptray/healthcheck"
)

// NotReadyError is why [Supervisor.Use] could not hand out a server's
// session: the server failed to start, gave up, or was stopped.
type NotReadyError struct {
	Name      string
	State     State
	Reason    string
	Diagnosis *healthcheck.Diagnosis // the cause explained, when known
	LastExit  *ExitInfo
	Stderr    []LogLine // the last stderr lines
}

func (e *NotReadyError) Error() string {
	return fmt.Sprintf("%s is %s: %s", e.Name, e.State, e.Reason)
}

// Unwrap makes the diagnosis reachable with errors.As.
func (e *NotReadyError) Unwrap() error {
	if e.Diagnosis == nil {
		return nil
	}
	return e.Diagnosis
}

// Use waits until server name (or an instance, "NAME#2") has a live
// health-check session (it is ready or degraded) and runs fn with it. It
// fails with a *NotReadyError when the server cannot get there (failed,
// crash-looping, stopped, or waiting out a backoff after a failed start),
// and with ctx's error when ctx ends first. Use does not start a server
// that waits for a client (start = "lazy", or stopped by idle_stop), nor
// count as its use: a client calls [Supervisor.Acquire] or
// [Supervisor.Touch] first.
//
// The session stays the unit's: fn must not close it. If the server ends
// while fn runs (a crash, a stop), the session closes under fn, whose calls
// then fail.
func (s *Supervisor) Use(ctx context.Context, name string, fn func(ctx context.Context, sess Session) error) error {
	u, err := s.lookup(name)
	if err != nil {
		return err
	}
	for {
		changed := s.live.changed()
		if sess := s.live.get(u); sess != nil {
			return fn(ctx, sess)
		}
		if err := u.unusable(); err != nil {
			return err
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// unusable says why u will not get a session without a command, or nil
// while it may still get one.
func (u *unit) unusable() error {
	u.mu.Lock()
	st := u.st
	u.mu.Unlock()
	switch st.State {
	case StateFailed, StateCrashLooping, StateBackoff, StateUnhealthy, StateSignIn:
	case StateStopped:
		if u.wanted() {
			return nil // about to start
		}
	default:
		return nil
	}
	e := &NotReadyError{Name: u.name, State: st.State, Reason: st.Reason, Diagnosis: st.Diagnosis, Stderr: u.ring.tail(tailLines)}
	if st.LastExit != nil {
		x := *st.LastExit
		e.LastExit = &x
	}
	return e
}

// wanted reports whether a stopped u is about to start: it should run and
// run has not yet come to rest on that wish (as it does when it parks a
// server that exited, or cannot run).
func (u *unit) wanted() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.want && u.settledGen != u.wishGen
}

// liveSessions holds the session of each unit that has one, for Use.
type liveSessions struct {
	mu   sync.Mutex // protects the fields below
	by   map[*unit]Session
	wake chan struct{} // closed (and replaced) on every change of any server
}

// set records u's live session (nil: it has none any more).
func (l *liveSessions) set(u *unit, sess Session) {
	l.mu.Lock()
	if sess == nil {
		delete(l.by, u)
	} else {
		if l.by == nil {
			l.by = map[*unit]Session{}
		}
		l.by[u] = sess
	}
	l.mu.Unlock()
	l.broadcast()
}

func (l *liveSessions) get(u *unit) Session {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.by[u]
}

// changed returns a channel closed at the next change.
func (l *liveSessions) changed() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.wake == nil {
		l.wake = make(chan struct{})
	}
	return l.wake
}

func (l *liveSessions) broadcast() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.wake != nil {
		close(l.wake)
		l.wake = nil
	}
}
