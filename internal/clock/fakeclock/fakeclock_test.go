package fakeclock

import (
	"testing"
	"time"
)

func TestAdvanceFiresWhatIsDue(t *testing.T) {
	c := New()
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
	if p := c.Pending(); len(p) != 0 {
		t.Fatalf("pending after stop: %v", p)
	}
	select {
	case <-c.NewTimer(0).C():
	default:
		t.Fatal("a timer of 0 has not fired")
	}
}

func TestWaitTimerWakesOnTheStart(t *testing.T) {
	c := New()
	go func() {
		time.Sleep(10 * time.Millisecond) // the wait must be woken, not find it there
		c.NewTimer(time.Minute)
	}()
	c.WaitTimer(t, time.Minute)
	go c.NewTimer(time.Hour)
	c.WaitTimer(t, time.Hour)
	c.Next(t)
	if got := c.Pending(); len(got) != 1 || got[0] != time.Hour {
		t.Fatalf("after Next: pending %v, want the hour's timer", got)
	}
	if got, want := c.Now(), time.Date(2026, 1, 2, 3, 5, 5, 0, time.UTC); !got.Equal(want) {
		t.Fatalf("Now %v, want %v", got, want)
	}
}
