package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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
	ring *ring
	logf *logFile
	kick chan struct{} // buffer 1: "your wishes changed"

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
	// published
	st ServerState

	// Owned by the run goroutine.
	crashes []time.Time     // within the crash-loop window
	attempt int             // consecutive failed starts, for backoff
	spawned bool            // started at least once (for Restarts)
	era     healthcheck.Era // the era to try first (remembered, or guessed)
	eraSeen bool            // era came from a completed handshake
	probes  probeTracker
}

func newUnit(sup *Supervisor, srv *registry.Server) *unit {
	o := &sup.opts
	u := &unit{
		sup:        sup,
		name:       srv.Name,
		ring:       newRing(o.LogLimitLines, o.LogLimitBytes),
		kick:       make(chan struct{}, 1),
		quitReason: reasonQuit,
	}
	if !o.NoLogFiles {
		u.logf = openLogFile(o.LogDir, srv.Name, o.LogFileMaxBytes)
	}
	u.setServerLocked(srv, false)
	u.st = ServerState{Name: srv.Name, Server: srv, Transport: srv.Transport(), Since: o.Clock.Now()}
	switch {
	case srv.Invalid != nil:
		d := diagInvalid(srv.Invalid)
		u.st.State, u.st.Reason, u.st.Diagnosis = StateFailed, "invalid config: "+d.Message, d
	case srv.Disabled:
		u.st.State, u.st.Reason = StateStopped, "disabled in the config"
	default:
		u.st.State, u.st.Reason = StateStopped, u.stopReason
	}
	return u
}

// setServerLocked installs a (new) entry and works out whether to run it: a
// running server keeps running, a stopped one starts if autostart is on.
func (u *unit) setServerLocked(srv *registry.Server, wasWanted bool) {
	u.server = srv
	runnable := srv.Invalid == nil && !srv.Disabled
	u.want = runnable && (wasWanted || srv.Autostart)
	u.stopReason = ReasonNotStarted
	if !srv.Autostart {
		u.stopReason = "autostart is off"
	}
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
}

func (u *unit) take() wishes {
	u.mu.Lock()
	defer u.mu.Unlock()
	w := wishes{u.server, u.want, u.userStart, u.restart, u.reconfig, u.checkNow, u.stopReason}
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
// publishes the change.
func (u *unit) set(state State, reason string, d *healthcheck.Diagnosis, edit func(*ServerState)) {
	now := u.sup.opts.Clock.Now()
	u.mu.Lock()
	changed := u.st.State != state || u.st.Reason != reason
	if u.st.State != state {
		u.st.Since = now
	}
	u.st.State, u.st.Reason, u.st.Diagnosis = state, reason, d
	if edit != nil {
		edit(&u.st)
		changed = true
	}
	u.mu.Unlock()
	if changed {
		u.sup.opts.Logger.Info("server state", "server", u.name, "state", string(state), "reason", reason)
		u.sup.notify()
	}
}

// edit changes fields other than the state and publishes.
func (u *unit) edit(f func(*ServerState)) {
	u.mu.Lock()
	f(&u.st)
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
	outEnded  outKind = iota // ended on request (stop, restart, reload, quit)
	outFailed                // cannot start; do not retry
	outLegacy                // died on server/discover: start again at once as legacy
	outExited                // ended and the policy says stay stopped
	outCrash                 // crashed, hung or failed its handshake: maybe retry
)

type outcome struct {
	kind   outKind
	reason string
	diag   *healthcheck.Diagnosis
	uptime time.Duration
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
	for {
		w := u.take()
		if w.userStart || w.restart || w.reconfig {
			parked = false
			u.crashes, u.attempt = nil, 0
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
		default:
			idle = false
		}
		if idle {
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

		out := u.runOnce(ctx, srv)
		switch out.kind {
		case outEnded, outLegacy:
		case outFailed:
			u.set(StateFailed, out.reason, out.diag, nil)
			parked = true
		case outExited:
			u.set(StateStopped, out.reason, out.diag, nil)
			parked = true
		case outCrash:
			if !srv.IsRemote() && srv.RestartPolicy() == registry.RestartNever {
				u.set(StateStopped, out.reason+" (restart = never)", out.diag, nil)
				parked = true
				continue
			}
			delay, looping := u.recordCrash(out.uptime, srv.IsRemote())
			if looping {
				u.set(StateCrashLooping, fmt.Sprintf("%s; %d failures within %s, not restarting until started again",
					out.reason, len(u.crashes), roundDuration(opts.CrashLoopWindow)), out.diag, nil)
				parked = true
				continue
			}
			next := opts.Clock.Now().Add(delay)
			verb := "restarting"
			if srv.IsRemote() {
				verb = "reconnecting"
			}
			u.set(StateBackoff, fmt.Sprintf("%s; %s in %s", out.reason, verb, roundDuration(delay)), out.diag,
				func(st *ServerState) { st.NextAttempt = next })
			backoff = opts.Clock.NewTimer(delay)
		}
	}
}

// recordCrash counts a failure and returns the delay before the next try, or
// looping when the server crashed too often to go on.
func (u *unit) recordCrash(uptime time.Duration, remote bool) (time.Duration, bool) {
	o := &u.sup.opts
	now := o.Clock.Now()
	if uptime >= o.StableRun {
		u.attempt = 0
	}
	u.attempt++
	if !remote {
		kept := u.crashes[:0]
		for _, t := range u.crashes {
			if now.Sub(t) < o.CrashLoopWindow {
				kept = append(kept, t)
			}
		}
		u.crashes = append(kept, now)
		if len(u.crashes) >= o.CrashLoopCount {
			return 0, true
		}
	}
	return o.backoff(u.attempt), false
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

type connectResult struct {
	sess Session
	err  error
}

type probeResult struct {
	d       time.Duration
	err     error
	timeout bool
}

// runOnce starts the server once (spawns it, or for a remote server
// connects) and watches it until it ends or must end.
func (u *unit) runOnce(ctx context.Context, srv *registry.Server) outcome {
	o := &u.sup.opts
	clock := o.Clock
	env := o.Environ(ctx)
	exp, err := srv.ExpandWith(lookupIn(env), u.sup.opts.Secret)
	if err != nil {
		var ue *registry.UnsetVarError
		if errors.As(err, &ue) {
			return failed(diagUnset(ue))
		}
		var se *registry.SecretRefError
		if errors.As(err, &se) {
			return failed(diagSecret(se))
		}
		return failed(diagInvalid(err))
	}

	var p *process
	var firstSeq uint64 // the seq of the process's first stderr line
	target := healthcheck.Target{Server: exp, EraHint: u.era}
	restarted := u.spawned
	u.spawned = true
	if !srv.IsRemote() {
		dir := exp.Cwd
		if dir != "" {
			if st, err := os.Stat(dir); err != nil || !st.IsDir() {
				return failed(diagBadCwd(srv.Cwd, err))
			}
		}
		env = mergeEnv(env, exp.Env)
		name := exp.Command
		if dir != "" && !filepath.IsAbs(name) && strings.ContainsAny(name, pathSeparators) {
			name = filepath.Join(dir, name)
		}
		path, err := ResolveCommand(name, env)
		if err != nil {
			var ce *CommandError
			errors.As(err, &ce)
			return failed(diagCommand(srv, ce))
		}
		firstSeq = u.ring.total() + 1
		p, err = spawn(spawnSpec{Path: path, Args: exp.Args, Env: env, Dir: dir}, u.ring, u.logf, o.MaxLineBytes, clock.Now)
		if err != nil {
			return failed(diagSpawn(srv, path, err))
		}
		u.logf.note(p.started, "started pid %d: %s", p.pid, displayCommand(srv))
		target.Stdin, target.Stdout, target.Exited = p.stdin, p.stdout, p.exited
		state, reason := StateRunning, fmt.Sprintf("process %d started", p.pid)
		if o.Checker != nil {
			state, reason = StateStarting, fmt.Sprintf("process %d started; waiting for the MCP handshake", p.pid)
		}
		var diag *healthcheck.Diagnosis
		if state == StateStarting {
			diag = u.currentDiag()
		}
		u.set(state, reason, diag, func(st *ServerState) {
			st.PID, st.StartedAt, st.NextAttempt = p.pid, p.started, time.Time{}
			st.Command, st.ResolvedPath = srv.Command+" → "+path, path
			if u.eraSeen {
				st.Era = u.era
			}
			if restarted {
				st.Restarts++
			}
		})
	} else {
		u.set(StateStarting, "connecting to "+srv.URL, u.currentDiag(), func(st *ServerState) {
			st.NextAttempt = time.Time{}
			if restarted {
				st.Restarts++
			}
		})
	}

	var (
		wg        sync.WaitGroup
		sess      Session
		connectCh chan connectResult
		ccancel   context.CancelFunc
		probeCh   chan probeResult
		pcancel   context.CancelFunc
		probeT    Timer
		readyAt   time.Time
		exited    <-chan struct{}
	)
	if p != nil {
		exited = p.exited
	}
	if o.Checker != nil {
		cctx, cancel := clockTimeout(ctx, clock, o.StartupTimeout, errStartupTimeout)
		ch := make(chan connectResult, 1)
		connectCh, ccancel = ch, cancel
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := o.Checker.Connect(cctx, target)
			if err == nil && s == nil {
				err = errors.New("health check returned no session")
			}
			if err != nil && context.Cause(cctx) == errStartupTimeout {
				err = &timeoutError{err}
			}
			ch <- connectResult{s, err}
		}()
	} else if p != nil {
		// Nobody reads stdout: drain it so the server never blocks writing.
		wg.Add(1)
		go func() {
			defer wg.Done()
			io.Copy(io.Discard, p.stdout)
		}()
	}
	startProbe := func() {
		pctx, cancel := clockTimeout(ctx, clock, o.ProbeTimeout, errProbeTimeout)
		ch := make(chan probeResult, 1)
		probeCh, pcancel = ch, cancel
		s := sess
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := s.Probe(pctx)
			timeout := context.Cause(pctx) == errProbeTimeout || d > o.ProbeTimeout
			if timeout && err == nil {
				err = fmt.Errorf("answered after %s, past probe_timeout %s", roundDuration(d), roundDuration(o.ProbeTimeout))
			}
			ch <- probeResult{d, err, timeout}
		}()
	}
	// end cancels pending work, closes the session and stops the process (or
	// after an exit cleans up its group), then waits for every goroutine.
	end := func(stopProcess bool) {
		if ccancel != nil {
			ccancel()
		}
		if pcancel != nil {
			pcancel()
		}
		if probeT != nil {
			probeT.Stop()
		}
		u.sup.live.set(u, nil)
		closed := make(chan struct{})
		go func() {
			defer close(closed)
			if connectCh != nil {
				if r := <-connectCh; r.sess != nil {
					r.sess.Close()
				}
			}
			if sess != nil {
				sess.Close()
			}
		}()
		if p != nil {
			if stopProcess {
				p.stop(clock, o.StopGrace, o.KillGrace)
			} else {
				p.cleanup()
			}
			u.logf.note(clock.Now(), "pid %d ended: %s", p.pid, p.exit.Describe())
		}
		<-closed
		wg.Wait()
		if p != nil {
			exit := p.exit
			u.edit(func(st *ServerState) { st.PID, st.StartedAt, st.LastExit = 0, time.Time{}, &exit })
		} else {
			u.edit(func(st *ServerState) { st.StartedAt = time.Time{} })
		}
	}
	uptime := func() time.Duration {
		switch {
		case p != nil:
			return clock.Now().Sub(p.started)
		case !readyAt.IsZero():
			return clock.Now().Sub(readyAt)
		}
		return 0
	}
	crash := func(d *healthcheck.Diagnosis, prefix string) outcome {
		up := uptime()
		end(true)
		return outcome{kind: outCrash, reason: prefix + strings.TrimSuffix(d.Message, "."), diag: d, uptime: up}
	}

	// exitOutcome explains a process that ended on its own (after end):
	// exit code or signal, uptime and the last stderr lines.
	exitOutcome := func(duringStartup bool) outcome {
		exit := p.exit
		// Only this process's lines: earlier runs' lines would repeat the
		// same error once per restart.
		tail, _ := u.ring.since(firstSeq)
		if len(tail) > tailLines {
			tail = tail[len(tail)-tailLines:]
		}
		clean := exit.Code == 0 && exit.Signal == ""
		policy := srv.RestartPolicy()
		if clean && !duringStartup && policy == registry.RestartOnFailure {
			return outcome{kind: outExited, reason: exit.Describe() + " (restart = on-failure)"}
		}
		d := diagExit(srv, exit, tail, duringStartup)
		if policy == registry.RestartNever {
			return outcome{kind: outExited, reason: d.Message + " (restart = never)", diag: d}
		}
		return outcome{kind: outCrash, reason: d.Message, diag: d, uptime: exit.Uptime}
	}

	for {
		var probeFire <-chan time.Time
		if probeT != nil {
			probeFire = probeT.C()
		}
		select {
		case <-ctx.Done():
			u.mu.Lock()
			reason := u.quitReason
			u.mu.Unlock()
			if reason == reasonQuit {
				reason = "mcptray is quitting"
			}
			u.set(StateStopping, reason, nil, nil)
			end(true)
			return outcome{kind: outEnded}

		case <-u.kick:
			if reason := u.endRequested(); reason != "" {
				u.set(StateStopping, reason, nil, nil)
				end(true)
				return outcome{kind: outEnded}
			}
			if u.takeCheckNow() && sess != nil && probeCh == nil {
				if probeT != nil {
					probeT.Stop()
					probeT = nil
				}
				startProbe()
			}

		case r := <-connectCh:
			connectCh = nil
			ccancel()
			if r.err != nil {
				if errors.Is(r.err, healthcheck.ErrDiedDuringDiscover) && p != nil && u.era != healthcheck.EraLegacy {
					u.era = healthcheck.EraLegacy
					// The hint is a guess until a handshake confirms it: not shown yet.
					u.set(StateStarting, "exited on server/discover; starting again with the initialize handshake", nil, nil)
					end(true)
					return outcome{kind: outLegacy}
				}
				// A process that died during the handshake is better explained
				// by its exit code and stderr than by the handshake error. The
				// checker may see stdout close a moment before the exit is
				// reaped, hence the short wait.
				if p != nil && p.waitExit(realClock{}, exitReapGrace) {
					end(false)
					return exitOutcome(true)
				}
				var te *timeoutError
				return crash(diagConnect(r.err, errors.As(r.err, &te)), "handshake failed: ")
			}
			sess = r.sess
			u.sup.live.set(u, sess)
			rep := sess.Report()
			if rep != nil && rep.Era != "" {
				u.era, u.eraSeen = rep.Era, true
			}
			readyAt = clock.Now()
			state, reason, diag := StateReady, "handshake done", (*healthcheck.Diagnosis)(nil)
			if rep != nil {
				reason = fmt.Sprintf("%s %s ready (%s, protocol %s)", rep.ServerInfo.Name, rep.ServerInfo.Version, rep.Era, rep.ProtocolVersion)
				if rep.Degraded() {
					state = StateDegraded
					for i := range rep.Diagnoses {
						if rep.Diagnoses[i].Code == healthcheck.CodeListFailed {
							diag = &rep.Diagnoses[i]
							break
						}
					}
					reason = "connected, but " + diag.Message
				}
			}
			u.set(state, reason, diag, func(st *ServerState) {
				st.Report, st.Era = rep, u.era
				if p == nil {
					st.StartedAt = readyAt
				}
			})
			probeT = clock.NewTimer(o.ProbeInterval)

		case <-probeFire:
			probeT = nil
			startProbe()

		case r := <-probeCh:
			probeCh = nil
			pcancel()
			pcancel = nil
			stats := u.probes.record(clock.Now(), r.d, r.err)
			u.edit(func(st *ServerState) { st.Probes = stats })
			if r.timeout || stats.ConsecutiveFailures >= o.FailureThreshold {
				d := diagProbe(r.err, r.timeout, stats.ConsecutiveFailures)
				verb := "restarting it"
				if p == nil {
					verb = "reconnecting"
				}
				u.set(StateUnhealthy, d.Message+"; "+verb, d, nil)
				return crash(d, "unhealthy: ")
			}
			probeT = clock.NewTimer(o.ProbeInterval)

		case <-exited:
			duringStartup := connectCh != nil || (o.Checker == nil && clock.Now().Sub(p.started) < o.StartupSettle)
			if connectCh != nil {
				ccancel()
				r := <-connectCh
				connectCh = nil
				if r.sess != nil {
					r.sess.Close()
				}
				if errors.Is(r.err, healthcheck.ErrDiedDuringDiscover) && u.era != healthcheck.EraLegacy {
					u.era = healthcheck.EraLegacy
					// The hint is a guess until a handshake confirms it: not shown yet.
					u.set(StateStarting, "exited on server/discover; starting again with the initialize handshake", nil, nil)
					end(false)
					return outcome{kind: outLegacy}
				}
			}
			end(false)
			return exitOutcome(duringStartup)
		}
	}
}

func (u *unit) currentDiag() *healthcheck.Diagnosis {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.st.Diagnosis
}

// timeoutError marks a Connect error caused by the startup timeout.
type timeoutError struct{ err error }

func (e *timeoutError) Error() string { return e.err.Error() }
func (e *timeoutError) Unwrap() error { return e.err }
