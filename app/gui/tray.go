package gui

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"

	"mcptray/app/present"
	"mcptray/assets"
	"mcptray/supervisor"
)

// trayActions are what the tray menu's items do. Each runs on the UI thread
// and must hand slow work to a goroutine.
type trayActions struct {
	restart     func(name string)
	startStop   func(name string, start bool)
	showDetails func(name string)
	viewLog     func(name string)
	copyConfig  func(name, clientID string)
	signIn      func(name string)
	openMain    func()
	checkAll    func()
	reload      func()
	quit        func()
	// stopAll stops the daemon's servers and quits; nil when the servers
	// run in this app (then Quit stops them).
	stopAll func()
}

// copyClients lists the AI clients offered under "Copy config for"
// (id, label); set by the client-config code.
var copyClients = func() [][2]string { return nil }

// buildTrayMenu renders a snapshot as the tray menu: a warning first when
// the engine cannot be reached, the count summary, then one item per server
// (failing ones first) with its state in words, its client sessions
// (clients, by server name) and a submenu of actions, then the app's own
// items and Quit.
func buildTrayMenu(snap supervisor.Snapshot, clients map[string]int, warning string, act trayActions) *fyne.Menu {
	var items []*fyne.MenuItem
	if warning != "" {
		w := fyne.NewMenuItem(warning, nil)
		w.Disabled = true
		items = append(items, w, fyne.NewMenuItemSeparator())
	}
	if len(snap.Servers) > 0 {
		sum := fyne.NewMenuItem(countSummary(snap), nil)
		sum.Disabled = true
		items = append(items, sum, fyne.NewMenuItemSeparator())
	}
	for _, i := range problemsFirst(snap) {
		s := &snap.Servers[i]
		name := s.Name
		if n, ok := clients[name]; ok {
			// The gateway's count of sessions, polled: the one the
			// Clients tab lists.
			st := *s
			st.Clients = n
			s = &st
		}
		item := fyne.NewMenuItem(present.Summary(s), func() { act.showDetails(name) })
		var sub []*fyne.MenuItem
		if needsSignIn(s) && act.signIn != nil {
			sub = append(sub, fyne.NewMenuItem("Sign in…", func() { act.signIn(name) }))
		}
		if s.State.Alive() || s.State == supervisor.StateBackoff {
			sub = append(sub, fyne.NewMenuItem("Restart", func() { act.restart(name) }),
				fyne.NewMenuItem("Stop", func() { act.startStop(name, false) }))
		} else {
			// Not running: Start is the one way to run it again.
			start := fyne.NewMenuItem("Start", func() { act.startStop(name, true) })
			start.Disabled = s.Server != nil && !s.Server.Valid()
			sub = append(sub, start)
		}
		sub = append(sub,
			fyne.NewMenuItem("Show details", func() { act.showDetails(name) }),
			fyne.NewMenuItem("View log", func() { act.viewLog(name) }),
		)
		if cl := copyClients(); len(cl) > 0 {
			var clients []*fyne.MenuItem
			for _, c := range cl {
				id := c[0]
				clients = append(clients, fyne.NewMenuItem(c[1], func() { act.copyConfig(name, id) }))
			}
			copyItem := fyne.NewMenuItem("Copy config for", nil)
			copyItem.ChildMenu = fyne.NewMenu("", clients...)
			sub = append(sub, copyItem)
		}
		item.ChildMenu = fyne.NewMenu("", sub...)
		items = append(items, item)
	}
	if len(items) == 0 {
		none := fyne.NewMenuItem("No servers configured", nil)
		none.Disabled = true
		items = append(items, none)
	}
	items = append(items,
		fyne.NewMenuItemSeparator(),
		fyne.NewMenuItem("Open mcptray", act.openMain),
		fyne.NewMenuItem("Check all now", act.checkAll),
		fyne.NewMenuItem("Reload config", act.reload),
		fyne.NewMenuItemSeparator(),
	)
	if act.stopAll != nil {
		items = append(items, fyne.NewMenuItem("Stop all servers and quit", act.stopAll))
	}
	items = append(items, quitItem(act.quit, act.stopAll != nil))
	return fyne.NewMenu("mcptray", items...)
}

// trayTooltip is what hovering the tray icon says: the counts, and by name
// the servers that fail or are being retried.
func trayTooltip(snap supervisor.Snapshot, warning string) string {
	lines := []string{"mcptray: " + countSummary(snap)}
	if warning != "" {
		lines = append([]string{warning}, lines...)
	}
	var failing []string
	for _, i := range problemsFirst(snap) {
		s := &snap.Servers[i]
		if rank(s) > 1 {
			break
		}
		failing = append(failing, present.Summary(s))
	}
	if len(failing) > 5 {
		failing = append(failing[:5], fmt.Sprintf("and %d more", len(failing)-5))
	}
	return strings.Join(append(lines, failing...), "\n")
}

// quitItem is the tray's Quit, which ends the app: with the servers in the
// daemon (keep) they go on serving the AI clients, and the label says so;
// otherwise they stop with the app. Fyne adds a Quit of its own only on a
// menu's second render, and binds actions before that, so each new menu
// carries its own.
func quitItem(quit func(), keep bool) *fyne.MenuItem {
	label := "Quit"
	if keep {
		label = "Quit (servers keep running for your AI clients)"
	}
	q := fyne.NewMenuItem(label, quit)
	q.IsQuit = true
	return q
}

// trayIcon is the icon for an aggregate health.
func trayIcon(h health) fyne.Resource {
	switch h {
	case healthReady:
		return assets.TrayReady
	case healthWarn:
		return assets.TrayWarn
	case healthError:
		return assets.TrayError
	}
	return assets.TrayIdle
}
