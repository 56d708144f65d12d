//go:build unix

package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInterruptedCheckSaysSo: a check stopped by Ctrl-C while a server is
// still starting reports that server interrupted, with a fix, not failed
// with no reason; a server already ready stays ready; nothing of the
// servers is left. Following the fix (running the check to its end) finds
// the slow server ready.
func TestInterruptedCheckSaysSo(t *testing.T) {
	bin := mcptrayBinary(t)
	dir := t.TempDir()
	marker := fmt.Sprintf("slow-start-%d", time.Now().UnixNano())
	cfg := filepath.Join(dir, "servers.toml")
	// $0 is the binary; the marker rides along as $1, which nobody reads.
	writeFile(t, cfg, fmt.Sprintf("[servers.demo]\ncommand = %q\nargs = [\"serve-demo\"]\n\n"+
		"[servers.slow]\ncommand = \"sh\"\nargs = [\"-c\", %q, %q, %q]\n", bin, `sleep 3; exec "$0" serve-demo`, bin, marker))
	env := append(os.Environ(), homeEnv(dir)...)
	env = append(env, "XDG_RUNTIME_DIR="+filepath.Join(dir, "run"), "XDG_CACHE_HOME="+filepath.Join(dir, "cache"))
	os.Mkdir(filepath.Join(dir, "run"), 0o700)

	check := func(interrupt bool) ([]serverReport, int, string) {
		for try := 0; ; try++ {
			cmd := exec.Command(bin, "check", "--json", "--config", cfg)
			cmd.Env = env
			var out, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if interrupt {
				// Once the slow server runs, the check is past its start;
				// a second later the demo is ready and the slow server
				// still sleeps (3 s).
				deadline := time.Now().Add(20 * time.Second)
				for len(pidsWith(marker)) == 0 && time.Now().Before(deadline) {
					time.Sleep(10 * time.Millisecond)
				}
				time.Sleep(time.Second)
				cmd.Process.Signal(os.Interrupt)
			}
			err := cmd.Wait()
			if ee, ok := err.(*exec.ExitError); ok && ee.Sys().(syscall.WaitStatus).Signaled() && try < 3 {
				continue // the signal came before the check took it over: its default ended it
			}
			code := cmd.ProcessState.ExitCode()
			var reps []serverReport
			if err := json.Unmarshal([]byte(out.String()), &reps); err != nil {
				t.Fatalf("check --json (exit %d): %v\n%s%s", code, err, out.String(), stderr.String())
			}
			return reps, code, out.String() + stderr.String()
		}
	}
	byName := func(reps []serverReport) map[string]serverReport {
		m := map[string]serverReport{}
		for _, r := range reps {
			m[r.Name] = r
		}
		return m
	}

	reps, code, out := check(true)
	got := byName(reps)
	if code != 1 {
		t.Errorf("an interrupted check exits %d, want 1\n%s", code, out)
	}
	if d := got["demo"]; d.Status != "ready" {
		t.Errorf("demo, ready before the interrupt: status %q\n%s", d.Status, out)
	}
	s := got["slow"]
	if s.Status != "interrupted" || s.Level != "warn" || len(s.Diagnostics) == 0 || s.Diagnostics[0].Code != "interrupted" ||
		!strings.Contains(s.Diagnostics[0].Message, "interrupt") || !strings.Contains(s.Diagnostics[0].Message, "while slow was starting") ||
		!strings.Contains(s.Diagnostics[0].Fix, "Run the check again and let it finish") {
		t.Fatalf("slow, still starting at the interrupt: %+v\n%s", s, out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(pidsWith(marker)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("processes of the slow server left after the interrupted check: %v", pidsWith(marker))
		}
		time.Sleep(20 * time.Millisecond)
	}

	// The fix, followed: the check run to its end.
	reps, code, out = check(false)
	if s := byName(reps)["slow"]; code != 0 || s.Status != "ready" {
		t.Errorf("the check run to its end: exit %d, slow %q %+v\n%s", code, s.Status, s.Diagnostics, out)
	}
}
