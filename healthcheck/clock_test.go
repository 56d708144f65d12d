package healthcheck

import (
	"sync"
	"testing"
	"time"
)

// fakeClock is a Clock that moves only when the test advances it.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
	added  chan time.Duration // each NewTimer's duration, for tests to wait on
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), added: make(chan time.Duration, 1000)}
}

type fakeTimer struct {
	c       *fakeClock
	at      time.Time
	ch      chan time.Time
	stopped bool
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NewTimer(d time.Duration) Timer {
	c.mu.Lock()
	t := &fakeTimer{c: c, at: c.now.Add(d), ch: make(chan time.Time, 1)}
	c.timers = append(c.timers, t)
	c.mu.Unlock()
	c.added <- d
	return t
}

// Advance moves the clock on and fires the timers due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.timers[:0]
	for _, t := range c.timers {
		if t.stopped {
			continue
		}
		if !t.at.After(c.now) {
			t.ch <- c.now
			t.stopped = true
			continue
		}
		kept = append(kept, t)
	}
	c.timers = kept
}

// waitTimer waits until a timer of duration d is created.
func (c *fakeClock) waitTimer(t *testing.T, d time.Duration) {
	t.Helper()
	timeout := time.NewTimer(30 * time.Second) // only a hang guard
	defer timeout.Stop()
	for {
		select {
		case got := <-c.added:
			if got == d {
				return
			}
		case <-timeout.C:
			t.Fatalf("no timer of %s was started", d)
		}
	}
}

func (t *fakeTimer) C() <-chan time.Time { return t.ch }

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.stopped
	t.stopped = true
	return was
}
