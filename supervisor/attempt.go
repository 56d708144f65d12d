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
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/healthcheck"
	"mcptray/registry"
)

// ender says who ended an attempt. The first group is mcptray's own doing:
// the state and the diagnosis name that cause, and an exit of the process
// that follows is only evidence. The second group is the server's.
type ender int

const (
	endRequested       ender = iota + 1 // stop, restart, reload, removal or quit
	endStartupDeadline                  // no completed handshake within startup_timeout (or the check's time)
	endProbeDeadline                    // a liveness probe got no answer within probe_timeout
	endProbeFailures                    // failure_threshold probes in a row failed

	endSpawnFailed     // the process could not be started at all
	endHandshakeFailed // the server's answers (or a connection error) failed the handshake
	endDiedOnDiscover  // the process exited on server/discover before initialize
	endExited          // the process exited on its own
	endSessionEnded    // a remote server answered that the session is gone
)

// ending is how an attempt ended: who ended it and what that looked like.
type ending struct {
	by            ender
	diag          *healthcheck.Diagnosis // the cause explained, when known
	spawnErr      error                  // endSpawnFailed
	duringStartup bool                   // endExited: before the server was up
}

// attempt is one start of a server: one process (or, for a remote server,
// one connection) from its start to its end. Its goroutine is the unit's:
// start, watch and stop run in sequence, and only the connect and probe
// calls run on goroutines of their own, which stop reports back to.
type attempt struct {
	u     *unit
	o     *Options
	ctx   context.Context
	srv   *registry.Server // as configured
	exp   *registry.Server // references expanded
	spec  spawnSpec        // stdio only
	clock Clock

	p        *process // nil for a remote server
	firstSeq uint64   // seq of the process's first stderr line
	target   healthcheck.Target

	wg sync.WaitGroup // connect, probe and stdout-drain goroutines

	connectCh    chan connectResult // nil once the connect call answered
	ccancel      context.CancelFunc
	startupLimit time.Duration
	exitSeen     bool // the process exited while the connect call was pending

	sess    Session
	readyAt time.Time

	probeT   Timer
	probeCh  chan probeResult // nil when no probe is in flight
	pcancel  context.CancelFunc
	failures int // consecutive failed probes of this process

	idleT Timer // fires when idle_stop may be due; nil without idle_stop

	endedAt time.Time
}

type connectResult struct {
	sess     Session
	err      error
	deadline bool // the startup deadline ended the call
}

type probeResult struct {
	d       time.Duration
	err     error
	timeout bool
	limit   time.Duration // the deadline the probe had
}

// runOnce starts the server once and watches it until it ends or must end;
// the outcome is decided by attempt.outcome from who ended it.
func (u *unit) runOnce(ctx context.Context, srv *registry.Server) outcome {
	a, out, ok := u.prepare(ctx, srv)
	if !ok {
		return out
	}
	e, started := a.start()
	if started {
		e = a.watch()
	}
	a.stop(e)
	return a.outcome(e)
}

// prepare expands the entry and, for stdio, finds the command and its
// folder. A problem here is the config's: not retried.
func (u *unit) prepare(ctx context.Context, srv *registry.Server) (*attempt, outcome, bool) {
	o := &u.sup.opts
	env := o.Environ(ctx)
	exp, err := srv.ExpandWith(lookupIn(env), o.Secret)
	if err != nil {
		var ue *registry.UnsetVarError
		if errors.As(err, &ue) {
			return nil, failed(diagUnset(ue)), false
		}
		var se *registry.SecretRefError
		if errors.As(err, &se) {
			return nil, failed(diagSecret(se)), false
		}
		return nil, failed(diagInvalid(err)), false
	}
	a := &attempt{u: u, o: o, ctx: ctx, srv: srv, exp: exp, clock: o.Clock}
	a.target = healthcheck.Target{Server: exp, EraHint: u.era}
	if srv.IsRemote() {
		return a, outcome{}, true
	}
	dir := exp.Cwd
	if dir != "" {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return nil, failed(diagBadCwd(srv.Cwd, err)), false
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
		return nil, failed(diagCommand(srv, ce)), false
	}
	a.spec = spawnSpec{Path: path, Args: exp.Args, Env: env, Dir: dir, Name: srv.Name, Records: a.u.sup.records,
		OnHandoff: func(pid int) { a.u.edit(func(st *ServerState) { st.PID = pid }) },
		Secrets:   registry.ExpandedSecrets(srv, exp)}
	return a, outcome{}, true
}

// start spawns the process (stdio) and begins the handshake. It returns
// false with the ending when there is nothing to watch.
func (a *attempt) start() (ending, bool) {
	u, o := a.u, a.o
	restarted := u.spawned
	u.spawned = true
	u.probes.ResetFailures() // a new process starts with a clean slate
	probes := u.probes.Stats()
	if a.srv.IsRemote() {
		u.set(StateStarting, "connecting to "+a.srv.URL, u.currentDiag(), func(st *ServerState) {
			st.NextAttempt, st.Probes = time.Time{}, probes
			if restarted {
				st.Restarts++
			}
		})
		a.connect()
		return ending{}, true
	}
	a.firstSeq = u.ring.total() + 1
	p, err := spawn(a.spec, u.ring, u.logf, o.MaxLineBytes, a.clock.Now)
	if err != nil {
		return ending{by: endSpawnFailed, spawnErr: err, diag: diagSpawn(a.srv, a.spec.Path, err)}, false
	}
	a.p = p
	u.logf.note(p.started, "started pid %d: %s", p.pid, displayCommand(a.srv))
	a.target.Stdin, a.target.Stdout, a.target.Exited = p.input(), p.stdout, p.exited
	state, reason := StateRunning, fmt.Sprintf("process %d started", p.pid)
	var diag *healthcheck.Diagnosis
	if o.Checker != nil {
		state, reason = StateStarting, fmt.Sprintf("process %d started; waiting for the MCP handshake", p.pid)
		diag = u.currentDiag()
	}
	u.set(state, reason, diag, func(st *ServerState) {
		st.PID, st.StartedAt, st.NextAttempt, st.Probes = p.servingPID(), p.started, time.Time{}, probes
		st.Command, st.ResolvedPath = a.srv.Command+" → "+a.spec.Path, a.spec.Path
		if u.eraSeen {
			st.Era = u.era
		}
		if restarted {
			st.Restarts++
		}
		if state == StateRunning {
			st.LastLive = p.started
		}
	})
	if o.Checker != nil {
		a.connect()
	} else {
		// Nobody reads stdout: drain it so the server never blocks writing.
		a.wg.Go(func() { io.Copy(io.Discard, p.stdout) })
	}
	return ending{}, true
}

// limit cuts a timeout so that it ends by the engine's deadline, if any.
func (a *attempt) limit(d time.Duration) time.Duration {
	if dl := a.o.Deadline; !dl.IsZero() {
		d = min(d, max(dl.Sub(a.clock.Now()), 0))
	}
	return d
}

// connect runs the handshake and discovery on a goroutine, bounded by the
// startup timeout.
func (a *attempt) connect() {
	a.startupLimit = a.limit(a.u.sup.timing().StartupTimeout)
	cctx, cancel := clockTimeout(a.ctx, a.clock, a.startupLimit, errStartupTimeout)
	ch := make(chan connectResult, 1)
	a.connectCh, a.ccancel = ch, cancel
	target := a.target
	a.wg.Go(func() {
		s, err := a.o.Checker.Connect(cctx, target)
		if err == nil && s == nil {
			err = errors.New("health check returned no session")
		}
		ch <- connectResult{s, err, err != nil && context.Cause(cctx) == errStartupTimeout}
	})
}

// watch waits for whatever ends the attempt.
func (a *attempt) watch() ending {
	u := a.u
	a.armIdle()
	for {
		var probeFire, idleFire <-chan time.Time
		if a.probeT != nil {
			probeFire = a.probeT.C()
		}
		if a.idleT != nil {
			idleFire = a.idleT.C()
		}
		var exited <-chan struct{}
		if a.p != nil && !a.exitSeen {
			exited = a.p.exited
		}
		var ended <-chan struct{}
		if e, ok := a.sess.(endedSession); ok {
			ended = e.Ended()
		}
		select {
		case <-ended:
			return a.sessionEnded()

		case <-a.ctx.Done():
			reason := u.quitting()
			u.set(StateStopping, reason, nil, nil)
			return ending{by: endRequested}

		case <-u.kick:
			if reason := u.endRequested(); reason != "" {
				u.set(StateStopping, reason, nil, nil)
				return ending{by: endRequested}
			}
			if u.takeCheckNow() && a.sess != nil && a.probeCh == nil {
				a.startProbe()
			}

		case r := <-a.connectCh:
			if e, done := a.connected(r); done {
				return e
			}

		case <-probeFire:
			a.startProbe()

		case <-idleFire:
			a.idleT = nil
			if reason := u.idleStopIfDue(); reason != "" {
				u.set(StateStopping, reason, nil, nil)
				return ending{by: endRequested}
			}
			a.armIdle() // used since: wait for the new due time

		case r := <-a.probeCh:
			if e, done := a.probed(r); done {
				return e
			}

		case <-exited:
			if a.connectCh != nil {
				// The health check watches the exit too and is about to say
				// what it saw (died on server/discover, or what it read):
				// its answer decides.
				a.exitSeen = true
				continue
			}
			return a.exitEnding()
		}
	}
}

// armIdle sets the idle_stop timer to the time it is due (a Touch since
// moves that time on; the timer looks again when it fires).
func (a *attempt) armIdle() {
	if a.idleT != nil {
		a.idleT.Stop()
		a.idleT = nil
	}
	if due, ok := a.u.idleDue(); ok {
		a.idleT = a.clock.NewTimer(max(due.Sub(a.clock.Now()), 0))
	}
}

// exitEnding is the process's own exit.
func (a *attempt) exitEnding() ending {
	during := a.sess == nil
	if a.o.Checker == nil {
		during = a.p.exit.Time.Sub(a.p.started) < a.o.StartupSettle
	}
	return ending{by: endExited, duringStartup: during}
}

// connected handles the connect call's answer.
func (a *attempt) connected(r connectResult) (ending, bool) {
	a.connectCh = nil
	a.ccancel()
	a.ccancel = nil
	u := a.u
	if r.err != nil {
		var d *healthcheck.Diagnosis
		hcDiag := errors.As(r.err, &d)
		switch {
		case errors.Is(r.err, healthcheck.ErrDiedDuringDiscover) && a.p != nil && a.p.ended(diedGrace) && a.neverRead():
			// Ended while server/discover was pending, without having read
			// a byte of it: it ended whatever was sent. Its exit code and
			// stderr say why; starting it again with initialize would
			// only start it twice.
			return ending{by: endExited, duringStartup: true}, true
		case errors.Is(r.err, healthcheck.ErrDiedDuringDiscover) && a.p != nil && u.era != healthcheck.EraLegacy && !u.guessed:
			// A guess like guessEra's, and bounded the same way: made once
			// until a handshake, a start or a change. It replaces a
			// remembered era too (a server remembered as modern that now
			// dies on server/discover), so that a failed guess is dropped
			// and the next start detects the era again.
			u.guess(healthcheck.EraLegacy, "exited on server/discover; starting once more with the initialize handshake")
			return ending{by: endDiedOnDiscover}, true
		case a.p != nil && !r.deadline && serverClosed(r.err, hcDiag, d) && a.p.waitExit(a.clock, exitReapGrace):
			// The server closed its end first: its exit code and stderr say why.
			return ending{by: endExited, duringStartup: true}, true
		case r.deadline:
			// mcptray's deadline; the exit that follows the closed stdin is
			// evidence only.
			return ending{by: endStartupDeadline, diag: diagConnect(u.configName(), r.err, true)}, true
		case a.p != nil && !hcDiag && a.exitSeen:
			// A bare error from a handshake whose process had exited.
			return ending{by: endExited, duringStartup: true}, true
		}
		// The health check named the cause (what the server sent, or the
		// connection error); an exit after it is evidence.
		return ending{by: endHandshakeFailed, diag: diagConnect(u.configName(), r.err, false)}, true
	}
	a.sess = r.sess
	u.sup.live.set(u, a.sess)
	rep := a.sess.Report()
	if rep != nil && rep.Era != "" {
		u.era, u.eraSeen, u.guessed = rep.Era, true, false
	}
	a.readyAt = a.clock.Now()
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
			reason = "connected, but " + strings.TrimSuffix(diag.Message, ".")
		}
	}
	a.probeT = a.clock.NewTimer(a.u.sup.timing().ProbeInterval) // before "ready" is seen
	u.set(state, reason, diag, func(st *ServerState) {
		st.Report, st.Era, st.LastLive = rep, u.era, a.readyAt
		if a.p == nil {
			st.StartedAt = a.readyAt
		}
	})
	if a.exitSeen {
		// It answered the handshake and exited at once.
		return a.exitEnding(), true
	}
	if a.o.ProbeAtReady {
		a.startProbe()
	}
	return ending{}, false
}

// startProbe sends one liveness probe, bounded by probe_timeout.
func (a *attempt) startProbe() {
	if a.probeT != nil {
		a.probeT.Stop()
		a.probeT = nil
	}
	limit := a.limit(a.u.sup.timing().ProbeTimeout)
	pctx, cancel := clockTimeout(a.ctx, a.clock, limit, errProbeTimeout)
	ch := make(chan probeResult, 1)
	a.probeCh, a.pcancel = ch, cancel
	s := a.sess
	a.wg.Go(func() {
		d, err := s.Probe(pctx)
		timeout := context.Cause(pctx) == errProbeTimeout || d > limit
		if timeout && err == nil {
			err = fmt.Errorf("answered after %s, past probe_timeout %s", roundDuration(d), roundDuration(limit))
		}
		ch <- probeResult{d, err, timeout, limit}
	})
}

// probed handles a probe's answer.
func (a *attempt) probed(r probeResult) (ending, bool) {
	a.probeCh = nil
	a.pcancel()
	a.pcancel = nil
	u := a.u
	now := a.clock.Now()
	if r.err != nil && a.p != nil && a.p.waitExit(a.clock, 0) {
		// The probe failed because the process is gone: the exit is the cause.
		return a.exitEnding(), true
	}
	if r.err == nil {
		a.failures = 0
	} else {
		a.failures++
	}
	u.probes.Record(now, r.d, r.err)
	stats := u.probes.Stats()
	rep := a.sess.Report() // noise written since the handshake shows up here
	if r.timeout || a.failures >= a.o.FailureThreshold {
		by, d := endProbeFailures, diagProbe(r.err, false, a.failures, r.limit)
		if r.timeout {
			by, d = endProbeDeadline, diagProbe(r.err, true, a.failures, r.limit)
			if set := a.u.sup.timing().ProbeTimeout; r.limit < set {
				d.Evidence = append(d.Evidence, fmt.Sprintf("the probe was given %s, the time left before the deadline of this run (probe_timeout is %s)",
					roundDuration(r.limit), roundDuration(set)))
			}
		}
		verb := "restarting it"
		if a.p == nil {
			verb = "reconnecting"
		}
		u.set(StateUnhealthy, strings.TrimSuffix(d.Message, ".")+"; "+verb, d, func(st *ServerState) { st.Probes = stats })
		return ending{by: by, diag: d}, true
	}
	a.probeT = a.clock.NewTimer(a.u.sup.timing().ProbeInterval)
	u.edit(func(st *ServerState) {
		st.Probes = stats
		if r.err == nil {
			st.LastLive = now
			if rep != nil {
				st.Report = rep
			}
		}
	})
	return ending{}, false
}

// stop cancels pending work, closes the session and stops the process (a
// process that already exited has its group cleaned up), then waits for
// every goroutine the attempt started.
func (a *attempt) stop(e ending) {
	a.endedAt = a.clock.Now()
	a.u.sup.live.set(a.u, nil)
	if a.ccancel != nil {
		a.ccancel()
	}
	if a.pcancel != nil {
		a.pcancel()
	}
	if a.probeT != nil {
		a.probeT.Stop()
	}
	if a.idleT != nil {
		a.idleT.Stop()
	}
	if a.p != nil {
		a.p.stopping() // before the session closes the server's stdin
	}
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		if a.connectCh != nil {
			if r := <-a.connectCh; r.sess != nil {
				r.sess.Close()
			}
		}
		if a.sess != nil {
			a.sess.Close()
		}
	}()
	p := a.p
	if p != nil {
		p.stop(a.clock, a.o.StopGrace, a.o.KillGrace)
		a.u.logf.note(a.clock.Now(), "pid %d ended: %s", p.pid, p.exit.Describe())
	}
	<-closed
	a.wg.Wait()
	wasLive := a.sess != nil
	a.u.edit(func(st *ServerState) {
		if p != nil {
			exit := p.exit
			st.PID, st.LastExit = 0, &exit
		}
		st.StartedAt = time.Time{}
		if wasLive || (p != nil && a.o.Checker == nil) {
			st.LastLive = a.endedAt
		}
	})
}

func (a *attempt) uptime() time.Duration {
	switch {
	case a.p != nil:
		return a.endedAt.Sub(a.p.started)
	case !a.readyAt.IsZero():
		return a.endedAt.Sub(a.readyAt)
	}
	return 0
}

// outcome is the one place that decides what an attempt's end means.
func (a *attempt) outcome(e ending) outcome {
	switch e.by {
	case endRequested:
		return outcome{kind: outEnded}
	case endDiedOnDiscover:
		return outcome{kind: outOtherEra}
	case endSpawnFailed:
		if transientSpawnError(e.spawnErr) {
			return outcome{kind: outTransient, reason: e.diag.Message, diag: e.diag}
		}
		return failed(e.diag)
	case endSessionEnded:
		if a.u.restarts.sessionEnded(a.uptime()) {
			// A server that restarted (or ended the session): the next
			// session is opened now, as a client would. One that ends
			// sessions soon after they open is backed off like a crash,
			// below.
			return outcome{kind: outReopen, reason: e.diag.Message, diag: e.diag}
		}
	case endExited:
		if e.duringStartup && a.guessEra() {
			return outcome{kind: outOtherEra}
		}
		out := a.exitOutcome(e.duringStartup)
		a.forgetGuess()
		return out
	}
	a.forgetGuess()
	d := a.withExitEvidence(e.diag)
	var prefix string
	switch e.by {
	case endStartupDeadline:
		prefix = fmt.Sprintf("mcptray gave up on the handshake after %s: ", roundDuration(a.startupLimit))
	case endProbeDeadline, endProbeFailures, endSessionEnded:
		prefix = "unhealthy: "
	default:
		prefix = "handshake failed: "
	}
	return outcome{kind: outCrash, reason: prefix + strings.TrimSuffix(d.Message, "."), diag: d, uptime: a.uptime(),
		neverReady: e.by == endStartupDeadline}
}

// guessEra decides whether a process that died during the handshake,
// before any era was known, gets one more start in the other era: some
// legacy servers exit on a server/discover sent first, and a server of the
// 2026-07-28 revision alone may exit on initialize; the health check
// cannot always tell (a request it gave up waiting for, a write that met
// the closed pipe). It guesses once until a handshake, a start or a config
// change: a server that dies for another reason is not started twice on
// every restart.
func (a *attempt) guessEra() bool {
	u := a.u
	if a.p == nil || a.o.Checker == nil || a.sess != nil || u.eraSeen || u.guessed {
		return false
	}
	if a.neverRead() {
		// It never read its stdin: it ended whatever was sent, and the
		// same start again would end the same way.
		return false
	}
	if a.offeredInitialize() {
		u.guess(healthcheck.EraModern, "exited during the handshake, which began with initialize; starting once more with server/discover first (a server of 2026-07-28 alone may end on initialize)")
	} else {
		u.guess(healthcheck.EraLegacy, "exited during the handshake, which began with server/discover; starting once more with initialize first")
	}
	return true
}

// guess makes era the one the next start tries first, as a guess: not
// shown until a handshake confirms it, dropped when that start fails too
// (forgetGuess), and not made again until a handshake, a start or a change.
func (u *unit) guess(era healthcheck.Era, reason string) {
	u.era, u.eraSeen, u.guessed = era, false, true
	u.set(StateStarting, reason, nil, nil)
}

// LegacyFirst is a Checker that offers initialize first to a server of no
// known era (healthcheck.Options.PreferLegacy).
type LegacyFirst interface {
	PrefersLegacy() bool
}

// offeredInitialize reports whether this attempt's handshake began with
// initialize rather than server/discover.
func (a *attempt) offeredInitialize() bool {
	switch a.target.EraHint {
	case healthcheck.EraLegacy:
		return true
	case healthcheck.EraModern:
		return false
	}
	lf, ok := a.o.Checker.(LegacyFirst)
	return ok && lf.PrefersLegacy()
}

// neverRead reports whether the process, now exited, is known to have read
// none of what the health check wrote to its stdin.
func (a *attempt) neverRead() bool {
	consumed, known := a.p.consumedInput()
	return known && !consumed
}

// forgetGuess drops an era hint no handshake confirmed, once an attempt
// with it failed: the next start detects the era again.
func (a *attempt) forgetGuess() {
	if u := a.u; !u.eraSeen && a.target.EraHint != "" {
		u.era = ""
	}
}

// serverClosed reports whether a handshake error says the server's side
// closed: the health check saw it exit or end stdout, or its generic
// failure is a call on a connection that closed under it. A specific
// diagnosis (what the server sent that made mcptray end the session) is
// the health check's verdict and stays the cause.
func serverClosed(err error, hcDiag bool, d *healthcheck.Diagnosis) bool {
	if hcDiag && d.Code == healthcheck.CodeExitedDuringStartup {
		return true
	}
	if hcDiag && d.Code != healthcheck.CodeHandshakeFailed {
		return false
	}
	return errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, syscall.EPIPE) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe)
}

// withExitEvidence adds how the process ended to a diagnosis of mcptray's
// own action: after mcptray closed its stdin, a server exiting with code 0
// is the evidence, not the cause.
func (a *attempt) withExitEvidence(d *healthcheck.Diagnosis) *healthcheck.Diagnosis {
	if a.p == nil {
		return d
	}
	c := *d
	c.Evidence = append(append([]string(nil), d.Evidence...), "then mcptray stopped the process: "+a.p.exit.Describe())
	return &c
}

// exitOutcome explains a process that ended on its own: exit code or
// signal, uptime and the last stderr lines.
func (a *attempt) exitOutcome(duringStartup bool) outcome {
	exit := a.p.exit
	// Only this process's lines: earlier runs' lines would repeat the same
	// error once per restart.
	tail, _ := a.u.ring.since(a.firstSeq)
	if len(tail) > tailLines {
		tail = tail[len(tail)-tailLines:]
	}
	clean := exit.Code == 0 && exit.Signal == ""
	policy := a.srv.RestartPolicy()
	if clean && !duringStartup && policy == registry.RestartOnFailure {
		return outcome{kind: outExited, reason: exit.Describe() + " (restart = on-failure)"}
	}
	d := diagExit(a.srv, exit, tail, duringStartup)
	if policy == registry.RestartNever {
		return outcome{kind: outExited, reason: d.Message + " (restart = never)", diag: d}
	}
	return outcome{kind: outCrash, reason: d.Message, diag: d, uptime: exit.Uptime}
}
