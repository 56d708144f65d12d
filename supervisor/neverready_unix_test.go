//go:build unix

package supervisor

import (
	"strings"
	"testing"
	"time"

	"mcptray/registry"
)

// TestNeverReadyCrashLoops: a server that prints two lines and then never
// answers the handshake is given up on after its startup timeout each
// time, and its repeats make it crash-looping, although a startup timeout
// longer than the crash-loop window holds them all out of it.
func TestNeverReadyCrashLoops(t *testing.T) {
	opts := testOptions(t)
	opts.Checker = mcpChecker{}
	opts.StartupTimeout = 300 * time.Millisecond
	opts.StableRun = 100 * time.Millisecond
	opts.BackoffBase = 10 * time.Millisecond
	opts.BackoffMax = 20 * time.Millisecond
	opts.CrashLoopCount = 3
	opts.CrashLoopWindow = 250 * time.Millisecond // shorter than one start
	srv := &registry.Server{Name: "mute", Command: "sh", Args: []string{"-c", "echo one; echo two; exec sleep 100000"}, Autostart: true}
	s := New([]*registry.Server{srv}, opts)
	runSup(t, s)
	st := waitState(t, s, "mute", "crash-looping", inState(StateCrashLooping))
	if !strings.Contains(st.Reason, "never became ready") || !strings.Contains(st.Reason, "gave up on the handshake") {
		t.Errorf("reason %q", st.Reason)
	}
	if st.Level != LevelError {
		t.Errorf("level %s, want error", st.Level)
	}
	if st.Diagnosis == nil || st.Diagnosis.Code == "" {
		t.Errorf("diagnosis %+v", st.Diagnosis)
	}
}
