package supervisor

import (
	"testing"
	"time"
)

func testPolicy() restartPolicy {
	o := (&Options{BackoffBase: time.Second, BackoffMax: 8 * time.Second, Jitter: -1,
		StableRun: time.Minute, CrashLoopCount: 4, CrashLoopWindow: 2 * time.Minute}).withDefaults()
	return newRestartPolicy(&o)
}

// The backoff doubles with each consecutive crash up to its cap; a run
// that lasted StableRun starts it over.
func TestRestartPolicyBackoff(t *testing.T) {
	p := testPolicy()
	p.loopCount = 100
	now := time.Unix(1000, 0)
	var got []time.Duration
	for range 5 {
		now = now.Add(time.Minute) // outside nothing: the window is 2 min, the count 100
		d, looping := p.crashed(now, time.Second, false, false)
		if looping {
			t.Fatal("looping")
		}
		got = append(got, d)
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("delays %v, want %v", got, want)
		}
	}
	if d, _ := p.crashed(now.Add(time.Minute), time.Minute, false, false); d != time.Second {
		t.Errorf("after a stable run: %s, want the first delay again", d)
	}
	if p.failures() != 1 {
		t.Errorf("failures %d after a stable run and a crash, want 1", p.failures())
	}
}

// CrashLoopCount crashes within the window is a crash loop; crashes that
// fell out of the window do not count; a remote server never loops.
func TestRestartPolicyCrashLoop(t *testing.T) {
	p := testPolicy()
	now := time.Unix(1000, 0)
	for i := range 3 {
		if _, looping := p.crashed(now.Add(time.Duration(i)*time.Second), 0, false, false); looping {
			t.Fatalf("looping after %d crashes", i+1)
		}
	}
	// The first three are more than 2 minutes old: the fourth is alone.
	late := now.Add(3 * time.Minute)
	if _, looping := p.crashed(late, 0, false, false); looping {
		t.Fatal("crashes outside the window counted")
	}
	if n := p.recent(late); n != 1 {
		t.Errorf("recent %d, want 1", n)
	}
	for i := range 3 {
		_, looping := p.crashed(late.Add(time.Duration(i+1)*time.Second), 0, false, false)
		if looping != (i == 2) {
			t.Fatalf("crash %d within the window: looping %v", i+2, looping)
		}
	}
	r := testPolicy()
	for i := range 10 {
		if _, looping := r.crashed(now.Add(time.Duration(i)*time.Second), 0, true, false); looping {
			t.Fatal("a remote server's connection looped")
		}
	}
	if d := r.backoff(r.failures()); d != 8*time.Second {
		t.Errorf("remote backoff %s, want the cap", d)
	}
}

// A transient failure grows the backoff without counting a crash; reset
// forgets everything.
func TestRestartPolicyTransientAndReset(t *testing.T) {
	p := testPolicy()
	now := time.Unix(1000, 0)
	if d := p.transient(); d != time.Second {
		t.Errorf("first transient delay %s", d)
	}
	if d := p.transient(); d != 2*time.Second {
		t.Errorf("second transient delay %s", d)
	}
	if p.recent(now) != 0 {
		t.Error("a transient failure counted as a crash")
	}
	p.crashed(now, 0, false, false)
	p.reset()
	if p.failures() != 0 || p.recent(now) != 0 {
		t.Errorf("after reset: %d failures, %d crashes", p.failures(), p.recent(now))
	}
	if d, _ := p.crashed(now, 0, false, false); d != time.Second {
		t.Errorf("after reset: %s, want the first delay", d)
	}
}

// A session the server ended is reopened at once: after a stable run, or
// the first time after a short one (a server restarted soon after the
// session began); an end within the stable run of a reopen is backed off
// (a server that ends every session it opens), until a stable run or a
// restart by the person.
func TestRestartPolicySessionEnded(t *testing.T) {
	p := testPolicy()
	if !p.sessionEnded(2 * time.Second) {
		t.Fatal("the first end, 2s into the session: not reopened at once")
	}
	if p.sessionEnded(2 * time.Second) {
		t.Fatal("an end 2s after a reopen: reopened at once again (a server ending every session would be hammered)")
	}
	if d, _ := p.crashed(time.Unix(1000, 0), 2*time.Second, true, false); d != time.Second {
		t.Fatalf("the backed-off end: delay %s, want the first backoff", d)
	}
	if !p.sessionEnded(time.Hour) {
		t.Fatal("after an hour of service: not reopened at once")
	}
	if p.failures() != 0 {
		t.Errorf("failures %d after a stable run, want 0", p.failures())
	}
	if p.sessionEnded(time.Second) {
		t.Fatal("an end a second after that reopen: reopened at once")
	}
	p.reset()
	if !p.sessionEnded(time.Second) {
		t.Fatal("after a restart by the person: not reopened at once")
	}
}

// Starts that never become ready loop however far apart they fall (each
// waits out the startup timeout: a minute apart, five never fit in the
// window), and none of them is a stable run that resets the backoff; a
// start that did become ready ends the run of them.
func TestRestartPolicyNeverReady(t *testing.T) {
	p := testPolicy()
	now := time.Unix(1000, 0)
	var delays []time.Duration
	for i := range 3 {
		d, looping := p.crashed(now.Add(time.Duration(i)*time.Minute), time.Minute, false, true)
		if looping {
			t.Fatalf("looping after %d never-ready starts", i+1)
		}
		delays = append(delays, d)
	}
	if delays[2] <= delays[0] {
		t.Errorf("delays %v: a never-ready start of a minute reset the backoff", delays)
	}
	if _, looping := p.crashed(now.Add(3*time.Minute), time.Minute, false, true); !looping {
		t.Fatal("four (CrashLoopCount) never-ready starts in a row, a minute apart: not looping")
	}
	q := testPolicy()
	for i := range 3 {
		q.crashed(now.Add(time.Duration(i)*time.Minute), time.Minute, false, true)
	}
	q.crashed(now.Add(3*time.Minute), time.Minute, false, false) // was ready, then crashed
	if _, looping := q.crashed(now.Add(4*time.Minute), time.Minute, false, true); looping {
		t.Fatal("a start that became ready did not end the run of never-ready ones")
	}
}
