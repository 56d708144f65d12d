package supervisor

import (
	"context"
	"fmt"
	"time"
)

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
