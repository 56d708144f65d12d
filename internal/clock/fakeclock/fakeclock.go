// Package fakeclock is a [clock.Clock] that moves only when a test moves
// it, and tells the test when the code under test starts a timer, so a
// test waits on that event instead of on real time.
package fakeclock

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"mcptray/internal/clock"
)

// Clock is the fake. The zero value is not usable: call New.
type Clock struct {
	mu      sync.Mutex
	now     time.Time
	timers  []*timer
	changed chan struct{} // closed and replaced when a timer starts
}

type timer struct {
	c    *Clock
	d    time.Duration
	at   time.Time
	ch   chan time.Time
	done bool // fired or stopped
}

// New is a fake clock at a fixed, arbitrary time.
func New() *Clock {
	return &Clock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), changed: make(chan struct{})}
}

// Now is the fake time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// NewTimer starts a timer that fires when Advance reaches it; like a real
// timer, one of d ≤ 0 has fired already.
func (c *Clock) NewTimer(d time.Duration) clock.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &timer{c: c, d: d, at: c.now.Add(d), ch: make(chan time.Time, 1)}
	if d <= 0 {
		t.done = true
		t.ch <- c.now
		return t
	}
	c.timers = append(c.timers, t)
	close(c.changed)
	c.changed = make(chan struct{})
	return t
}

func (t *timer) C() <-chan time.Time { return t.ch }

func (t *timer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.done
	t.done = true
	return was
}

// Advance moves the time on by d and fires the timers that are due.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.timers[:0]
	for _, t := range c.timers {
		switch {
		case t.done:
		case !t.at.After(c.now):
			t.done = true
			t.ch <- c.now
		default:
			kept = append(kept, t)
		}
	}
	c.timers = kept
}

// Pending is the durations of the timers neither fired nor stopped, in the
// order they were started.
func (c *Clock) Pending() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pendingLocked()
}

func (c *Clock) pendingLocked() []time.Duration {
	var out []time.Duration
	for _, t := range c.timers {
		if !t.done {
			out = append(out, t.d)
		}
	}
	return out
}

// hangGuard bounds a wait for the code under test to start a timer: it
// only turns a hang into a failure, and is long because a loaded machine
// can leave a goroutine unscheduled for seconds.
const hangGuard = 60 * time.Second

// WaitTimer waits (in real time) until a timer of duration d is pending:
// the code under test has reached its wait, and Advance(d) fires it.
func (c *Clock) WaitTimer(tb testing.TB, d time.Duration) {
	tb.Helper()
	if err := c.wait(func(p []time.Duration) bool { return slices.Contains(p, d) }); err != nil {
		tb.Fatalf("no %v timer was started: %v", d, err)
	}
}

// Next advances to the earliest pending timer, waiting (in real time) for
// one to be started.
func (c *Clock) Next(tb testing.TB) {
	tb.Helper()
	if err := c.wait(func(p []time.Duration) bool { return len(p) > 0 }); err != nil {
		tb.Fatalf("no timer was started: %v", err)
	}
	c.mu.Lock()
	var first *timer
	for _, t := range c.timers {
		if !t.done && (first == nil || t.at.Before(first.at)) {
			first = t
		}
	}
	d := first.at.Sub(c.now)
	c.mu.Unlock()
	c.Advance(d)
}

// wait blocks until ok holds of the pending timers, woken by each new one.
func (c *Clock) wait(ok func([]time.Duration) bool) error {
	guard := time.NewTimer(hangGuard)
	defer guard.Stop()
	for {
		c.mu.Lock()
		p, changed := c.pendingLocked(), c.changed
		c.mu.Unlock()
		if ok(p) {
			return nil
		}
		select {
		case <-changed:
		case <-guard.C:
			return fmt.Errorf("pending after %v: %v", hangGuard, p)
		}
	}
}
