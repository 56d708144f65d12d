package supervisor

import (
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
	t := &fakeTimer{c: make(chan time.Time, 1), when: c.now.Add(d), clock: c}
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
