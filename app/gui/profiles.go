package gui

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"mcptray/app/present"
	"mcptray/assets"
	"mcptray/control"
)

// The Profiles dialog shows each profile as its clients reach it: one MCP
// server over its servers (the default profile holds them all), with
// what it offers, who is connected and how a client reaches it. It reads
// the gateway's answer the window polls (control.GatewayInfo).

// showProfiles opens the Profiles dialog (UI thread).
func (c *controller) showProfiles() {
	body := container.NewVBox()
	if len(c.gwProfiles) == 0 {
		body.Add(wrapped("No profile is served yet: the background service answers with its profiles once it runs. " +
			"Profiles are [profiles.NAME] tables in servers.toml; every AI client reaches the default one through the one entry mcptray install writes."))
	}
	held := map[string]int{}
	for _, h := range c.held {
		held[h.Server]++
	}
	for _, p := range c.gwProfiles {
		body.Add(widget.NewSeparator())
		name := p.Profile
		body.Add(profileCard(p, held, func() { c.showProfileTrace(name) }))
	}
	d := dialog.NewCustom("Profiles", "Close", container.NewVScroll(body), c.win)
	d.Resize(fyne.NewSize(720, 560))
	c.showEscapable(d, nil)
}

// profileCard is one profile: its name, what it offers from which
// servers, its sessions, how clients reach it, and what naming resolved;
// held counts each server's tools held for approval; trace opens its
// trace.
func profileCard(p control.GatewayProfile, held map[string]int, trace func()) fyne.CanvasObject {
	title := heading(present.VisibleLine(p.Profile))
	box := container.NewVBox(container.NewBorder(nil, nil, nil, widget.NewButtonWithIcon("Trace…", theme.ListIcon(), trace), title))
	if p.Problem != "" {
		l := wrapped("Cannot be served: " + present.VisibleLine(p.Problem))
		l.Importance = widget.DangerImportance
		box.Add(l)
	}
	offered := 0
	var servers []string
	for _, s := range p.Servers {
		line := present.VisibleLine(s.Name)
		switch {
		case s.Offered:
			offered++
			line += fmt.Sprintf(": %s", present.Plural(s.Tools, "tool"))
			if s.Catalogue == "remembered" {
				line += " (as last seen: it starts with its first call)"
			}
			if n := held[s.Name]; n > 0 {
				line += fmt.Sprintf(", and %d held for your approval (Review… in the window)", n)
			}
		case s.Why != "":
			line += ": not offered, " + present.VisibleLine(s.Why)
		default:
			line += ": not offered yet (" + string(s.State) + ")"
		}
		servers = append(servers, "• "+line)
	}
	box.Add(wrapped(fmt.Sprintf("%s listed, from %d of %s; %s connected.",
		present.Plural(p.Tools, "tool"), offered, present.Plural(len(p.Servers), "server"), present.Plural(len(p.Sessions), "client session"))))
	if len(servers) > 0 {
		box.Add(wrapped(strings.Join(servers, "\n")))
	}
	how := "Clients run: " + present.VisibleLine(strings.Join(p.Command, " "))
	if p.URL != "" {
		how += "\nor connect over HTTP to the local endpoint (its key is in the URL: Export shows it to a client you choose)"
	}
	box.Add(wrapped(how))
	for _, n := range p.Notices {
		l := wrapped("Note: " + present.VisibleLine(n))
		l.Importance = widget.WarningImportance
		box.Add(l)
	}
	return box
}

// profileTraceWindow is the window on a profile's trace.
type profileTraceWindow struct {
	win  fyne.Window
	view *traceView
}

// showProfileTrace opens a window on profile name's trace: the frames its
// aggregate sessions exchanged with their clients and with mcptray, as
// `mcptray trace --profile NAME` prints them (each server's own frames
// are in its Trace tab), followed while the window is open (UI thread).
func (c *controller) showProfileTrace(name string) {
	if pt := c.profileTrace; pt != nil {
		if pt.view.server == name {
			pt.win.RequestFocus()
			return
		}
		pt.win.Close()
	}
	src, _ := c.eng.(gatewaySource)
	v := newTraceView(c, src, true)
	w := c.app.NewWindow("mcptray: trace of profile " + name)
	w.SetIcon(assets.AppIcon)
	w.SetContent(v.content)
	w.Resize(fyne.NewSize(1000, 600))
	pt := &profileTraceWindow{win: w, view: v}
	c.profileTrace = pt
	w.SetOnClosed(func() {
		v.stop()
		if c.profileTrace == pt {
			c.profileTrace = nil
		}
	})
	v.follow(name, true)
	w.Show()
}
