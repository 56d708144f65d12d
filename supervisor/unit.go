package supervisor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"mcptray/healthcheck"
	"mcptray/registry"
)

// unit is one configured server. Commands set its wishes under mu and kick
// its goroutine, which alone owns the process, the health session and the
// restart bookkeeping.
type unit struct {
	sup  *Supervisor
	name string
	// instanceOf is the configured server a per-session instance was made
	// from ("" for a configured server).
	instanceOf string
	ring       *ring
	logf       *logFile
	kick       chan struct{} // buffer 1: "your wishes changed"

	cancel context.CancelFunc // ends run; set when run is started (under sup.mu)

	mu sync.Mutex // guards the fields below
	// wishes
	server     *registry.Server
	want       bool   // should be running
	stopReason string // reason shown when !want
	userStart  bool   // a Start/Restart since last look: forget crash history
	restart    bool   // end the current process and start again
	reconfig   bool   // the entry changed: end the current process, look again
	checkNow   bool
	quitReason string // reason shown when run's context ends
	// wishGen counts the changes of the wishes; settledGen is the count
	// run last came to rest on (parked, or stopped), so that Use can tell
	// a start still to come from one that is over.
	wishGen, settledGen uint64
	// Clients (see demand.go).
	leases      int       // Acquire without Release
	lastUse     time.Time // last Acquire or Touch, or the last start: what idle_stop counts from
	idleStopped bool      // stopped by idle_stop; a client's use starts it again
	userStopped bool      // stopped by Stop; only Start, Restart or a config change starts it
	// published
	st ServerState

	// Owned by the run goroutine.
	restarts restartPolicy   // backoff and crash loop
	spawned  bool            // started at least once (for Restarts)
	era      healthcheck.Era // the era to try first (remembered, or guessed)
	eraSeen  bool            // era came from a completed handshake
	guessed  bool            // an era was guessed since the last handshake, start or change (see guessEra)
	probes   healthcheck.ProbeHistory
	down     bool      // crashed, failed or unhealthy since it was last ready
	flapped  time.Time // when a recovery was last announced as flapping
}

// configName is the name of the configured server u runs: its own, or
// the one a per-session instance was made from.
func (u *unit) configName() string {
	if u.instanceOf != "" {
		return u.instanceOf
	}
	return u.name
}

// newUnit makes the unit of srv; instanceOf names the configured server
// of a per-session instance ("" for a configured server).
func newUnit(sup *Supervisor, srv *registry.Server, instanceOf string) *unit {
	o, t := &sup.opts, sup.timing()
	u := &unit{
		sup:        sup,
		name:       srv.Name,
		instanceOf: instanceOf,
		ring:       newRing(t.LogLimitLines, t.LogLimitBytes),
		kick:       make(chan struct{}, 1),
		quitReason: reasonQuit,
		wishGen:    1, // run has not looked yet
		restarts:   newRestartPolicy(o),
	}
	if !o.NoLogFiles && instanceOf == "" {
		// An instance keeps its stderr in its ring only: instances come
		// and go with client sessions, and a file each would pile up.
		u.logf = openLogFile(o.LogDir, srv.Name, o.LogFileMaxBytes)
	}
	u.setServerLocked(srv, false)
	u.st = ServerState{Name: srv.Name, Server: srv, Transport: srv.Transport(), Since: o.Clock.Now(), InstanceOf: instanceOf}
	switch {
	case srv.Invalid != nil:
		d := diagInvalid(srv.Invalid)
		u.st.State, u.st.Reason, u.st.Diagnosis = StateFailed, "invalid config: "+d.Message, d
	case srv.Disabled:
		u.st.State, u.st.Reason = StateStopped, "disabled in the config"
	default:
		u.st.State, u.st.Reason = StateStopped, u.stopReason
	}
	u.refreshLocked(o.Clock.Now())
	return u
}

// setServerLocked installs a (new) entry and works out whether to run it: a
// running server keeps running, a stopped one starts if it starts with the
// engine (start = "auto", and not stopped by idle_stop). An instance runs
// for its client whatever the start mode.
func (u *unit) setServerLocked(srv *registry.Server, wasWanted bool) {
	u.server = srv
	runnable := srv.Invalid == nil && !srv.Disabled
	mode := srv.StartMode()
	if u.instanceOf != "" {
		mode = registry.StartAuto
	}
	if mode == registry.StartManual {
		u.idleStopped = false // nothing but a person starts it now
	}
	u.userStopped = false
	u.want = runnable && (wasWanted || mode == registry.StartAuto && !u.idleStopped)
	switch {
	case u.idleStopped:
		// keeps its reason: the next client starts it
	case mode == registry.StartLazy:
		u.stopReason = ReasonLazy
	case mode == registry.StartManual:
		u.stopReason = ReasonManual
	default:
		u.stopReason = ReasonNotStarted
	}
}

// command changes the wishes under mu and wakes run.
func (u *unit) command(f func()) {
	u.mu.Lock()
	f()
	u.wishGen++
	u.mu.Unlock()
	u.poke()
}

// settle records that run came to rest on the wishes of generation gen.
func (u *unit) settle(gen uint64) {
	u.mu.Lock()
	u.settledGen = gen
	u.mu.Unlock()
}

func (u *unit) poke() {
	select {
	case u.kick <- struct{}{}:
	default:
	}
}

// wishes is what run reads at the top of its loop.
type wishes struct {
	server                             *registry.Server
	want, userStart, restart, reconfig bool
	checkNow                           bool
	stopReason                         string
	gen                                uint64
}

func (u *unit) take() wishes {
	u.mu.Lock()
	defer u.mu.Unlock()
	w := wishes{u.server, u.want, u.userStart, u.restart, u.reconfig, u.checkNow, u.stopReason, u.wishGen}
	u.userStart, u.restart, u.reconfig, u.checkNow = false, false, false, false
	return w
}

// endRequested says why the current process or connection must end, or "".
func (u *unit) endRequested() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	switch {
	case u.reconfig:
		return "the config changed"
	case !u.want:
		return "stop requested"
	case u.restart:
		return "restart requested"
	}
	return ""
}

func (u *unit) takeCheckNow() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	c := u.checkNow
	u.checkNow = false
	return c
}

// set moves to state with a reason (and the current diagnosis) and
// publishes the change; a change of state is also a [Transition].
func (u *unit) set(state State, reason string, d *healthcheck.Diagnosis, edit func(*ServerState)) {
	now := u.sup.opts.Clock.Now()
	u.mu.Lock()
	from := u.st.State
	changed := from != state || u.st.Reason != reason
	var tr *Transition
	if from != state {
		u.st.Since = now
		t := Transition{Time: now, Server: u.name, From: from, To: state, Reason: reason,
			Event: u.eventLocked(from, state, d, now), Remote: u.server.IsRemote()}
		if d != nil {
			t.Code = d.Code
		}
		tr = &t
	}
	u.st.State, u.st.Reason, u.st.Diagnosis = state, reason, d
	if edit != nil {
		edit(&u.st)
		changed = true
	}
	u.refreshLocked(now)
	u.mu.Unlock()
	if tr != nil {
		u.sup.transitions.add(*tr)
	}
	if changed {
		u.sup.opts.Logger.Info("server state", "server", u.name, "state", string(state), "reason", reason)
		u.sup.notify()
	}
}

// edit changes fields other than the state and publishes.
func (u *unit) edit(f func(*ServerState)) {
	now := u.sup.opts.Clock.Now()
	u.mu.Lock()
	f(&u.st)
	u.refreshLocked(now)
	u.mu.Unlock()
	u.sup.notify()
}

func (u *unit) state() State {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.st.State
}

const reasonQuit = "mcptray stopped"

// exitReapGrace is how long a failed handshake waits to see whether the
// process is exiting.
const exitReapGrace = 250 * time.Millisecond

type outKind int

const (
	outEnded     outKind = iota // ended on request (stop, restart, reload, quit)
	outFailed                   // cannot start; do not retry
	outOtherEra                 // died in one era's handshake: start again at once in the other
	outExited                   // ended and the policy says stay stopped
	outCrash                    // crashed, hung or failed its handshake: maybe retry
	outTransient                // could not start for want of resources: retry, not a crash
	outReopen                   // a remote server ended a session that had served: open a new one at once
)

type outcome struct {
	kind   outKind
	reason string
	diag   *healthcheck.Diagnosis
	uptime time.Duration
	// neverReady: the start ended before the server ever became ready
	// (mcptray gave up on its handshake).
	neverReady bool
}

func failed(d *healthcheck.Diagnosis) outcome {
	return outcome{kind: outFailed, reason: d.Message, diag: d}
}

// run is the unit's life: it starts, watches and restarts the server as its
// wishes and the restart policy say, until ctx ends, and leaves nothing
// running.
func (u *unit) run(ctx context.Context) {
	defer u.logf.close()
	opts := &u.sup.opts
	var backoff Timer
	stopBackoff := func() {
		if backoff != nil {
			backoff.Stop()
			backoff = nil
		}
	}
	defer stopBackoff()
	parked := false // stays as it is until a command or a config change
	u.mu.Lock()
	if u.lastUse.IsZero() {
		u.lastUse = opts.Clock.Now() // idle_stop counts from the engine's start
	}
	u.mu.Unlock()
	for {
		w := u.take()
		if w.userStart || w.restart || w.reconfig {
			parked = false
			u.guessed = false
			u.restarts.reset()
			stopBackoff()
		}
		if w.checkNow && backoff != nil {
			stopBackoff() // retry now
		}
		if ctx.Err() != nil {
			u.mu.Lock()
			reason := u.quitReason
			u.mu.Unlock()
			// Failed and crash-looping stay as they are: that is still
			// the truth about them.
			if st := u.state(); st.Alive() || st == StateBackoff {
				u.set(StateStopped, reason, nil, func(st *ServerState) { st.PID, st.NextAttempt = 0, time.Time{} })
			}
			u.settle(w.gen)
			return
		}
		srv := w.server
		idle := true
		switch {
		case srv.Invalid != nil:
			d := diagInvalid(srv.Invalid)
			u.set(StateFailed, "invalid config: "+d.Message, d, nil)
		case srv.Disabled:
			u.set(StateStopped, "disabled in the config", nil, nil)
		case !w.want:
			stopBackoff()
			parked = false
			u.set(StateStopped, w.stopReason, nil, func(st *ServerState) { st.NextAttempt = time.Time{} })
		case parked, backoff != nil:
		case srv.IsRemote() && opts.Checker == nil:
			u.set(StateStopped, "no health check configured", nil, nil)
		case u.idleStopIfDue() != "":
			// Nobody used it while it was down: it stays down (the
			// next look sets the state) until a client comes.
			continue
		default:
			idle = false
		}
		if idle {
			u.settle(w.gen)
			var fire <-chan time.Time
			if backoff != nil {
				fire = backoff.C()
			}
			select {
			case <-ctx.Done():
			case <-u.kick:
			case <-fire:
				backoff = nil
			}
			continue
		}

		backoff, parked = u.afterRun(u.runOnce(ctx, srv), srv)
	}
}

// afterRun sets the state an attempt's outcome leads to: the timer of the
// next attempt when there is one, parked when the unit waits for a command
// or a config change.
func (u *unit) afterRun(out outcome, srv *registry.Server) (backoff Timer, parked bool) {
	opts := &u.sup.opts
	switch out.kind {
	case outEnded, outOtherEra, outReopen:
	case outFailed:
		u.set(StateFailed, out.reason, out.diag, nil)
		return nil, true
	case outExited:
		u.set(StateStopped, out.reason, out.diag, nil)
		return nil, true
	case outTransient:
		// Not the server's fault: no crash counted, never given up on.
		delay := u.restarts.transient()
		next := opts.Clock.Now().Add(delay)
		// The timer runs before the state says so: whoever sees
		// "backoff" can count on the retry.
		backoff := opts.Clock.NewTimer(delay)
		u.set(StateBackoff, fmt.Sprintf("%s; trying again in %s", strings.TrimSuffix(out.reason, "."), roundDuration(delay)), out.diag,
			func(st *ServerState) { st.NextAttempt = next })
		return backoff, false
	case outCrash:
		if srv.IsRemote() && out.diag != nil && errors.Is(out.diag, healthcheck.ErrSignInRequired) {
			// Retrying cannot help until a person signs in, and the
			// sign-in restarts the server.
			u.set(StateSignIn, "sign-in required: "+out.diag.Message, out.diag, nil)
			return nil, true
		}
		if !srv.IsRemote() && srv.RestartPolicy() == registry.RestartNever {
			u.set(StateStopped, out.reason+" (restart = never)", out.diag, nil)
			return nil, true
		}
		delay, looping := u.restarts.crashed(opts.Clock.Now(), out.uptime, srv.IsRemote(), out.neverReady)
		if looping && u.restarts.neverReady >= opts.CrashLoopCount {
			u.set(StateCrashLooping, fmt.Sprintf("%s; %d starts in a row never became ready, not restarting until started again",
				out.reason, u.restarts.neverReady), out.diag, nil)
			return nil, true
		}
		if looping {
			u.set(StateCrashLooping, fmt.Sprintf("%s; %d failures within %s, not restarting until started again",
				out.reason, len(u.restarts.crashes), roundDuration(opts.CrashLoopWindow)), out.diag, nil)
			return nil, true
		}
		next := opts.Clock.Now().Add(delay)
		verb := "restarting"
		if srv.IsRemote() {
			verb = "reconnecting"
		}
		backoff := opts.Clock.NewTimer(delay)
		u.set(StateBackoff, fmt.Sprintf("%s; %s in %s", out.reason, verb, roundDuration(delay)), out.diag,
			func(st *ServerState) { st.NextAttempt = next })
		return backoff, false
	}
	return nil, false
}

// lookupIn looks variables up in an environment list.
func lookupIn(env []string) registry.LookupFunc {
	return func(name string) (string, bool) {
		for i := len(env) - 1; i >= 0; i-- {
			k, v, ok := strings.Cut(env[i], "=")
			if ok && envKeyEqual(k, name) {
				return v, true
			}
		}
		return "", false
	}
}

// quitting is the reason shown while the run's context ends.
func (u *unit) quitting() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.quitReason == reasonQuit {
		return "mcptray is quitting"
	}
	return u.quitReason
}

func (u *unit) currentDiag() *healthcheck.Diagnosis {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.st.Diagnosis
}
