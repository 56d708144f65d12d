package gui

import (
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"

	"mcptray/healthcheck"
	"mcptray/supervisor"
)

// event is a change worth a desktop notification.
type event struct {
	server    string
	title     string
	body      string
	recovered bool // good news: rate-limited apart from the bad
}

// events turns the engine's transitions into notifications. The engine
// decides what is news (a crash, a crash loop, a recovery, flapping); the
// app only words it.
func events(trs []supervisor.Transition) []event {
	var out []event
	for _, tr := range trs {
		n, reason := tr.Server, tr.Reason
		switch tr.Event {
		case supervisor.EventCrashed:
			if byMcptray(tr.Code) {
				// mcptray ended it (a handshake or probe deadline): it
				// did not crash.
				out = append(out, event{server: n, title: n + " stopped by mcptray: " + string(tr.Code), body: reason})
			} else {
				out = append(out, event{server: n, title: n + " crashed", body: reason})
			}
		case supervisor.EventDisconnected:
			out = append(out, event{server: n, title: n + " disconnected", body: reason})
		case supervisor.EventUnhealthy:
			out = append(out, event{server: n, title: n + " is unhealthy", body: reason})
		case supervisor.EventCrashLooping:
			out = append(out, event{server: n, title: n + " is crash-looping", body: reason + ". mcptray stopped restarting it; start it again once fixed."})
		case supervisor.EventFailed:
			out = append(out, event{server: n, title: n + " cannot start", body: reason})
		case supervisor.EventSignIn:
			out = append(out, event{server: n, title: n + " needs you to sign in", body: "Use Sign in in its menu; mcptray keeps the tokens and refreshes them."})
		case supervisor.EventRecovered:
			out = append(out, event{server: n, title: n + " recovered", body: reason, recovered: true})
		case supervisor.EventFlapping:
			out = append(out, event{server: n, title: n + " keeps going down", body: "It is up again, but it went down more than once in the last minutes; mcptray goes on restarting it.", recovered: true})
		}
	}
	return out
}

// byMcptray is whether a process with this diagnosis was ended by mcptray
// (a deadline it missed), rather than going down by itself.
func byMcptray(code healthcheck.Code) bool {
	return code != "" && code != healthcheck.CodeExitedDuringStartup && code != healthcheck.CodeCrashed
}

// How long a notification stays on screen: bad news a little longer.
const (
	expireBad  = 10 * time.Second
	expireGood = 5 * time.Second
)

// flapOnce is how long after a "keeps going down" the same server's next one
// is not sent: once said, the tray and the window keep showing it.
const flapOnce = time.Hour

// notice is one desktop notification as sent: a server's replaces the one
// before it.
type notice struct {
	server string
	title  string
	body   string
	expire time.Duration
}

// notifier sends desktop notifications, at most one per server per
// perServer and burst per minute overall, and none when switched off.
type notifier struct {
	app       fyne.App
	now       func() time.Time
	perServer time.Duration
	burst     int
	last      map[string]time.Time
	flapped   map[string]time.Time // when each server's "keeps going down" was sent
	recent    []time.Time
	send      func(notice) // shows one (the session's notification service, or Fyne's)
	sentMu    sync.Mutex   // guards sent, which tests read from their goroutine
	sent      []event      // the last notifications sent, newest last
	// Until quietUntil (after the background service restarted), a
	// server's news is not sent when it only repeats what the server was
	// before (before: its level then): see serviceRestarted.
	quietUntil time.Time
	before     map[string]supervisor.Level
}

// serviceKey is the background service's own notifications' key: each
// replaces the one before it.
const serviceKey = "\x00background service"

const prefNotifications = "notifications"

func newNotifier(a fyne.App, now func() time.Time) *notifier {
	if now == nil {
		now = time.Now
	}
	return &notifier{app: a, now: now, perServer: 20 * time.Second, burst: 5, last: map[string]time.Time{},
		flapped: map[string]time.Time{}, send: desktopNotifier(a)}
}

// Enabled reports whether notifications are on (a stored preference).
func (n *notifier) Enabled() bool {
	return n.app.Preferences().BoolWithFallback(prefNotifications, true)
}

// SetEnabled switches notifications on or off.
func (n *notifier) SetEnabled(on bool) {
	n.app.Preferences().SetBool(prefNotifications, on)
}

// Observe notifies the news in the engine's transitions (UI thread).
func (n *notifier) Observe(trs []supervisor.Transition) {
	if !n.Enabled() {
		return
	}
	now := n.now()
	for _, ev := range events(trs) {
		if now.Before(n.quietUntil) && (ev.recovered || n.before[ev.server] != supervisor.LevelOK) {
			// The new daemon starts every server anew: one that was
			// failing fails again, one that was up comes back. Not news.
			continue
		}
		// A crash and the recovery that follows are both worth saying; a
		// server going down faster than perServer is not, each time.
		key := ev.server + map[bool]string{true: "+", false: "-"}[ev.recovered]
		if t, ok := n.last[key]; ok && now.Sub(t) < n.perServer {
			continue
		}
		flap := strings.HasSuffix(ev.title, " keeps going down")
		if t, ok := n.flapped[ev.server]; ok && flap && now.Sub(t) < flapOnce {
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
		if flap {
			n.flapped[ev.server] = now
		}
		n.recent = append(n.recent, now)
		n.sentMu.Lock()
		if n.sent = append(n.sent, ev); len(n.sent) > 50 {
			n.sent = n.sent[1:]
		}
		n.sentMu.Unlock()
		expire := expireBad
		if ev.recovered {
			expire = expireGood
		}
		n.send(notice{server: ev.server, title: ev.title, body: asWritten(ev.body), expire: expire})
	}
}

// quiet holds, until quietUntil, a server's news that only repeats what
// it was before (its level under the old daemon); a zero quietUntil ends
// the hold.
func (n *notifier) quiet(before map[string]supervisor.Level, quietUntil time.Time) {
	n.before, n.quietUntil = before, quietUntil
}

// serviceRestarted says, once, that the background service was restarted
// and why (body); until quietUntil a server's news is sent only when it is
// news against before, each server's level under the old daemon.
func (n *notifier) serviceRestarted(body string, before map[string]supervisor.Level, quietUntil time.Time) {
	n.quiet(before, quietUntil)
	if !n.Enabled() {
		return
	}
	ev := event{server: serviceKey, title: "Background service restarted", body: body}
	n.sentMu.Lock()
	if n.sent = append(n.sent, ev); len(n.sent) > 50 {
		n.sent = n.sent[1:]
	}
	n.sentMu.Unlock()
	n.send(notice{server: serviceKey, title: ev.title, body: asWritten(ev.body), expire: expireBad})
}

// sentTitles are the titles of the notifications sent so far.
func (n *notifier) sentTitles() []string {
	n.sentMu.Lock()
	defer n.sentMu.Unlock()
	var out []string
	for _, ev := range n.sent {
		out = append(out, ev.title)
	}
	return out
}

// asWritten ends a text as a sentence without changing its first letter:
// it often starts with a name ("mcptray …", a server's).
func asWritten(s string) string {
	s = strings.TrimSpace(s)
	if s != "" && !strings.ContainsAny(s[len(s)-1:], ".!?…") {
		s += "."
	}
	return s
}

// fyneNotifier shows a notice through Fyne (no expiry, no replacing: what
// Fyne offers where the session has no notification service over D-Bus).
func fyneNotifier(a fyne.App) func(notice) {
	return func(n notice) { a.SendNotification(fyne.NewNotification(n.title, n.body)) }
}
