//go:build unix

package gui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"mcptray/supervisor"
)

// uiThread is a UI thread of the test's own for the controller's watch
// loop: updates queue up as fyne.Do queues them, and run one at a time,
// each taking at least cost (what a busy UI thread takes per update: a
// slow tray host, a loaded machine). read runs f between updates.
type uiThread struct {
	mu    sync.Mutex // held while an update runs, and by read
	queue chan func()
	done  chan struct{}
}

func newUIThread(t *testing.T, cost time.Duration) *uiThread {
	u := &uiThread{queue: make(chan func(), 100000), done: make(chan struct{})}
	go func() {
		defer close(u.done)
		for f := range u.queue {
			u.mu.Lock()
			f()
			time.Sleep(cost) // the update's own cost, not a wait for a state
			u.mu.Unlock()
		}
	}()
	t.Cleanup(func() { close(u.queue); <-u.done })
	return u
}

func (u *uiThread) do(f func()) { u.queue <- f }

func (u *uiThread) read(f func()) {
	u.mu.Lock()
	defer u.mu.Unlock()
	f()
}

// keepUpWindow is the window of an in-process engine on a servers.toml of
// demo servers (the real mcptray binary's), with the watch loop running on
// a UI thread whose updates cost cost each.
func keepUpWindow(t *testing.T, cost time.Duration, names ...string) (c *controller, u *uiThread, write func(...string)) {
	t.Helper()
	bin := filepath.Join(binaries(t), "mcptray")
	path := filepath.Join(t.TempDir(), "servers.toml")
	write = func(names ...string) {
		t.Helper()
		var b strings.Builder
		// Probes often: a stream of changes of figures only, as many
		// servers make.
		b.WriteString("[settings]\nprobe_interval = \"200ms\"\n\n")
		for _, n := range names {
			fmt.Fprintf(&b, "[servers.%s]\ncommand = %q\nargs = [\"serve-demo\"]\n\n", n, bin)
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(names...)
	l := localEngine(t, path)
	c = newTestController(t, l, path)
	u = newUIThread(t, cost)
	c.ui = u.do
	c.setUp()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.watch(ctx, 250*time.Millisecond); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return c, u, write
}

// engineState waits, on the engine's changes, until cond holds of its
// snapshot, and returns that snapshot.
func engineState(t *testing.T, c *controller, what string, cond func(supervisor.Snapshot) bool) supervisor.Snapshot {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		if s := c.eng.Snapshot(); cond(s) {
			return s
		}
		select {
		case <-c.eng.Watch():
		case <-deadline:
			var states []string
			for _, s := range c.eng.Snapshot().Servers {
				states = append(states, s.Name+": "+string(s.State)+" "+s.Reason)
			}
			t.Fatalf("the engine never got to %s: %v %+v", what, states, c.eng.Status())
		}
	}
}

// windowShows waits until the window shows what cond looks for, at most
// within: a state the engine has reached and keeps must be on screen by
// then.
func windowShows(t *testing.T, u *uiThread, within time.Duration, what string, cond func() bool) {
	t.Helper()
	start := time.Now()
	for {
		ok := false
		u.read(func() { ok = cond() })
		if ok {
			t.Logf("the window showed %s after %s", what, time.Since(start).Round(time.Millisecond))
			return
		}
		if time.Since(start) > within {
			t.Fatalf("the window did not show %s within %s of the engine", what, within)
		}
		time.Sleep(20 * time.Millisecond) // polling what is on screen
	}
}

// keepUpWithin is how soon after the engine the window must show a change:
// the refresh period, and room for a loaded machine.
const keepUpWithin = refreshPeriod + 2*time.Second

// TestWindowKeepsUp: after a kill -9 of the selected server, its details
// show the new process, the restart and how the old one ended within the
// refresh period; servers added to and removed from servers.toml appear
// and go from the list as soon; and all of it holds on a UI thread that
// takes 300 ms per update, where updates queued faster than it ran once
// made the window show old states for as long as the backlog took.
func TestWindowKeepsUp(t *testing.T) {
	for _, cost := range []time.Duration{0, 300 * time.Millisecond} {
		t.Run(fmt.Sprintf("update cost %s", cost), func(t *testing.T) {
			c, u, write := keepUpWindow(t, cost, "alpha", "beta")
			s := engineState(t, c, "both up", func(s supervisor.Snapshot) bool {
				return len(s.Servers) == 2 && s.Servers[0].PID != 0 && s.Servers[1].PID != 0
			})
			pid := s.Server("alpha").PID
			u.read(func() { c.main.selectServer("alpha") })
			windowShows(t, u, keepUpWithin, "alpha's process", func() bool {
				return strings.HasPrefix(c.main.fields["Process"].Text, fmt.Sprintf("pid %d, up ", pid))
			})
			// Figures change all the while (probes every 200 ms): the
			// window runs a while as it does all day.
			time.Sleep(5 * time.Second) // a span of ordinary running, not a wait for a state

			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			s = engineState(t, c, "alpha restarted", func(s supervisor.Snapshot) bool {
				a := s.Server("alpha")
				return a.PID != 0 && a.PID != pid && a.Restarts == 1
			})
			next := s.Server("alpha").PID
			windowShows(t, u, keepUpWithin, "alpha's new process, the restart and the SIGKILL", func() bool {
				f := c.main.fields
				return strings.HasPrefix(f["Process"].Text, fmt.Sprintf("pid %d, up ", next)) &&
					f["Restarts"].Text == "1" && strings.Contains(f["Last exit"].Text, "SIGKILL")
			})

			write("alpha", "gamma")
			engineState(t, c, "gamma in and beta out", func(s supervisor.Snapshot) bool {
				return s.Server("gamma") != nil && s.Server("beta") == nil
			})
			windowShows(t, u, keepUpWithin, "gamma listed and beta gone", func() bool {
				var listed []string
				for r := range c.main.servers.shown {
					listed = append(listed, c.main.servers.name(r))
				}
				return slices.Contains(listed, "gamma") && !slices.Contains(listed, "beta")
			})
		})
	}
}
