package supervisor

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// fakeClock only moves when Advance is called.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	c     chan time.Time
	d     time.Duration
	when  time.Time
	clock *fakeClock
	done  bool
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NewTimer(d time.Duration) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: make(chan time.Time, 1), d: d, when: c.now.Add(d), clock: c}
	if d <= 0 {
		t.done = true
		t.c <- c.now
		return t
	}
	c.timers = append(c.timers, t)
	return t
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Stop() bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	was := !t.done
	t.done = true
	return was
}

// Advance moves time on and fires the timers that are due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.timers[:0]
	for _, t := range c.timers {
		switch {
		case t.done:
		case !t.when.After(c.now):
			t.done = true
			t.c <- c.now
		default:
			kept = append(kept, t)
		}
	}
	c.timers = kept
}

// pending returns the durations of the timers not yet fired or stopped.
func (c *fakeClock) pending() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []time.Duration
	for _, t := range c.timers {
		if !t.done {
			out = append(out, t.d)
		}
	}
	return out
}

// waitTimer waits (in real time) until a timer of duration d is pending:
// the code under test has reached the wait, and Advance(d) fires it.
func (c *fakeClock) waitTimer(t testing.TB, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !slices.Contains(c.pending(), d) {
		if time.Now().After(deadline) {
			t.Fatalf("no %v timer was started; pending: %v", d, c.pending())
		}
		time.Sleep(time.Millisecond)
	}
}

// next advances to the earliest pending timer, waiting (in real time) for
// one to exist.
func (c *fakeClock) next(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c.mu.Lock()
		var first *fakeTimer
		for _, tm := range c.timers {
			if !tm.done && (first == nil || tm.when.Before(first.when)) {
				first = tm
			}
		}
		c.mu.Unlock()
		if first != nil {
			c.Advance(first.when.Sub(c.Now()))
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no timer pending")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestFakeClock(t *testing.T) {
	c := newFakeClock()
	a := c.NewTimer(time.Second)
	b := c.NewTimer(2 * time.Second)
	c.Advance(time.Second)
	select {
	case <-a.C():
	default:
		t.Fatal("a did not fire")
	}
	select {
	case <-b.C():
		t.Fatal("b fired early")
	default:
	}
	if !b.Stop() {
		t.Fatal("b.Stop on a pending timer returned false")
	}
}
