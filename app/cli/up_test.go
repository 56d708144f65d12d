//go:build unix

// Unix only: the servers are sh scripts that trap SIGTERM, and mcptray up
// is ended with SIGINT; on Windows supervisor's tests stop servers.

package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestUpEndToEnd builds mcptray, runs `mcptray up --json` on a config with a
// good server, a crashing one, a missing command and a stubborn one (ignores
// SIGTERM and stdin, has a grandchild), sends SIGINT and checks the output,
// the exit code and that no process survives.
func TestUpEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "mcptray")
	build := exec.Command("go", "build", "-tags", "nogui", "-o", bin, "mcptray")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		t.Fatalf("go build: %v", err)
	}
	grandPid := filepath.Join(dir, "grand.pid")
	cfg := filepath.Join(dir, "servers.toml")
	config := fmt.Sprintf(`
[servers.demo]
command = %q
args = ["serve-demo"]

[servers.crashy]
command = "sh"
args = ["-c", "echo 'Error: cannot reach the database' >&2; exit 1"]

[servers.missing]
command = "no-such-mcp-server-xyz"

[servers.stubborn]
command = "sh"
args = ["-c", "trap '' TERM; sh -c 'trap \"\" TERM; echo $$ > %s; while :; do sleep 1; done' & while :; do sleep 1; done"]
`, bin, grandPid)
	if err := os.WriteFile(cfg, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(bin, "up", "--json", "--config", cfg)
	cmd.Env = append(append(os.Environ(), "XDG_CACHE_HOME="+filepath.Join(dir, "cache")), homeEnv(dir)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })

	type line struct {
		Time, Server, State, Reason, Code string
		PID, Restarts                     int
	}
	lines := make(chan line, 100)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var l line
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Errorf("not JSON: %q", sc.Text())
				continue
			}
			if _, err := time.Parse(time.RFC3339, l.Time); err != nil {
				t.Errorf("time %q: %v", l.Time, err)
			}
			lines <- l
		}
	}()

	pids := map[int]bool{}
	seen := map[string]bool{}
	// The health check may be plugged in (demo: ready; stubborn: starting,
	// since it never answers) or not (running).
	want := map[string][]string{
		"demo":     {"running", "ready"},
		"crashy":   {"backoff"},
		"missing":  {"failed"},
		"stubborn": {"running", "starting"},
	}
	reached := func() bool {
		for srv, states := range want {
			ok := false
			for _, st := range states {
				ok = ok || seen[srv+"/"+st]
			}
			if !ok {
				return false
			}
		}
		return true
	}
	timeout := time.After(30 * time.Second)
	for !reached() {
		select {
		case l := <-lines:
			seen[l.Server+"/"+l.State] = true
			if l.PID != 0 {
				pids[l.PID] = true
			}
			if l.Server == "missing" && l.State == "failed" && l.Code != "command-not-found" {
				t.Errorf("missing: code %q", l.Code)
			}
			if l.Server == "crashy" && l.State == "backoff" && !strings.Contains(l.Reason, "exited with code 1") {
				t.Errorf("crashy: reason %q", l.Reason)
			}
		case <-timeout:
			t.Fatalf("saw %v, want %v; stderr: %s", seen, want, stderr.String())
		}
	}
	grand := readPidFile(t, grandPid)
	pids[grand] = true

	cmd.Process.Signal(syscall.SIGINT)
	final := map[string]string{}
	for l := range lines {
		final[l.Server] = l.State
	}
	err = cmd.Wait()
	if err != nil {
		t.Fatalf("mcptray up: %v; stderr: %s", err, stderr.String())
	}
	for _, name := range []string{"demo", "crashy", "stubborn"} {
		if final[name] != "stopped" {
			t.Errorf("%s ended %q, want stopped", name, final[name])
		}
	}
	for pid := range pids {
		deadline := time.Now().Add(10 * time.Second)
		for processAlive(pid) {
			if time.Now().After(deadline) {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Errorf("pid %d survived mcptray up", pid)
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// lockedBuffer is a strings.Builder safe to read while a process writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func readPidFile(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// processAlive reports whether pid runs (a zombie waiting for init to reap
// it does not count).
func processAlive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !os.IsNotExist(err)
	}
	i := strings.LastIndexByte(string(b), ')')
	return !(i >= 0 && i+2 < len(b) && b[i+2] == 'Z')
}
