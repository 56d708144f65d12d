//go:build unix

// Unix only: these run the built mcptray and its daemon as daemonEnv
// (daemon_test.go) does, ending processes with signals and finding the
// daemon by its Unix socket; the Windows daemon's named pipe and Job
// Objects are tested in control and supervisor.

package cli

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// everythingOn runs server-everything's Streamable HTTP transport on port
// until the returned stop is called (or the test ends).
func everythingOn(t *testing.T, everything string, port int) (stop func()) {
	t.Helper()
	cmd := exec.Command("node", everything, "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
		}
	}
	t.Cleanup(stop)
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if strings.Contains(sc.Text(), fmt.Sprint(port)) {
			go func() {
				for sc.Scan() {
				}
			}()
			return stop
		}
	}
	t.Fatalf("server-everything (HTTP) ended before listening: %v", sc.Err())
	return stop
}

// A remote Streamable HTTP server restarted under a running session (its
// session gone): the first request after the restart fails, mcptray opens a
// new session at that answer instead of after failure_threshold probes
// (the probe interval here is a minute) and without a backoff, and later
// requests through `mcptray connect` and through the local HTTP endpoint
// are served; status counts the reconnection.
func TestRemoteSessionReopenedWhenTheServerRestarts(t *testing.T) {
	everything := testServers(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	stop := everythingOn(t, everything, port)

	d := newDaemonEnv(t)
	writeFile(t, d.cfg, fmt.Sprintf("[settings]\nprobe_interval = \"60s\"\n\n[servers.ev]\nurl = \"http://127.0.0.1:%d/mcp\"\n", port))
	daemon := d.startDaemon()
	before := d.waitStatus("ev", "ev ready", func(e statusEntry) bool { return e.State == "ready" })
	bridged := d.connectClient("ev", "bridged")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	byURL, err := mcp.NewClient(&mcp.Implementation{Name: "by-url"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: d.gatewayURL("ev")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer byURL.Close()
	for _, cs := range []*mcp.ClientSession{bridged, byURL} {
		if got, err := echo(t, cs, "before"); err != nil || !strings.Contains(got, "before") {
			t.Fatalf("echo before the restart = %q, %v", got, err)
		}
	}

	stop()
	everythingOn(t, everything, port)

	// The first request meets the ended session and fails saying so.
	if got, err := echo(t, bridged, "first"); err == nil {
		t.Logf("the first request after the restart was served (%q): the session was already reopened", got)
	} else {
		t.Logf("the first request after the restart: %v", err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for _, c := range []struct {
		name string
		cs   *mcp.ClientSession
	}{{"connect", bridged}, {"http", byURL}} {
		var got string
		var err error
		for time.Now().Before(deadline) {
			if got, err = echo(t, c.cs, "after"); err == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil || !strings.Contains(got, "after") {
			t.Fatalf("through %s, within 20s of the restart (probes every 60s): %q, %v", c.name, got, err)
		}
	}
	after := d.waitStatus("ev", "ev ready", func(e statusEntry) bool { return e.State == "ready" })
	// The new session was opened at the answer, not after a backoff: a
	// restarted server is not a crash.
	if log := daemon.log(); strings.Contains(log, "reconnecting in") {
		t.Errorf("the reconnection waited for a backoff:\n%s", log)
	}
	if after.Restarts == nil || before.Restarts == nil || *after.Restarts <= *before.Restarts {
		t.Errorf("restarts before %v, after %v: the reconnection is not counted", before.Restarts, after.Restarts)
	}
}
