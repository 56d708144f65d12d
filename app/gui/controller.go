package gui

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"

	"mcptray/app"
	"mcptray/assets"
	"mcptray/control"
	"mcptray/supervisor"
)

// controller ties the engine to the tray and the main window. Its fields are
// used on the UI thread only, except eng (safe for any goroutine).
type controller struct {
	app     fyne.App
	eng     control.Engine
	cfgPath string
	env     *app.Env

	snap      supervisor.Snapshot
	problem   string   // the config problem last shown, to notify once per problem
	trayMenu  []string // labels of the menu last set, to skip identical rebuilds
	trayState health
	win       fyne.Window
	main      *mainWindow
	notify    *notifier
	tnext     uint64 // the next transition to notify (watch goroutine)

	// now is the clock for uptimes (tests fix it).
	now func() time.Time

	// saveMu serialises read-modify-write of the config file.
	saveMu sync.Mutex
}

func newController(a fyne.App, eng control.Engine, cfgPath string, env *app.Env) *controller {
	c := &controller{app: a, eng: eng, cfgPath: cfgPath, env: env, trayState: -1, now: time.Now}
	c.notify = newNotifier(a, nil)
	return c
}

// setUp puts the tray in place (before the app runs).
func (c *controller) setUp() {
	// Notify what happens from now on, not what happened before.
	_, c.tnext = c.eng.Transitions(math.MaxUint64)
	c.apply(c.eng.Snapshot())
}

// watch turns engine changes into UI updates, at most every interval, until
// ctx ends. While the window is on screen it also feeds the log view and,
// once a second, refreshes the details (uptimes move on their own).
func (c *controller) watch(ctx context.Context, interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	dirty := false
	lastRefresh := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.eng.Changes():
			dirty = true
		case now := <-tick.C:
			if dirty || now.Sub(lastRefresh) >= time.Second {
				dirty = false
				lastRefresh = now
				snap := c.eng.Snapshot()
				var trs []supervisor.Transition
				trs, c.tnext = c.eng.Transitions(c.tnext)
				fyne.Do(func() {
					c.apply(snap)
					if len(trs) > 0 {
						c.notify.Observe(trs)
					}
				})
			}
			fyne.Do(func() {
				if c.main != nil && c.main.tabs.Selected() != nil && strings.HasPrefix(c.main.tabs.Selected().Text, "Log") {
					go c.main.log.poll()
				}
			})
		}
	}
}

// apply shows a snapshot everywhere (UI thread).
func (c *controller) apply(snap supervisor.Snapshot) {
	c.snap = snap
	warning, level := engineWarning(c.eng.Status())
	if desk, ok := c.app.(desktop.App); ok {
		h := max(aggregate(snap), level)
		if h != c.trayState {
			c.trayState = h
			desk.SetSystemTrayIcon(trayIcon(h))
		}
		menu := buildTrayMenu(snap, firstLine(warning), c.trayActions())
		if labels := menuLabels(menu); !slices.Equal(labels, c.trayMenu) {
			c.trayMenu = labels
			desk.SetSystemTrayMenu(menu)
		}
	}
	if c.main != nil {
		c.main.Update(snap)
		c.main.setWarning(warning)
	}
	if p := configProblem(c.eng.Status()); p != c.problem {
		c.problem = p
		if p != "" {
			c.app.SendNotification(fyne.NewNotification("mcptray: servers.toml not applied", p))
		}
	}
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
		quit:        c.app.Quit,
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
			fyne.Do(func() { c.showError(fmt.Errorf("%s: %w", what, err)) })
		}
	}()
}

func (c *controller) showError(err error) {
	if c.win != nil && c.win.Content() != nil {
		dialog.ShowError(err, c.win)
		return
	}
	c.app.SendNotification(fyne.NewNotification("mcptray", err.Error()))
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

func (c *controller) checkAll() {
	c.do("check", func(ctx context.Context) error { return c.eng.CheckNow(ctx, "") })
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
		c.win.SetContent(c.main.content)
		c.win.Resize(fyne.NewSize(1100, 700))
		// Closing hides: mcptray lives in the tray.
		if _, ok := c.app.(desktop.App); ok {
			c.win.SetCloseIntercept(c.win.Hide)
		}
		c.main.Update(c.snap)
	}
	c.win.Show()
	c.win.RequestFocus()
}

// openServer opens the main window on a server's tab.
func (c *controller) openServer(name, tab string) {
	c.openMain()
	c.main.selectServer(name)
	c.main.showTab(tab)
}
