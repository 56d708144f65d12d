// Package clock is the one time source of mcptray's timeouts, backoffs and
// sweeps: the engine's packages take a [Clock], so that their tests drive
// every timer from [fakeclock] instead of waiting in real time.
package clock

import (
	"context"
	"sync"
	"time"
)

// Clock tells the time and makes timers.
type Clock interface {
	Now() time.Time
	NewTimer(d time.Duration) Timer
}

// Timer is a [time.Timer] behind an interface.
type Timer interface {
	C() <-chan time.Time
	Stop() bool
}

// Real is the system's clock.
var Real Clock = realClock{}

type realClock struct{}

func (realClock) Now() time.Time                 { return time.Now() }
func (realClock) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (t realTimer) C() <-chan time.Time { return t.t.C }
func (t realTimer) Stop() bool          { return t.t.Stop() }

// Or is c, or Real when c is nil: the default of an option.
func Or(c Clock) Clock {
	if c == nil {
		return Real
	}
	return c
}

// AfterFunc runs f in its own goroutine once d has passed on c, unless the
// returned stop is called first.
func AfterFunc(c Clock, d time.Duration, f func()) (stop func()) {
	t := c.NewTimer(d)
	quit := make(chan struct{})
	go func() {
		select {
		case <-t.C():
			f()
		case <-quit:
		}
	}()
	return sync.OnceFunc(func() {
		t.Stop()
		close(quit)
	})
}

// Sleep waits d on c, or until done is closed; it reports whether the whole
// wait passed.
func Sleep(c Clock, d time.Duration, done <-chan struct{}) bool {
	t := c.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-done:
		return false
	}
}

// WithTimeout is context.WithTimeout on c: ctx ends with a cause that
// wraps context.DeadlineExceeded.
func WithTimeout(ctx context.Context, c Clock, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	stop := AfterFunc(c, d, func() { cancel(context.DeadlineExceeded) })
	return ctx, func() {
		stop()
		cancel(context.Canceled)
	}
}
