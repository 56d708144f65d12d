// Package testenv is what tests share about their environment: a test that
// needs something the machine lacks (a real server, a client, a display
// tool) fails under CI=true and is skipped elsewhere, and a test waits for a
// condition by polling it against a deadline, never by sleeping for a guess.
package testenv

import (
	"fmt"
	"os"
	"testing"
	"time"
)

// InCI reports whether the tests run in CI (CI=true), where every
// dependency must be there.
func InCI() bool { return os.Getenv("CI") == "true" }

// Need stops the test because what it needs is missing: under CI=true it
// fails (a CI without the dependency would pass without testing anything),
// elsewhere it is skipped.
func Need(t testing.TB, what string) {
	t.Helper()
	if InCI() {
		t.Fatalf("this test needs %s (CI=true: a missing dependency is a failure, not a skip)", what)
	}
	t.Skipf("this test needs %s", what)
}

// Eventually polls cond every 20ms (at first; the pause grows to 200ms)
// until it holds, and fails the test with the message if it still does not
// after timeout. cond is the event the test waits for; what it reads must
// only ever move towards true, or latch, so that a busy machine makes the
// wait longer, never wrong.
func Eventually(t testing.TB, timeout time.Duration, cond func() bool, format string, args ...any) {
	t.Helper()
	if !Wait(timeout, cond) {
		t.Fatalf("after %s: %s", timeout, fmt.Sprintf(format, args...))
	}
}

// Wait is Eventually for a test that goes on when cond does not come to
// hold: it reports whether cond held within timeout.
func Wait(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	pause := 20 * time.Millisecond
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pause)
		pause = min(2*pause, 200*time.Millisecond)
	}
	return true
}

// Lazy is a message argument that is read as the message is made: given to
// Eventually, it says what the condition saw last, not what there was when
// the wait began.
type Lazy func() string

func (f Lazy) String() string { return f() }
