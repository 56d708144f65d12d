package gui

import (
	"fmt"
	"time"

	"mcptray/app"
	"mcptray/control"
	"mcptray/supervisor"
)

// daemonLoss is the daemon this app is attached to gone, from when its
// change stream broke until a daemon answers again and the app knows its
// pid (UI thread).
type daemonLoss struct {
	pid int       // the daemon that went away
	at  time.Time // when the app saw it go
	// answered is the pid of the daemon a gateway poll reached since (0
	// before one did).
	answered int
	// levels are the servers' levels as the old daemon last showed them:
	// what the new daemon's first news of a server is compared with.
	levels map[string]supervisor.Level
}

// restartingLabel is the tray's counts line while the daemon is away.
const restartingLabel = "Background service restarting…"

// restartPatience is how long the app says "restarting" before it says
// no new daemon answers: a daemon it starts gets daemonStartWait.
const restartPatience = daemonStartWait + 2*gatewayPoll

// restartQuiet is how long after a restart the servers' news that only
// repeats what the old daemon showed is not notified again: the new
// daemon starts every server anew, and a server that failed before fails
// again, which the one notification of the restart covers.
const restartQuiet = 2 * time.Minute

// followDaemon notes the daemon going away and coming back (UI thread),
// and returns what to show of snap: while the daemon is away its servers
// are not running (they ended with it, and the next daemon starts them
// again), so they show as starting, not as the dead daemon last said.
func (c *controller) followDaemon(snap supervisor.Snapshot, st control.Status) supervisor.Snapshot {
	if !c.host.attached() {
		return snap
	}
	if st.Unreachable != nil {
		if c.lost == nil {
			c.lost = &daemonLoss{pid: c.host.daemonPID, at: c.now(), levels: levels(c.snap)}
			// The new daemon's first news can come before the app
			// knows it is a new daemon: held from now, as after.
			c.notify.quiet(c.lost.levels, c.now().Add(restartQuiet))
			c.wakeGateway() // a new daemon now, not at the next poll
		}
		return restartingSnapshot(snap, c.lost.at)
	}
	if c.lost == nil {
		return snap
	}
	switch c.lost.answered {
	case 0:
		// Answering again: a new daemon, or the same one, as the
		// gateway poll will tell.
		c.wakeGateway()
		return snap
	case c.lost.pid:
		c.lost = nil // the same daemon: it was not restarted, its news is news
		c.notify.quiet(nil, time.Time{})
		return snap
	}
	lost := c.lost
	c.lost = nil
	c.notify.serviceRestarted(restartedWords(lost.pid, c.host.daemonPID, c.daemonStopWords(lost.pid)), lost.levels, c.now().Add(restartQuiet))
	return snap
}

// restartWarning is the line above everything while the daemon is away:
// restarting, or, past restartPatience, that none answers yet.
func (c *controller) restartWarning() (string, health) {
	if c.lost == nil {
		return "", healthIdle
	}
	if c.now().Sub(c.lost.at) < restartPatience {
		return fmt.Sprintf("Background service restarting: daemon pid %d ended; its servers start again in the new one", c.lost.pid), healthWarn
	}
	return fmt.Sprintf("Background service restarting: daemon pid %d ended and no new one answers yet; mcptray goes on trying", c.lost.pid), healthError
}

// wakeGateway has the gateway poll run now (any goroutine).
func (c *controller) wakeGateway() {
	select {
	case c.gwWake <- struct{}{}:
	default:
	}
}

// daemonStopWords is what the daemon of pid said as it stopped, from its
// log beside the socket ("" when it said nothing).
func (c *controller) daemonStopWords(pid int) string {
	cl, ok := c.eng.(*control.Client)
	if !ok {
		return ""
	}
	return app.DaemonStopWords(cl.Socket(), pid)
}

// restartedWords is the notification's text: which daemon ended, how (as
// this app reaped it, else as its log says), and which one runs now.
func restartedWords(old, next int, logged string) string {
	how := "ended without a word in its log (killed, or it crashed)"
	if e, ok := supervisor.InheritedExit(old); ok {
		if e.Signal != "" {
			how = "was killed by " + e.Signal
		} else {
			how = fmt.Sprintf("exited with code %d", e.Code)
		}
	}
	if logged != "" {
		how = "said “" + logged + "”"
	}
	return fmt.Sprintf("The background service (daemon pid %d) %s; mcptray started a new one (pid %d), which runs your servers again.", old, how, next)
}

// levels is each server's level in snap.
func levels(snap supervisor.Snapshot) map[string]supervisor.Level {
	out := make(map[string]supervisor.Level, len(snap.Servers))
	for i := range snap.Servers {
		out[snap.Servers[i].Name] = levelOf(&snap.Servers[i])
	}
	return out
}

// restartingSnapshot is snap as it stands while the daemon that ran it is
// gone (since at): what was up is starting again (in the next daemon),
// with no process, clients or uptime; what was not up is left as it was.
func restartingSnapshot(snap supervisor.Snapshot, at time.Time) supervisor.Snapshot {
	out := supervisor.Snapshot{Time: snap.Time, Servers: make([]supervisor.ServerState, len(snap.Servers))}
	for i, s := range snap.Servers {
		if s.State.Alive() || s.State == supervisor.StateBackoff {
			s.State, s.Since = supervisor.StateStarting, at
			s.Reason = "the background service is restarting; the new one starts it again"
			s.PID, s.StartedAt, s.Clients, s.Failures = 0, time.Time{}, 0, 0
			s.NextAttempt = time.Time{}
			s.Diagnosis = nil
			s.Level = supervisor.LevelWarn
		}
		out.Servers[i] = s
	}
	return out
}
