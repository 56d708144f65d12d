package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestEventually(t *testing.T) {
	var n atomic.Int32
	Eventually(t, 10*time.Second, func() bool { return n.Add(1) >= 3 }, "never")
	if n.Load() != 3 {
		t.Errorf("cond polled %d times, want 3", n.Load())
	}
}

// TestNeedFailsInCI runs a test that needs what is missing, with CI=true and
// without: it fails in CI and is skipped elsewhere.
func TestNeedFailsInCI(t *testing.T) {
	if os.Getenv("TESTENV_HELPER") == "1" {
		Need(t, "a thing this machine lacks")
		return
	}
	for _, ci := range []string{"true", ""} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestNeedFailsInCI$", "-test.v")
		cmd.Env = append(os.Environ(), "TESTENV_HELPER=1", "CI="+ci)
		out, err := cmd.CombinedOutput()
		failed := err != nil
		if failed != (ci == "true") || !strings.Contains(string(out), "needs a thing this machine lacks") {
			t.Errorf("CI=%q: failed %v:\n%s", ci, failed, out)
		}
		if ci == "" && !strings.Contains(string(out), "--- SKIP") {
			t.Errorf("CI unset: not skipped:\n%s", out)
		}
	}
}

// TestEventuallyMessageSeesTheEnd: a Lazy argument is read when
// the wait fails, not when it starts.
func TestEventuallyMessageSeesTheEnd(t *testing.T) {
	if os.Getenv("TESTENV_HELPER") == "eventually" {
		seen := "nothing yet"
		n := 0
		Eventually(t, 100*time.Millisecond, func() bool { n++; seen = fmt.Sprintf("poll %d", n); return false },
			"last seen: %s", Lazy(func() string { return seen }))
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestEventuallyMessageSeesTheEnd$")
	cmd.Env = append(os.Environ(), "TESTENV_HELPER=eventually")
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "last seen: poll ") || strings.Contains(string(out), "nothing yet") {
		t.Errorf("the message did not say what the last poll saw:\n%s", out)
	}
}
