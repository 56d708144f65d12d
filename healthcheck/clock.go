package healthcheck

import (
	"context"
	"sync"
	"time"
)

// Clock is the time source of every timeout in this package (the wait for
// server/discover, the grace after an exit, the bound on Close), so tests
// drive them on a fake clock. The supervisor's clock has the same shape.
type Clock interface {
	Now() time.Time
	NewTimer(d time.Duration) Timer
}

// Timer is a [time.Timer] behind an interface.
type Timer interface {
	C() <-chan time.Time
	Stop() bool
}

type realClock struct{}

func (realClock) Now() time.Time                 { return time.Now() }
func (realClock) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (t realTimer) C() <-chan time.Time { return t.t.C }
func (t realTimer) Stop() bool          { return t.t.Stop() }

// afterFunc runs f in its own goroutine once d has passed on clock, unless
// the returned stop is called first.
func afterFunc(clock Clock, d time.Duration, f func()) (stop func()) {
	t := clock.NewTimer(d)
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

// sleepOn waits d on clock, or until done is closed; it reports whether the
// whole wait passed.
func sleepOn(clock Clock, d time.Duration, done <-chan struct{}) bool {
	t := clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-done:
		return false
	}
}

// withClockTimeout is context.WithTimeout on clock: ctx ends with a cause
// that wraps context.DeadlineExceeded.
func withClockTimeout(ctx context.Context, clock Clock, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	stop := afterFunc(clock, d, func() { cancel(context.DeadlineExceeded) })
	return ctx, func() {
		stop()
		cancel(context.Canceled)
	}
}
