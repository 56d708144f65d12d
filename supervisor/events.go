package supervisor

import (
	"fmt"
	"sync"
	"time"

	"mcptray/healthcheck"
)

// Event names a transition worth telling a person about.
type Event string

const (
	EventCrashed      Event = "crashed"       // a process ended on its own, or failed its start; a restart follows
	EventDisconnected Event = "disconnected"  // a remote server's connection failed or broke; a reconnect follows
	EventUnhealthy    Event = "unhealthy"     // probes failed or timed out: restarted (or reconnected) as a crash
	EventCrashLooping Event = "crash-looping" // given up until started again
	EventFailed       Event = "failed"        // cannot start; not retried
	EventSignIn       Event = "sign-in"       // a remote server wants a person to sign in
	EventRecovered    Event = "recovered"     // up again after being down
	EventFlapping     Event = "flapping"      // up again, but it keeps going down: said once per crash-loop window
)

// Transition is one change of a server's state, as it happened: the
// engine publishes each one (snapshots coalesce and can skip states).
type Transition struct {
	Seq    uint64           `json:"seq"` // increasing over every server, from 1
	Time   time.Time        `json:"time"`
	Server string           `json:"server"`
	From   State            `json:"from"`
	To     State            `json:"to"`
	Reason string           `json:"reason"`
	Code   healthcheck.Code `json:"code,omitempty"`  // the diagnosis at that moment
	Event  Event            `json:"event,omitempty"` // set when it is news
	Remote bool             `json:"remote,omitempty"`
}

// transitionLimit is how many transitions the engine keeps.
const transitionLimit = 1000

// transitionLog is the engine's bounded history of transitions.
type transitionLog struct {
	mu   sync.Mutex // guards the fields below; a leaf lock
	list []Transition
	seq  uint64
}

func (l *transitionLog) add(t Transition) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	t.Seq = l.seq
	if len(l.list) == transitionLimit {
		l.list = append(l.list[:0], l.list[1:]...)
	}
	l.list = append(l.list, t)
}

// since returns the transitions with Seq >= from and the Seq to ask for
// next time.
func (l *transitionLog) since(from uint64) ([]Transition, uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.list) == 0 || from > l.seq {
		return nil, l.seq + 1
	}
	i := 0
	if first := l.list[0].Seq; from > first {
		i = int(from - first)
	}
	return append([]Transition(nil), l.list[i:]...), l.seq + 1
}

// Broadcast wakes any number of watchers: Wait returns a channel closed at
// the next Signal. A watcher that takes the channel before reading the
// state never misses a change. Signal never blocks.
type Broadcast struct {
	mu sync.Mutex // guards ch; a leaf lock
	ch chan struct{}
}

// NewBroadcast returns a broadcast with no signal pending.
func NewBroadcast() *Broadcast { return &Broadcast{ch: make(chan struct{})} }

// Wait returns the channel the next Signal closes.
func (b *Broadcast) Wait() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ch
}

// Signal wakes every watcher.
func (b *Broadcast) Signal() {
	b.mu.Lock()
	close(b.ch)
	b.ch = make(chan struct{})
	b.mu.Unlock()
}

// eventLocked decides whether moving from one state to another is news,
// and keeps the unit's "down since last up" memory. Run goroutine, u.mu held.
func (u *unit) eventLocked(from, to State, d *healthcheck.Diagnosis, now time.Time) Event {
	remote := u.server.IsRemote()
	switch to {
	case StateCrashLooping:
		u.down = true
		return EventCrashLooping
	case StateFailed:
		u.down = true
		return EventFailed
	case StateSignIn:
		u.down = true
		return EventSignIn
	case StateUnhealthy:
		u.down = true
		return EventUnhealthy
	case StateBackoff:
		u.down = true
		if from == StateUnhealthy || !from.Alive() || from == StateStopping {
			return ""
		}
		if remote {
			return EventDisconnected
		}
		return EventCrashed
	case StateStopped:
		if d != nil && from.Alive() && from != StateStopping {
			u.down = true
			return EventCrashed
		}
		u.down = false
	case StateReady, StateRunning:
		if !u.down {
			return ""
		}
		u.down = false
		if u.recentCrashes(now) < 2 {
			return EventRecovered
		}
		if !u.flapped.IsZero() && now.Sub(u.flapped) < u.sup.opts.CrashLoopWindow {
			return "" // said already
		}
		u.flapped = now
		return EventFlapping
	}
	return ""
}

// recentCrashes counts the crashes within the crash-loop window.
func (u *unit) recentCrashes(now time.Time) int { return u.restarts.recent(now) }

// refreshLocked recomputes the derived fields of the published state:
// warnings and level. Run goroutine (or before it starts), u.mu held.
func (u *unit) refreshLocked(now time.Time) {
	st := &u.st
	o := &u.sup.opts
	st.Warnings = nil
	if st.Live() {
		if st.Report != nil {
			for _, d := range st.Report.Diagnoses {
				if st.State == StateDegraded && st.Diagnosis != nil && d.Code == st.Diagnosis.Code && d.Message == st.Diagnosis.Message {
					continue // it is the state's own diagnosis
				}
				st.Warnings = append(st.Warnings, d)
			}
		}
		if n := u.recentCrashes(now); n >= 2 {
			st.Warnings = append(st.Warnings, healthcheck.Diagnosis{
				Code: CodeFlapping,
				Message: fmt.Sprintf("it went down %d times in the last %s and came back each time; it may go down again",
					n, roundDuration(o.CrashLoopWindow)),
				Fix: fmt.Sprintf("Read its stderr (its Log tab in the app, or `mcptray logs %s`) for why it keeps stopping.", u.configName()),
			})
		}
	}
	st.Failures = u.restarts.failures()
	st.Level = levelOf(st, o)
	u.lifecycleLocked()
}

func levelOf(st *ServerState, o *Options) Level {
	if st.Server != nil && st.Server.Disabled {
		return LevelIdle
	}
	switch st.State {
	case StateReady, StateRunning:
		if len(st.Warnings) > 0 {
			return LevelWarn
		}
		return LevelOK
	case StateDegraded, StateStarting, StateStopping, StateSignIn:
		return LevelWarn
	case StateBackoff:
		if st.Server != nil && st.Server.IsRemote() && st.Failures >= o.CrashLoopCount {
			return LevelError // a remote server down for good
		}
		return LevelWarn
	case StateFailed, StateCrashLooping, StateUnhealthy:
		return LevelError
	case StateStopped:
		if st.Diagnosis != nil {
			return LevelError // ended badly and not restarted
		}
	}
	return LevelIdle
}
