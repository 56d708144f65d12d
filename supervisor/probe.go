package supervisor

import (
	"context"
	"fmt"
	"slices"
	"time"

	"mcptray/healthcheck"
)

const probeWindow = 100

// probeTracker keeps the liveness statistics of one server. It is owned by
// the unit's goroutine; snapshots get fresh copies.
type probeTracker struct {
	stats  healthcheck.ProbeStats
	recent []time.Duration // successful latencies, oldest first, at most probeWindow
}

func (p *probeTracker) record(at time.Time, d time.Duration, err error) healthcheck.ProbeStats {
	p.stats.Count++
	p.stats.LastAt = at
	if err != nil {
		p.stats.ConsecutiveFailures++
		p.stats.LastError = err.Error()
		return p.snapshot()
	}
	p.stats.ConsecutiveFailures = 0
	p.stats.LastError = ""
	p.stats.Last = d
	if len(p.recent) == probeWindow {
		p.recent = append(p.recent[:0], p.recent[1:]...)
	}
	p.recent = append(p.recent, d)
	sorted := slices.Clone(p.recent)
	slices.Sort(sorted)
	p.stats.Min = sorted[0]
	p.stats.Median = sorted[len(sorted)/2]
	p.stats.P95 = sorted[min(len(sorted)-1, (len(sorted)*95+99)/100-1)]
	return p.snapshot()
}

func (p *probeTracker) snapshot() healthcheck.ProbeStats {
	s := p.stats
	s.Recent = slices.Clone(p.recent)
	return s
}

var (
	// Both wrap context.DeadlineExceeded so the health check, which sees
	// only context.Cause, reports them as the timeouts they are.
	errProbeTimeout   = fmt.Errorf("probe timed out: %w", context.DeadlineExceeded)
	errStartupTimeout = fmt.Errorf("startup timed out: %w", context.DeadlineExceeded)
)

// clockTimeout is context.WithTimeout on the injectable clock; the context's
// cause is cause when the time ran out. cancel waits for the timer goroutine.
func clockTimeout(parent context.Context, c Clock, d time.Duration, cause error) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	t := c.NewTimer(d)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer t.Stop()
		select {
		case <-t.C():
			cancel(cause)
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		cancel(context.Canceled)
		<-done
	}
}
