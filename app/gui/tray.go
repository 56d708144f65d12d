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
	// held is how many tools wait for approval; reviewHeld shows them.
	held       int
	reviewHeld func()
}

// copyClients lists the AI clients offered under "Copy config for"
// (id, label); set by the client-config code.
var copyClients = func() [][2]string { return nil }

// trayNode is one item of the tray menu. key names what it stands for (a
// server in one of its places, an action), so an item keeps its place and
// its id for as long as it stands for the same thing; only its label or
// state changes. A hidden item is in the menu but not on screen: every
// place a server can take (among the problems, among the healthy ones) is
// in the menu, and the server is shown in one, so a server changing place
// changes no item's id and a click in a host's menu read before the change
// still reaches its item.
type trayNode struct {
	key      string
	label    string
	disabled bool
	hidden   bool
	sep      bool
	isQuit   bool
	action   func()
	children []trayNode
}

// trayInline is how many servers the tray lists at its top level; with more,
// the healthy ones go in one submenu, so Quit stays on screen.
const trayInline = 6

// trayProblemsInline is how many problems the top level lists with many
// servers; the rest go in a submenu of their own.
const trayProblemsInline = 8

// buildTrayMenu is the tray menu as Fyne would show it (the tests read it).
func buildTrayMenu(snap supervisor.Snapshot, clients map[string]int, warning string, act trayActions) *fyne.Menu {
	return fyne.NewMenu("mcptray", fyneItems(trayModel(snap, clients, warning, act))...)
}

func fyneItems(nodes []trayNode) []*fyne.MenuItem {
	var out []*fyne.MenuItem
	for _, n := range nodes {
		if n.hidden {
			continue
		}
		if n.sep {
			out = append(out, fyne.NewMenuItemSeparator())
			continue
		}
		it := fyne.NewMenuItem(n.label, n.action)
		it.Disabled = n.disabled
		it.IsQuit = n.isQuit
		if len(n.children) > 0 {
			it.ChildMenu = fyne.NewMenu("", fyneItems(n.children)...)
		}
		out = append(out, it)
	}
	return out
}

// trayProblem is whether a server belongs among the problems: failing,
// retried, or starting again after it went down.
func trayProblem(s *supervisor.ServerState) bool {
	return rank(s) <= 1
}

// trayModel renders a snapshot as the tray menu: Open mcptray first, a
// warning when the engine cannot be reached, the count summary, then the
// servers with their state in words (no figure that moves on its own), their
// client sessions (clients, by server name) and a submenu of actions; with
// more than trayInline servers the problems stay at the top level and the
// healthy ones go in one submenu. Then the app's own items, Stop all and
// Quit. Items that come and go (the warning, the tools held, Stop all, a
// server's places) are hidden rather than left out: the menu's shape
// changes only with the set of servers.
func trayModel(snap supervisor.Snapshot, clients map[string]int, warning string, act trayActions) []trayNode {
	items := []trayNode{
		{key: "open", label: "Open mcptray", action: act.openMain},
		{key: "warning", label: warning, disabled: true, hidden: warning == ""},
	}
	if len(snap.Servers) > 0 {
		items = append(items, trayNode{key: "counts", label: countSummary(snap), disabled: true})
	}
	items = append(items,
		trayNode{key: "held", label: heldWords(act.held) + "…", action: act.reviewHeld, hidden: act.held == 0},
		trayNode{sep: true})
	// Problems first, then the rest, each in config order: a server
	// changes place only when it becomes or stops being a problem.
	servers := make([]trayNode, len(snap.Servers))
	problem := make([]bool, len(snap.Servers))
	problems := 0
	for i := range snap.Servers {
		s := &snap.Servers[i]
		if n, ok := clients[s.Name]; ok {
			// The gateway's count of sessions, polled: the one the
			// Clients tab lists.
			st := *s
			st.Clients = n
			s = &st
		}
		servers[i], problem[i] = trayServer(s, act), trayProblem(s)
		if problem[i] {
			problems++
		}
	}
	// place lists every server, shown where show says it is (nth counts
	// the problems before it). The places share each server's submenu.
	place := func(prefix string, show func(i, nth int) bool) []trayNode {
		out := make([]trayNode, 0, len(servers))
		nth := 0
		for i, n := range servers {
			n.key = prefix + strings.TrimPrefix(n.key, "server:")
			n.hidden = !show(i, nth)
			if problem[i] {
				nth++
			}
			out = append(out, n)
		}
		return out
	}
	isProblem := func(i, _ int) bool { return problem[i] }
	isHealthy := func(i, _ int) bool { return !problem[i] }
	if len(servers) <= trayInline {
		items = append(items, place("server:", isProblem)...)
		items = append(items, place("ok:", isHealthy)...)
	} else {
		items = append(items, place("server:", func(i, nth int) bool { return problem[i] && nth < trayProblemsInline })...)
		more := max(problems-trayProblemsInline, 0)
		items = append(items,
			trayNode{key: "more-problems", label: present.Plural(more, "more problem"), hidden: more == 0,
				children: place("server:", func(i, nth int) bool { return problem[i] && nth >= trayProblemsInline })},
			trayNode{key: "healthy", label: "Healthy: " + present.Plural(len(servers)-problems, "server"), hidden: problems == len(servers),
				children: place("server:", isHealthy)})
	}
	if len(snap.Servers) == 0 {
		items = append(items, trayNode{key: "none", label: "No servers configured", disabled: true})
	}
	return append(items,
		trayNode{sep: true},
		trayNode{key: "check", label: "Check all now", action: act.checkAll},
		trayNode{key: "reload", label: "Reload config", action: act.reload},
		trayNode{sep: true},
		trayNode{key: "stopall", label: "Stop all servers and quit", action: act.stopAll, hidden: act.stopAll == nil},
		quitNode(act.quit, act.stopAll != nil))
}

// trayLabel is a server's line in the tray: its state in words; a server
// being retried reads the same through its backoffs and new starts.
func trayLabel(s *supervisor.ServerState) string {
	if s.State == supervisor.StateBackoff || retrying(s) {
		return present.SteadyRetry(s)
	}
	return present.SteadySummary(s)
}

// trayServer is a server's item: its state in words and a submenu of
// actions that keeps its shape as the state changes (Stop becomes Start,
// Restart is greyed out when there is nothing to restart).
func trayServer(s *supervisor.ServerState, act trayActions) trayNode {
	name := s.Name
	signIn := trayNode{key: "signin", label: "Sign in…", hidden: !needsSignIn(s) || act.signIn == nil}
	if act.signIn != nil {
		signIn.action = func() { act.signIn(name) }
	}
	sub := []trayNode{signIn}
	running := s.State.Alive() || s.State == supervisor.StateBackoff
	sub = append(sub, trayNode{key: "restart", label: "Restart", disabled: !running, action: func() { act.restart(name) }})
	if running {
		sub = append(sub, trayNode{key: "startstop", label: "Stop", action: func() { act.startStop(name, false) }})
	} else {
		// Not running: Start is the one way to run it again.
		sub = append(sub, trayNode{key: "startstop", label: "Start", disabled: s.Server != nil && !s.Server.Valid(),
			action: func() { act.startStop(name, true) }})
	}
	sub = append(sub,
		trayNode{key: "details", label: "Show details", action: func() { act.showDetails(name) }},
		trayNode{key: "log", label: "View log", action: func() { act.viewLog(name) }},
	)
	if cl := copyClients(); len(cl) > 0 {
		var clients []trayNode
		for _, c := range cl {
			id := c[0]
			clients = append(clients, trayNode{key: id, label: c[1], action: func() { act.copyConfig(name, id) }})
		}
		sub = append(sub, trayNode{key: "copy", label: "Copy config for", children: clients})
	}
	return trayNode{key: "server:" + name, label: trayLabel(s), action: func() { act.showDetails(name) }, children: sub}
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
		failing = append(failing, trayLabel(s))
	}
	if len(failing) > 5 {
		failing = append(failing[:5], fmt.Sprintf("and %d more", len(failing)-5))
	}
	return strings.Join(append(lines, failing...), "\n")
}

// quitNode is the tray's Quit, which ends the app: with the servers in the
// daemon (keep) they go on serving the AI clients, and the label says so;
// otherwise they stop with the app.
func quitNode(quit func(), keep bool) trayNode {
	label := "Quit"
	if keep {
		label = "Quit (servers keep running for your AI clients)"
	}
	return trayNode{key: "quit", label: label, action: quit, isQuit: true}
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
