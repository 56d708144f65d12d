package gui

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// quitGrace is how long Quit waits for the app's own work to finish (its
// trials stopped, the engine in this process stopping its servers, the
// goroutines following the daemon and the tray host).
const quitGrace = 30 * time.Second

// quitReplyGrace is the least time between Quit and the end of the
// process, for the answer to the tray host's click to go out.
const quitReplyGrace = 100 * time.Millisecond

// quit ends the app (UI thread; a second call does nothing). The tray is
// left alone from here on: the systray's bus connection closes as the app
// ends, and a change of the icon or the menu sent over a closed
// connection panics in the systray. With an ender (the app's own run), the
// work is stopped off the UI thread, which keeps serving it, and then the
// process ends: Fyne's own teardown after Quit races its function queue
// against its lifecycle queue (fyne v2.7.1 internal/driver/glfw/loop.go:
// the OnStopped event sent after the queue is drained hangs the app for
// good, or sent after it is closed panics with "send on closed channel").
// Preferences are written when they change, so none is lost.
func (c *controller) quit() {
	if c.quitting {
		return
	}
	c.quitting = true
	c.tray.stop()
	if c.ender == nil {
		c.app.Quit()
		return
	}
	trials := c.stopTrials() // its list is the UI thread's
	go func() {
		trials()
		c.ender()
	}()
}

// waitAtMost waits for wg, or d, whichever comes first, and says which
// work was left running.
func waitAtMost(w io.Writer, wg *sync.WaitGroup, d time.Duration, what string) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		fmt.Fprintf(w, "mcptray: %s did not finish within %s of Quit; quitting without it\n", what, d)
	}
}
