package gui

import (
	"context"
	"errors"
	"fmt"
	"image/color"
	"math"
	"net/url"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/widget"

	"mcptray/app"
	"mcptray/app/present"
	"mcptray/assets"
	"mcptray/control"
	"mcptray/registry"
	"mcptray/registry/tooltrust"
	"mcptray/supervisor"
)

// controller ties the engine to the tray and the main window. Its fields are
// used on the UI thread only, except eng (safe for any goroutine).
type controller struct {
	app     fyne.App
	eng     control.Engine
	cfgPath string
	env     *app.Env

	// held are the tools the approvals file holds back, as last read
	// (every heldPoll, window open or not); trust is that file, opened on
	// first use.
	held  []tooltrust.Held
	trust *tooltrust.Store
	// profileTrace is the window on a profile's trace, while it is open.
	profileTrace *profileTraceWindow
	// escapes are the open dialogs Escape closes, the top one last
	// (showEscapable).
	escapes []dialog.Dialog

	snap supervisor.Snapshot // as shown
	// engineSnap is the engine's snapshot last applied (snap is what was
	// made of it while the daemon is away).
	engineSnap supervisor.Snapshot
	problem    string    // the config problem last shown, to notify once per problem
	tray       *trayView // the tray menu on screen
	quitting   bool      // the app quits: the tray is left as it is (UI thread)
	// stopping is set while "Stop all servers and quit" stops the daemon:
	// the daemon going away is then no reason to start another (any
	// goroutine).
	stopping atomic.Bool
	// ender stops the app's goroutines and ends the process (off the UI
	// thread), once Quit was chosen and the trials are closing; nil:
	// Fyne's Quit (tests).
	ender     func()
	trayState health
	trayTip   string
	win       fyne.Window
	main      *mainWindow
	notify    *notifier
	form      *serverForm          // the Add/Edit form last opened (tests)
	adding    *addDialog           // the Add dialog's ways in, last opened (tests)
	openURL   func(*url.URL) error // opens files and links (nil: the app's OpenURL)
	tnext     uint64               // the next transition to notify (watch goroutine)

	// checkServer runs a one-off check of a server (the form's Test).
	checkServer func(s *registry.Server, cfg *registry.Config) supervisor.ServerState
	afterTest   func() // runs once a Test result shows (tests)

	// checking holds, during a Check all, each server still to answer with
	// its probe count before; checkStatus says how it goes.
	checking    map[string]int
	checkTotal  int // how many servers the Check all under way waits for
	checkStatus string
	lastError   string // the last error dialog's text (tests)

	// trials are the instances of servers started for calls from the
	// window, by name; history is the calls made, by server.
	trials          map[string]*trialRun
	history         map[string][]*callRecord
	lastElicitation *elicitation  // the last elicitation dialog (tests)
	lastConfirm     dialog.Dialog // the last confirmation before a destructive action (tests)
	afterCall       func()        // runs once a call's outcome shows (tests)
	afterElicit     func()        // runs once an elicitation dialog shows (tests)
	afterProgress   func()        // runs once a progress notification shows (tests)

	// now is the clock for uptimes (tests fix it).
	now func() time.Time
	// ui hands watch's updates to the UI thread (fyne.Do; tests give it
	// a UI thread of their own).
	ui func(func())

	// host is where the servers run; gw is the daemon's gateway by server
	// name, as last polled (nil when there is none to poll).
	host engineHost
	gw   map[string]control.GatewayServer
	// gwProfiles are the gateway's profiles, as last polled.
	gwProfiles []control.GatewayProfile
	// lost is the daemon gone while no daemon answers (nil while one
	// does); gwWake has the gateway poll run at once.
	lost   *daemonLoss
	gwWake chan struct{}

	// saveMu serialises read-modify-write of the config file.
	saveMu sync.Mutex
}

func newController(a fyne.App, eng control.Engine, cfgPath string, env *app.Env) *controller {
	c := &controller{app: a, eng: eng, cfgPath: cfgPath, env: env, trayState: -1, now: time.Now, ui: fyne.Do, tray: newTrayView(),
		gwWake: make(chan struct{}, 1)}
	c.checkServer = func(s *registry.Server, cfg *registry.Config) supervisor.ServerState {
		return app.CheckServer(context.Background(), cfg, s, 30*time.Second)
	}
	// One clock: the hold after a restart is set by the controller's and
	// read by the notifier's.
	c.notify = newNotifier(a, func() time.Time { return c.now() })
	return c
}

// setUp puts the tray in place (before the app runs).
func (c *controller) setUp() {
	// Notify what happens from now on, not what happened before.
	_, c.tnext = c.eng.Transitions(math.MaxUint64)
	c.apply(c.eng.Snapshot())
}

// refreshPeriod is the longest a change waits before the window and the
// tray show it, and how often the window's clock-bound texts (uptimes,
// countdowns) move on. Transitions, and servers added or removed, are
// shown at the next tick; changes of figures only (a probe's latency) are
// gathered into one update a period, so the cost of an idle window does not
// grow with the number of servers.
const refreshPeriod = time.Second

// watch turns engine changes into UI updates, ticking every interval, until
// ctx ends. While the window is on screen it also feeds the log view and the
// trace. At most one update waits for the UI thread at a time: when the UI
// thread falls behind (a slow tray host, a loaded machine), ticks queue
// nothing more, and the next update carries the newest state rather than a
// backlog of old ones shown one after another.
func (c *controller) watch(ctx context.Context, interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	var queued atomic.Bool // an update is queued and has not run yet
	dirty := false
	var last time.Time     // of the last update queued
	var lastHeld time.Time // of the last read of the tool approvals
	var names []string     // the servers of the last snapshot applied
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.eng.Changes():
			dirty = true
		case now := <-tick.C:
			if queued.Load() {
				continue
			}
			held := now.Sub(lastHeld) >= heldPoll
			if held {
				lastHeld = now
			}
			due := now.Sub(last) >= refreshPeriod
			var snap *supervisor.Snapshot
			var trs []supervisor.Transition
			if dirty {
				s := c.eng.Snapshot()
				var next uint64
				trs, next = c.eng.Transitions(c.tnext)
				if n := serverNames(s); due || len(trs) > 0 || !slices.Equal(n, names) {
					snap, names, c.tnext, dirty = &s, n, next, false
				}
			}
			clock := snap == nil && due
			if snap != nil || clock {
				last = now
			}
			queued.Store(true)
			c.ui(func() {
				defer queued.Store(false)
				if held {
					c.refreshHeld()
				}
				if snap != nil {
					c.apply(*snap)
					if len(trs) > 0 {
						c.notify.Observe(trs)
					}
				} else if clock && c.main != nil {
					c.main.showClock()
				}
				if c.main != nil && c.main.tabs.Selected() != nil && strings.HasPrefix(c.main.tabs.Selected().Text, "Log") {
					c.main.log.followScroll()
					go c.main.log.poll()
				}
				if c.profileTrace != nil {
					c.profileTrace.view.flush()
				}
				if c.main != nil {
					// The trace is followed while its tab is on screen.
					c.main.trace.follow(c.main.selected, c.main.tabs.Selected() != nil && c.main.tabs.Selected().Text == "Trace")
					c.main.trace.flush()
				}
			})
		}
	}
}

// serverNames are the names of a snapshot's servers, in order.
func serverNames(s supervisor.Snapshot) []string {
	out := make([]string, len(s.Servers))
	for i := range s.Servers {
		out[i] = s.Servers[i].Name
	}
	return out
}

// setTrayIcon sets the tray's icon, unless the app quits. A change that
// meets the systray's connection already closed (the app quit by a way
// of Fyne's own) is dropped; any other panic is not.
func (c *controller) setTrayIcon(desk desktop.App, h health) {
	if c.quitting {
		return
	}
	defer func() {
		if r := recover(); r != nil {
			if err, ok := r.(error); ok && strings.Contains(err.Error(), "connection closed") {
				return
			}
			panic(r)
		}
	}()
	desk.SetSystemTrayIcon(trayIcon(h))
}

// apply shows a snapshot everywhere (UI thread). While the daemon is
// away its servers show as starting again and the banner says the
// background service is restarting (followDaemon).
func (c *controller) apply(snap supervisor.Snapshot) {
	st := c.eng.Status()
	c.engineSnap = snap
	snap = c.followDaemon(snap, st)
	c.snap = snap
	if c.quitting {
		return
	}
	restarting, restartLevel := c.restartWarning()
	if restarting != "" {
		st.Unreachable = nil // said as restarting
	}
	warning, level := c.host.warning(engineWarning(st))
	menuWarning := warning
	warning, level = joinLines(restarting, warning), max(level, restartLevel)
	if desk, ok := c.app.(desktop.App); ok {
		h := max(aggregate(snap), level)
		if len(c.held) > 0 {
			h = max(h, healthWarn) // tools wait for the person
		}
		if h != c.trayState {
			c.trayState = h
			c.setTrayIcon(desk, h)
		}
		tip := trayTooltip(snap, warning)
		if len(c.held) > 0 {
			tip += "\n" + heldWords(len(c.held))
		}
		if restarting == "" {
			tip = c.host.tooltip(tip)
		}
		if tip != c.trayTip {
			c.trayTip = tip
			setTrayTooltip(tip)
		}
		model := trayModel(snap, c.clientCounts(), firstLine(menuWarning), c.trayActions())
		if restarting != "" {
			// In place of the counts, which would count the servers of a
			// daemon gone: the same item, so the menu keeps its shape.
			for i := range model {
				if model[i].key == "counts" {
					model[i].label = restartingLabel
				}
			}
		}
		c.tray.set(func() { desk.SetSystemTrayMenu(fyne.NewMenu("mcptray")) }, model)
	}
	c.followCheck(snap)
	if c.main != nil {
		c.main.Update(snap)
		// The window shows a config problem in its own banner, with the
		// line and a way to open the file; the tray says it in one line.
		wst := st
		problem := wst.ConfigProblem
		wst.ConfigProblem = nil
		w, _ := c.host.warning(engineWarning(wst))
		c.main.setWarning(joinLines(restarting, w))
		if restarting != "" {
			showText(c.main.hostLine, "")
		} else {
			showText(c.main.hostLine, c.host.line())
		}
		visible := c.main.config.banner.Visible()
		c.main.config.Set(problem)
		if visible != c.main.config.banner.Visible() {
			c.main.content.Refresh() // the banner takes or gives back its room
		}
	}
	if p := configProblem(st); p != c.problem {
		c.problem = p
		if p != "" {
			c.app.SendNotification(fyne.NewNotification("mcptray: servers.toml not applied", p))
		}
	}
}

// joinLines joins the non-empty texts, one per line.
func joinLines(texts ...string) string {
	var lines []string
	for _, t := range texts {
		if t != "" {
			lines = append(lines, t)
		}
	}
	return strings.Join(lines, "\n")
}

// engineWarning is the banner above everything, and how it colours the
// tray: the daemon this app is attached to stopped answering (red), or the
// config file on disk does not load or is not followed (amber). An
// in-process engine always answers.
func engineWarning(st control.Status) (string, health) {
	var lines []string
	level := healthIdle
	if st.Unreachable != nil {
		lines = append(lines, "The daemon is not answering: showing its last known state")
		level = healthError
	}
	if p := configProblem(st); p != "" {
		lines = append(lines, "servers.toml does not load: "+p, "The servers run as the file last loaded. Fix the file and save it: it is applied at once.")
		level = max(level, healthWarn)
	}
	if st.WatchProblem != "" {
		lines = append(lines, "Edits to servers.toml are not applied as they are saved ("+st.WatchProblem+"): use Reload config after an edit.")
		level = max(level, healthWarn)
	}
	return strings.Join(lines, "\n"), level
}

// configProblem is where and why the config file does not load, "" when it
// loads.
func configProblem(st control.Status) string {
	if st.ConfigProblem == nil {
		return ""
	}
	return st.ConfigProblem.String()
}

func menuLabels(m *fyne.Menu) []string {
	var out []string
	var walk func(m *fyne.Menu, prefix string)
	walk = func(m *fyne.Menu, prefix string) {
		for _, it := range m.Items {
			out = append(out, fmt.Sprintf("%s%s|%v", prefix, it.Label, it.Disabled))
			if it.ChildMenu != nil {
				walk(it.ChildMenu, prefix+it.Label+">")
			}
		}
	}
	walk(m, "")
	return out
}

func (c *controller) trayActions() trayActions {
	return trayActions{
		restart:     c.restart,
		startStop:   c.startStop,
		showDetails: func(name string) { c.openServer(name, "Overview") },
		viewLog:     func(name string) { c.openServer(name, "Log") },
		copyConfig:  c.copyConfig,
		signIn:      c.signIn,
		openMain:    c.openMain,
		checkAll:    c.checkAll,
		reload:      c.reloadConfig,
		quit:        c.quit,
		stopAll:     c.stopAllAction(),
		held:        len(c.held),
		reviewHeld:  c.reviewHeld,
	}
}

// commandTimeout bounds one engine command from the UI.
const commandTimeout = 30 * time.Second

// do runs an engine command off the UI thread and reports a failure.
func (c *controller) do(what string, fn func(ctx context.Context) error) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
		defer cancel()
		if err := fn(ctx); err != nil {
			//lint:ignore ST1005 a sentence the error dialog shows as it is
			fyne.Do(func() { c.showError(fmt.Errorf("Could not %s: %w", what, err)) })
		}
	}()
}

// showError shows a failure as written: Fyne's error dialog would
// capitalise its first letter, and it often starts with a server's name.
func (c *controller) showError(err error) {
	if c.win != nil && c.win.Content() != nil {
		msg := widget.NewLabel(err.Error())
		msg.Wrapping = fyne.TextWrapWord
		width := canvas.NewRectangle(color.Transparent)
		width.SetMinSize(fyne.NewSize(460, 0)) // the width the text wraps at
		d := dialog.NewCustom("mcptray could not do that", "Close", container.NewVBox(width, msg), c.win)
		c.showEscapable(d, nil)
		c.lastError = err.Error()
		return
	}
	c.app.SendNotification(fyne.NewNotification("mcptray", sentence(err.Error())))
}

func (c *controller) restart(name string) {
	c.do("restart "+name, func(ctx context.Context) error { return c.eng.Restart(ctx, name) })
}

func (c *controller) startStop(name string, start bool) {
	if start {
		c.do("start "+name, func(ctx context.Context) error { return c.eng.Start(ctx, name) })
	} else {
		c.do("stop "+name, func(ctx context.Context) error { return c.eng.Stop(ctx, name) })
	}
}

// checkAll probes every server with a health check up now and says,
// under the list, how far it got ("12 of 27 answered") and then how it
// went.
func (c *controller) checkAll() {
	c.checking = map[string]int{}
	for i := range c.snap.Servers {
		if s := &c.snap.Servers[i]; checkable(s) {
			c.checking[s.Name] = s.Probes.Count + s.Probes.ConsecutiveFailures
		}
	}
	c.checkTotal = len(c.checking)
	if len(c.checking) == 0 {
		c.checking = nil
		c.setCheckStatus("Nothing is running to check.")
		return
	}
	c.setCheckStatus(fmt.Sprintf("Checking %s…", present.Plural(len(c.checking), "server")))
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
		defer cancel()
		if err := c.eng.CheckNow(ctx, ""); err != nil {
			fyne.Do(func() {
				c.checking = nil
				c.setCheckStatus("Check all failed: " + err.Error())
			})
		}
	}()
}

// checkable is whether a Check all waits for a server's answer: up, with
// a health check that probes it. A starting server is probed only once
// ready (one that never becomes ready never is), and one without a
// health check never is.
func checkable(s *supervisor.ServerState) bool {
	switch s.State {
	case supervisor.StateReady, supervisor.StateDegraded, supervisor.StateUnhealthy:
		return true
	}
	return false
}

// followCheck notes the servers a Check all is waiting for that have
// answered (or are no longer up to be probed), says how many of them have
// so far, and says when every one has.
func (c *controller) followCheck(snap supervisor.Snapshot) {
	if c.checking == nil {
		return
	}
	for name, before := range c.checking {
		s := snap.Server(name)
		if s == nil || !checkable(s) || s.Probes.Count+s.Probes.ConsecutiveFailures > before {
			delete(c.checking, name)
		}
	}
	if len(c.checking) > 0 {
		if done := c.checkTotal - len(c.checking); done > 0 {
			c.setCheckStatus(fmt.Sprintf("Checking servers: %d of %d answered…", done, c.checkTotal))
		}
		return
	}
	c.checking = nil
	c.setCheckStatus("Checked at " + c.now().Local().Format("15:04:05") + ": " + countSummary(snap) + ".")
}

func (c *controller) setCheckStatus(text string) {
	c.checkStatus = text
	if c.main != nil {
		c.main.setCheckStatus(text, c.checking != nil)
	}
}

// reloadConfig makes the engine read its config file again (the tray's
// Reload config) and says what in the file is wrong.
func (c *controller) reloadConfig() {
	c.do("reload", func(ctx context.Context) error {
		res, err := c.eng.Reload(ctx)
		if err != nil {
			return err
		}
		if res.Errors > 0 {
			return errors.New(strings.Join(res.Diagnostics, "\n"))
		}
		return nil
	})
}

// openMain shows the main window, creating it on first use (UI thread).
func (c *controller) openMain() {
	if c.win == nil {
		c.win = c.app.NewWindow("mcptray")
		c.win.SetIcon(assets.AppIcon)
		c.main = newMainWindow(c, c.win)
		c.main.config.Set(c.eng.Status().ConfigProblem)
		c.main.setCheckStatus(c.checkStatus, c.checking != nil)
		c.win.SetContent(container.New(sizeCap{max: fyne.NewSize(720, 480)}, c.main.content))
		c.main.installKeys()
		c.win.SetOnDropped(func(_ fyne.Position, uris []fyne.URI) { c.dropped(uris) })
		c.win.Resize(fyne.NewSize(1100, 700))
		// mcptray lives in the tray: closing the window ends it and gives
		// back what it held (its widgets, textures, the log it showed);
		// opening it again builds it anew.
		if _, ok := c.app.(desktop.App); ok {
			c.win.SetCloseIntercept(c.closeMain)
		}
		c.main.Update(c.snap)
	}
	c.win.Show()
	c.win.RequestFocus()
}

// showEscapable shows d, which Escape closes as its Close button does;
// onClosed, when set, runs as it closes (UI thread).
func (c *controller) showEscapable(d dialog.Dialog, onClosed func()) {
	c.escapes = append(c.escapes, d)
	d.SetOnClosed(func() {
		if i := slices.Index(c.escapes, d); i >= 0 {
			c.escapes = slices.Delete(c.escapes, i, i+1)
		}
		if onClosed != nil {
			onClosed()
		}
	})
	d.Show()
}

// escapeTop closes the dialog on top, as Escape does (a confirmation
// answers "no"); false when none is open (UI thread).
func (c *controller) escapeTop() bool {
	n := len(c.escapes)
	if n == 0 {
		return false
	}
	c.escapes[n-1].Hide()
	return true
}

// onTop reports whether d is the dialog on top of those Escape closes.
func (c *controller) onTop(d dialog.Dialog) bool {
	return len(c.escapes) > 0 && c.escapes[len(c.escapes)-1] == d
}

// closeMain closes the main window and releases it (UI thread).
func (c *controller) closeMain() {
	if c.win == nil {
		return
	}
	w := c.win
	c.main.trace.stop()
	c.win, c.main, c.form, c.adding, c.escapes = nil, nil, nil, nil, nil
	w.Close()
	stopped := c.stopTrials()
	go func() {
		stopped()
		runtime.GC()
		debug.FreeOSMemory()
		trimHeap()
	}()
}

// openServer opens the main window on a server's tab.
func (c *controller) openServer(name, tab string) {
	c.openMain()
	c.main.selectServer(name)
	c.main.showTab(tab)
}
