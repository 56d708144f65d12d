package gui

import (
	"context"
	"errors"
	"fmt"
	"time"

	"fyne.io/fyne/v2"

	"mcptray/control"
	"mcptray/gateway"
)

// gatewaySource is what the app reads of the daemon's gateway: the client
// sessions, usage and protocol trace of each server (a *control.Client;
// an in-process engine runs no gateway).
type gatewaySource interface {
	FetchInfo(ctx context.Context) (control.Info, error)
	Gateway(ctx context.Context) (*control.GatewayInfo, error)
	Trace(ctx context.Context, name string, since uint64) (*control.TracePage, error)
	FollowTrace(ctx context.Context, name string, since uint64, fn func(gateway.Frame)) error
	ProfileTrace(ctx context.Context, name string, since uint64) (*control.TracePage, error)
	FollowProfileTrace(ctx context.Context, name string, since uint64, fn func(gateway.Frame)) error
}

// gatewayPoll is how often the app asks the daemon for its client sessions.
const gatewayPoll = 2 * time.Second

// daemonRestartEvery is the least time between two daemons the app starts
// after losing one, so that a daemon that cannot start is not started in
// a loop.
const daemonRestartEvery = 10 * time.Second

// line is the window's line about where the servers run ("" for the
// in-process engine, whose banner says why).
func (h engineHost) line() string {
	if !h.attached() {
		return ""
	}
	return fmt.Sprintf("Servers run in the background service (daemon pid %d): they keep serving your AI clients when this window and the tray quit.", h.daemonPID)
}

// tooltip is the tray's tooltip with where the servers run.
func (h engineHost) tooltip(tip string) string {
	if !h.attached() {
		return tip
	}
	return tip + fmt.Sprintf("\nServers run in the background service (daemon pid %d)", h.daemonPID)
}

// warning adds to the engine's warning that the servers run in this app,
// and why: an amber tray until the app runs attached.
func (h engineHost) warning(w string, level health) (string, health) {
	if h.fallback == "" {
		return w, level
	}
	line := "The background service could not be started (" + h.fallback + "): the servers run in this app and stop when it quits."
	if w != "" {
		line += "\n" + w
	}
	return line, max(level, healthWarn)
}

// clientCounts is each server's number of client sessions (UI thread).
func (c *controller) clientCounts() map[string]int {
	out := make(map[string]int, len(c.gw))
	for name, s := range c.gw {
		out[name] = len(s.Sessions)
	}
	return out
}

// stopAllAction is the tray's "Stop all servers and quit" while attached
// to a daemon: the daemon stops every server and exits, then the app
// quits. Nil for an in-process engine, whose Quit stops them.
func (c *controller) stopAllAction() func() {
	cl, ok := c.eng.(*control.Client)
	if !ok || !c.host.attached() {
		return nil
	}
	return func() {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
			defer cancel()
			c.stopping.Store(true)
			if err := cl.Shutdown(ctx); err != nil {
				c.stopping.Store(false)
				//lint:ignore ST1005 a sentence the error dialog shows as it is
				fyne.Do(func() { c.showError(fmt.Errorf("Could not stop the background service: %w", err)) })
				return
			}
			fyne.Do(c.quit)
		}()
	}
}

// followGateway polls the daemon's gateway every interval until ctx ends,
// and starts a daemon again when the one the app is attached to is gone:
// the tray's servers are the ones the AI clients reach, always.
func (c *controller) followGateway(ctx context.Context, every time.Duration) {
	src, ok := c.eng.(gatewaySource)
	if !ok {
		return
	}
	p := &gatewayPoller{src: src, start: c.host.start, stopping: c.stopping.Load}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		gi, pid := p.poll(ctx)
		fyne.Do(func() { c.setGateway(gi, pid) })
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-c.gwWake:
		}
	}
}

// gatewayPoller asks the daemon for its gateway (any goroutine but one at
// a time).
type gatewayPoller struct {
	src       gatewaySource
	start     func(context.Context) (*control.Client, error)
	lastStart time.Time // when it last started a daemon
	// stopping says the daemon is going away on purpose (nil: never).
	stopping func() bool
}

// poll returns the gateway and the pid of the daemon answering (nil and 0
// when none does). A daemon gone is started again, at most every
// daemonRestartEvery.
func (p *gatewayPoller) poll(ctx context.Context) (*control.GatewayInfo, int) {
	gi, err := p.gateway(ctx)
	if errors.Is(err, control.ErrNoDaemon) && p.start != nil && time.Since(p.lastStart) >= daemonRestartEvery &&
		(p.stopping == nil || !p.stopping()) {
		p.lastStart = time.Now()
		if _, serr := p.start(ctx); serr == nil {
			gi, err = p.gateway(ctx)
		}
	}
	if err != nil {
		return nil, 0
	}
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	// Whose servers these are: another daemon than the one first
	// attached may answer (started by a bridge after a crash).
	info, err := p.src.FetchInfo(qctx)
	if err != nil {
		return gi, 0
	}
	return gi, info.PID
}

func (p *gatewayPoller) gateway(ctx context.Context) (*control.GatewayInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return p.src.Gateway(ctx)
}

// setGateway shows a polled gateway (UI thread): the tray's client counts,
// the window's Clients tab.
func (c *controller) setGateway(gi *control.GatewayInfo, pid int) {
	if pid > 0 {
		if c.lost == nil && c.host.attached() && pid != c.host.daemonPID {
			// Another daemon answers before the change stream's end was
			// seen: the one attached went away all the same.
			c.lost = &daemonLoss{pid: c.host.daemonPID, at: c.now(), levels: levels(c.snap)}
		}
		c.host.daemonPID = pid
		if c.lost != nil {
			c.lost.answered = pid
		}
	}
	// Without an answer no count is shown: a stale one would say clients
	// are connected that may be gone.
	c.gw, c.gwProfiles = nil, nil
	if gi != nil {
		c.gwProfiles = gi.Profiles
		c.gw = make(map[string]control.GatewayServer, len(gi.Servers))
		for _, s := range gi.Servers {
			c.gw[s.Name] = s
		}
	}
	// The engine's snapshot, not the one last shown: that may be the
	// restarting view of a daemon gone (apply makes it again if so).
	c.apply(c.engineSnap)
}
