package supervisor

import "time"

// restartPolicy decides when a server that went down is started again:
// the backoff, which grows with consecutive failures and is reset by a run
// that lasted StableRun, and the crash loop, CrashLoopCount crashes within
// CrashLoopWindow, after which the server is not restarted until started
// again. A start that never became ready (no handshake within the startup
// timeout) is no run at all: it never resets the backoff, and loopCount of
// them in a row make the server crash-looping however long each one took
// (a startup timeout of a minute would otherwise keep every such crash
// out of the window, and the server "starting" for good). It is pure: times come in, decisions come out (no clock, no
// process), so every rule is tested on its own.
type restartPolicy struct {
	backoff    func(attempt int) time.Duration // the delay before the attempt-th retry
	stableRun  time.Duration
	loopCount  int
	loopWindow time.Duration

	crashes []time.Time // within the crash-loop window
	attempt int         // consecutive failed starts, for the backoff
	// neverReady counts the consecutive starts that ended without ever
	// becoming ready.
	neverReady int
	reopened   bool // a session ended and was reopened at once since the last stable run
}

func newRestartPolicy(o *Options) restartPolicy {
	return restartPolicy{backoff: o.backoff, stableRun: o.StableRun, loopCount: o.CrashLoopCount, loopWindow: o.CrashLoopWindow}
}

// reset forgets the history: a person started or restarted the server, or
// its entry changed.
func (p *restartPolicy) reset() {
	p.crashes, p.attempt, p.reopened, p.neverReady = nil, 0, false, 0
}

// sessionEnded decides whether a remote server's session that the server
// ended after serving for uptime is opened again at once: yes after a
// stable run, and once after a shorter one (a server restarted soon after
// the session began); a second end within the stable run is backed off
// like a crash (a server that ends every session it opens).
func (p *restartPolicy) sessionEnded(uptime time.Duration) (now bool) {
	if uptime >= p.stableRun {
		p.attempt, p.reopened = 0, false
	}
	if p.reopened {
		return false
	}
	p.reopened = true
	return true
}

// crashed records a crash at now of a run that lasted uptime (neverReady:
// a start that never became ready), and returns the delay before the next
// start, or looping when the server crashed too often to go on. Crashes
// of a remote server's connection count for the backoff only: a server
// down for a while is retried for good.
func (p *restartPolicy) crashed(now time.Time, uptime time.Duration, remote, neverReady bool) (delay time.Duration, looping bool) {
	if neverReady {
		p.neverReady++
	} else {
		p.neverReady = 0
		if uptime >= p.stableRun {
			p.attempt, p.reopened = 0, false
		}
	}
	p.attempt++
	if !remote {
		if p.neverReady >= p.loopCount {
			return 0, true
		}
		kept := p.crashes[:0]
		for _, t := range p.crashes {
			if now.Sub(t) < p.loopWindow {
				kept = append(kept, t)
			}
		}
		p.crashes = append(kept, now)
		if len(p.crashes) >= p.loopCount {
			return 0, true
		}
	}
	return p.backoff(p.attempt), false
}

// transient records a start that failed for want of resources (not the
// server's fault: no crash counted, never given up on) and returns the
// delay before the next try.
func (p *restartPolicy) transient() time.Duration {
	p.attempt++
	return p.backoff(p.attempt)
}

// recent counts the crashes within the crash-loop window before now.
func (p *restartPolicy) recent(now time.Time) int {
	n := 0
	for _, t := range p.crashes {
		if now.Sub(t) < p.loopWindow {
			n++
		}
	}
	return n
}

// failures is the number of consecutive failed starts.
func (p *restartPolicy) failures() int { return p.attempt }
