package gui

import (
	"time"

	"fyne.io/fyne/v2"

	"mcptray/app"
	"mcptray/supervisor"
)

// event is a change worth a desktop notification.
type event struct {
	server    string
	title     string
	body      string
	recovered bool // good news: rate-limited apart from the bad
}

// transitions lists the notable changes between two snapshots: a crash, a
// crash loop, a server turning unhealthy.
func transitions(prev, next supervisor.Snapshot) []event {
	var out []event
	for i := range next.Servers {
		n := &next.Servers[i]
		p := prev.Server(n.Name)
		if p == nil || p.State == n.State {
			continue
		}
		reason := n.Reason
		if n.Diagnosis != nil {
			reason = n.Diagnosis.Message
		}
		switch n.State {
		case supervisor.StateCrashLooping:
			out = append(out, event{server: n.Name, title: n.Name + " is crash-looping", body: reason + " mcptray stopped restarting it; start it again once fixed."})
		case supervisor.StateBackoff:
			if p.State.Alive() && p.State != supervisor.StateStopping {
				what := "crashed"
				if n.LastExit != nil {
					what = n.LastExit.Describe()
				}
				out = append(out, event{server: n.Name, title: n.Name + " " + what, body: reason})
			}
		case supervisor.StateUnhealthy:
			out = append(out, event{server: n.Name, title: n.Name + " is unhealthy", body: reason})
		}
	}
	return out
}

// recoveries lists the servers that are ready again after being down, and
// keeps down (the servers seen in a bad state) up to date. It looks at each
// snapshot rather than at transitions, because snapshots can skip states.
func recoveries(next supervisor.Snapshot, down map[string]bool) []event {
	var out []event
	for i := range next.Servers {
		n := &next.Servers[i]
		switch {
		case wasBad(n.State) && n.State != supervisor.StateDegraded:
			down[n.Name] = true
		case n.State == supervisor.StateReady && down[n.Name]:
			delete(down, n.Name)
			out = append(out, event{server: n.Name, title: n.Name + " recovered", body: app.StateDetail(n), recovered: true})
		case n.State == supervisor.StateStopped:
			delete(down, n.Name) // stopped on purpose: nothing to recover from
		}
	}
	return out
}

func wasBad(s supervisor.State) bool {
	switch s {
	case supervisor.StateBackoff, supervisor.StateUnhealthy, supervisor.StateCrashLooping, supervisor.StateFailed, supervisor.StateDegraded:
		return true
	}
	return false
}

// notifier sends desktop notifications, at most one per server per
// perServer and burst per minute overall, and none when switched off.
type notifier struct {
	app       fyne.App
	now       func() time.Time
	perServer time.Duration
	burst     int
	last      map[string]time.Time
	down      map[string]bool // servers seen failing, not yet ready again
	recent    []time.Time
	sent      []event // the last notifications sent, newest last
}

const prefNotifications = "notifications"

func newNotifier(a fyne.App, now func() time.Time) *notifier {
	if now == nil {
		now = time.Now
	}
	return &notifier{app: a, now: now, perServer: 20 * time.Second, burst: 5, last: map[string]time.Time{}, down: map[string]bool{}}
}

// Enabled reports whether notifications are on (a stored preference).
func (n *notifier) Enabled() bool {
	return n.app.Preferences().BoolWithFallback(prefNotifications, true)
}

// SetEnabled switches notifications on or off.
func (n *notifier) SetEnabled(on bool) {
	n.app.Preferences().SetBool(prefNotifications, on)
}

// Observe notifies the notable changes from prev to next (UI thread).
func (n *notifier) Observe(prev, next supervisor.Snapshot) {
	if !n.Enabled() {
		return
	}
	now := n.now()
	recoveries(prev, n.down) // already seen: only marks what was down
	for _, ev := range append(transitions(prev, next), recoveries(next, n.down)...) {
		// A crash and the recovery that follows are both worth saying; a
		// server flapping faster than perServer is not, each time.
		key := ev.server + map[bool]string{true: "+", false: "-"}[ev.recovered]
		if t, ok := n.last[key]; ok && now.Sub(t) < n.perServer {
			continue
		}
		kept := n.recent[:0]
		for _, t := range n.recent {
			if now.Sub(t) < time.Minute {
				kept = append(kept, t)
			}
		}
		n.recent = kept
		if len(n.recent) >= n.burst {
			continue
		}
		n.last[key] = now
		n.recent = append(n.recent, now)
		if n.sent = append(n.sent, ev); len(n.sent) > 50 {
			n.sent = n.sent[1:]
		}
		n.app.SendNotification(fyne.NewNotification(ev.title, sentence(ev.body)))
	}
}
