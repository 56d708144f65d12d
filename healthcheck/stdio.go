package healthcheck

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"mcptray/internal/clock"
	"mcptray/registry"
)

var errProcessExited = errors.New("the server process exited")

// lateDiscoverWait bounds the wait, after a refused initialize, for the
// late reply to a server/discover mcptray gave up on: a server slow to
// start answers both at once, in either order.
const lateDiscoverWait = time.Second

// connectStdio performs the handshake over a stdio server's pipes.
//
// Who ended a failed handshake decides its diagnosis. If the server's side
// ended first (stdout closed, or the process exited), it is an exit: during
// server/discover, or during the handshake. If the caller ended it first (a
// deadline, a cancel with a cause), it is a timeout or the caller's cause,
// whatever the process does after that (most servers exit on EOF:
// evidence, not the cause).
//
// With legacyFirst it offers initialize first; a server that answers it
// with an error is then asked server/discover on the same pipes.
func connectStdio(ctx context.Context, t Target, o Options, legacyFirst bool) (*Session, error) {
	if t.Stdin == nil || t.Stdout == nil {
		return nil, &Diagnosis{Code: CodeInvalidConfig, Message: fmt.Sprintf("Server %q is a stdio server but no pipes were handed over.", t.Server.Name)}
	}
	c := newStdioConn(ctx, t.Stdin, t.Stdout, o)
	cancelSent := make(chan struct{}, 1)
	c.cancelSent = cancelSent
	hctx, cancel := context.WithCancelCause(ctx)
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		if t.Exited == nil {
			return
		}
		select {
		case <-t.Exited:
		case <-hctx.Done():
			return
		}
		// A process gone while stdout stays open (a child holds it) would
		// leave the handshake waiting: end it, after letting the reader
		// drain what the process wrote before it died.
		c.awaitStdoutEnd(exitGrace)
		c.serverEnded()
		cancel(errProcessExited)
	}()
	start := o.Clock.Now()
	client := newClient(o)
	hint := t.EraHint
	if legacyFirst {
		hint = EraLegacy
	}
	cs, err := client.Connect(hctx, stdioTransport{c}, sessionOptions(hint))
	refused := "" // how the server refused initialize, tried first
	slowStart := false
	if werr, ok := refusedInitialize(err); ok && !exitedNow(t.Exited) && hctx.Err() == nil {
		switch {
		case legacyFirst:
			refused = refusal(werr)
		case c.answeredLate(hctx, lateDiscoverWait):
			// server/discover went unanswered while the server started, so
			// initialize followed; the server then answered both, and
			// refused initialize after its server/discover. It speaks
			// 2026-07-28: ask again, now that it runs.
			slowStart = true
		}
		if refused != "" || slowStart {
			c.reopen()
			cs, err = client.Connect(hctx, stdioTransport{c}, sessionOptions(EraModern))
		}
	}
	latency := o.Clock.Now().Sub(start)
	cancel(nil)
	<-watchDone
	if err != nil {
		// Decide before closing the pipes: after that, an exit is ours.
		if exitedNow(t.Exited) {
			c.awaitStdoutEnd(exitGrace)
			c.serverEnded()
		}
		diag := stdioFailure(ctx, err, c, latency)
		c.shutdown()
		return nil, diag
	}
	res := cs.InitializeResult()
	s := &Session{opts: o, transport: registry.TransportStdio, cs: cs, client: client, wire: c, cancelSent: cancelSent}
	s.fillHandshake(res, latency)
	c.mu.Lock()
	caps, outcome := c.capabilities, c.outcome
	c.mu.Unlock()
	if len(caps) > 0 {
		s.report.Capabilities = slices.Clone(caps)
	}
	switch {
	case refused != "" && s.report.Era == EraModern:
		s.report.EraSource = initializeRefusedSource(refused)
	case slowStart && s.report.Era == EraModern:
		s.report.EraSource = fmt.Sprintf("server/discover answered late (the server took over %s to start), and initialize refused after it; server/discover asked again", o.DiscoverTimeout)
	case legacyFirst && s.report.Era == EraLegacy:
		s.report.EraSource = legacyFirstSource
	case t.EraHint == EraLegacy:
		s.report.EraSource = "remembered from an earlier start; initialize"
	case t.EraHint == EraModern && s.report.Era == EraModern:
		s.report.EraSource = "remembered from an earlier start; server/discover answered"
	case s.report.Era == EraModern:
		s.report.EraSource = "server/discover answered"
	case outcome == discoverUnanswered:
		s.report.EraSource = fmt.Sprintf("server/discover unanswered within %s; initialize", o.DiscoverTimeout)
	case outcome == discoverError:
		s.report.EraSource = "server/discover refused; initialize"
	default:
		s.report.EraSource = "server/discover offered no modern version in common; initialize"
	}
	o.Logger.Debug("handshake done", "server", t.Server.Name, "era", s.report.Era, "version", s.report.ProtocolVersion, "how", s.report.EraSource)
	return s, nil
}

// exitedNow reports whether the process has exited (exited closed).
func exitedNow(exited <-chan struct{}) bool {
	if exited == nil {
		return false
	}
	select {
	case <-exited:
		return true
	default:
		return false
	}
}

// awaitStdoutEnd waits, at most grace on the connection's clock, for the
// read loop to reach the end of stdout, so what a dead process wrote is
// read before it is judged.
func (c *stdioConn) awaitStdoutEnd(grace time.Duration) {
	select {
	case <-c.done:
		return
	default:
	}
	stop := make(chan struct{})
	go func() {
		select {
		case <-c.done:
		case <-c.closed:
		}
		close(stop)
	}()
	clock.Sleep(c.clock, grace, stop)
}

func stdioFailure(ctx context.Context, err error, c *stdioConn, latency time.Duration) error {
	st := c.stats()
	end := c.endState()
	switch {
	case end.diedInDiscover:
		return exitedDuringHandshake(st, true)
	case end.ended:
		return exitedDuringHandshake(st, false)
	case timedOut(ctx):
		return handshakeTimeout(latency, st)
	case ctx.Err() != nil:
		return fmt.Errorf("connecting: %w", context.Cause(ctx))
	}
	return handshakeError(err, end.offered, end.answered)
}
