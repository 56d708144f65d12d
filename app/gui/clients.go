package gui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"mcptray/app/present"
	"mcptray/control"
	"mcptray/registry"
)

// clientsView is a server's Clients tab: the AI client sessions connected
// through mcptray's gateway (name and version from their handshake, the
// bridge's pid or http, since when, requests, errors), the latency of
// their requests and the calls per tool.
type clientsView struct {
	sessionsCard *widget.Card
	sessions     *fyne.Container
	usageCard    *widget.Card
	latency      *widget.Label
	tools        *fyne.Container
	reach        *widget.Label
	none         *widget.Label // why there is nothing to show
	body         *fyne.Container
	shown        string // what is on screen, to rebuild nothing while it stays
	content      fyne.CanvasObject
}

var (
	sessionColumns = []string{"Client", "Via", "PID", "Since", "Requests", "Errors"}
	toolColumns    = []string{"Tool", "Calls", "Errors"}
)

func newClientsView() *clientsView {
	v := &clientsView{}
	v.sessions = container.NewGridWithColumns(len(sessionColumns))
	v.sessionsCard = widget.NewCard("Client sessions", "", v.sessions)
	v.latency = widget.NewLabel("")
	v.tools = container.NewGridWithColumns(len(toolColumns))
	v.usageCard = widget.NewCard("Client requests", "", container.NewVBox(v.latency, v.tools))
	v.reach = widget.NewLabel("")
	v.reach.Wrapping = fyne.TextWrapWord
	v.reach.Selectable = true
	v.reach.Importance = widget.LowImportance
	v.none = widget.NewLabel("")
	v.none.Wrapping = fyne.TextWrapWord
	v.none.Hide()
	v.body = container.NewVBox(v.sessionsCard, v.usageCard, v.reach)
	v.content = container.NewVScroll(container.NewVBox(v.none, v.body))
	return v
}

// Set shows server name's gateway entry (ok: the daemon lists it), or,
// with why set, why there is none (UI thread). It returns the tab's title.
func (v *clientsView) Set(name string, s control.GatewayServer, ok bool, why string, m *mainWindow) string {
	title := "Clients"
	if ok {
		title = fmt.Sprintf("Clients (%d)", len(s.Sessions))
	}
	key := fmt.Sprintf("%s|%v|%s|%+v", name, ok, why, s)
	if key == v.shown {
		return title
	}
	v.shown = key
	if why != "" || !ok {
		if why == "" {
			why = "The background service lists no client sessions for " + name + " yet."
		}
		showText(v.none, why)
		v.body.Hide()
		return title
	}
	v.none.Hide()
	v.body.Show()

	v.sessionsCard.SetSubTitle(present.Plural(len(s.Sessions), "session") + " connected through mcptray, sharing one " + name)
	cells := headerCells(sessionColumns)
	for _, cs := range s.Sessions {
		client := strings.TrimSpace(cs.ClientName + " " + cs.ClientVersion)
		if client == "" {
			client = "(no handshake yet)"
		}
		pid := "–"
		if cs.PID > 0 {
			pid = fmt.Sprint(cs.PID)
		}
		since := cs.Since.Local().Format("15:04:05")
		if !sameDay(cs.Since, m.c.now()) {
			since = cs.Since.Local().Format("Jan 2 15:04")
		}
		cells = append(cells, cell(present.VisibleLine(client)), cell(cs.Via), cell(pid), cell(since),
			cell(fmt.Sprint(cs.Requests)), cell(fmt.Sprint(cs.Errors)))
	}
	if len(s.Sessions) == 0 {
		cells = append(cells, cell("none now"))
	}
	v.sessions.Objects = cells
	v.sessions.Refresh()

	u := s.Usage
	if u.Sampled > 0 {
		v.usageCard.SetSubTitle("latency of real client calls, the round trip through mcptray to the server")
		v.latency.SetText(fmt.Sprintf("p50 %s · p95 %s (last %s)", present.FormatLatency(u.P50), present.FormatLatency(u.P95), present.Plural(u.Sampled, "request")))
	} else {
		v.usageCard.SetSubTitle("no client requests yet")
		v.latency.SetText("–")
	}
	names := make([]string, 0, len(u.Tools))
	for t := range u.Tools {
		names = append(names, t)
	}
	// The most called first.
	slices.SortFunc(names, func(a, b string) int {
		if d := u.Tools[b].Calls - u.Tools[a].Calls; d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	cells = headerCells(toolColumns)
	for _, t := range names {
		c := u.Tools[t]
		cells = append(cells, cell(present.VisibleLine(t)), cell(fmt.Sprint(c.Calls)), cell(fmt.Sprint(c.Errors)))
	}
	if len(names) == 0 {
		cells = append(cells, cell("no tool calls yet"))
	}
	v.tools.Objects = cells
	v.tools.Refresh()

	reach := "AI clients reach " + name + " through mcptray with: " + strings.Join(s.Command, " ")
	if s.URL != "" {
		reach += "\nor at the local URL (its key is a password: `mcptray gateway --reveal` prints it): " + registry.MaskURL(s.URL)
	}
	v.reach.SetText(reach)
	return title
}

func headerCells(cols []string) []fyne.CanvasObject {
	out := make([]fyne.CanvasObject, len(cols))
	for i, c := range cols {
		out[i] = widget.NewLabelWithStyle(c, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	}
	return out
}

func cell(text string) fyne.CanvasObject {
	l := widget.NewLabel(text)
	l.Truncation = fyne.TextTruncateEllipsis
	return l
}

// showClients fills the Clients tab for server name ("" for none).
func (m *mainWindow) showClients(name string) {
	s, ok := m.c.gw[name]
	why := ""
	switch {
	case name == "":
		why = "No server selected."
	case m.c.host.fallback != "":
		why = "AI clients connect through the background service, which is not running: the servers run in this app (" + m.c.host.fallback + ")."
	case m.c.gw == nil:
		why = "The background service has not said yet which clients are connected."
	}
	title := m.clients.Set(name, s, ok, why, m)
	if t := m.clientsTab; t.Text != title {
		t.Text = title
		m.tabs.Refresh()
	}
}

func sameDay(a, b time.Time) bool {
	ay, am, ad := a.Local().Date()
	by, bm, bd := b.Local().Date()
	return ay == by && am == bm && ad == bd
}
