package gui

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"sync"
	"time"
)

// quitGrace is how long Quit may take before the app ends anyway: the
// desktop loop returning, then the app's own goroutines finishing.
const quitGrace = 20 * time.Second

// quitWatchdog ends the process when the app has not ended within grace
// of Quit: a quit that hangs (in the toolkit's tray teardown, a D-Bus
// call with no answer) would leave a process with no tray and no window
// that the person cannot reach. It says so first, with every goroutine's
// stack, so the hang can be reported.
func quitWatchdog(w io.Writer, grace time.Duration) {
	time.Sleep(grace)
	fmt.Fprintf(w, "mcptray: the app did not end within %s of Quit; ending it now. What it was doing:\n", grace)
	_ = pprof.Lookup("goroutine").WriteTo(w, 2)
	os.Exit(0)
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
