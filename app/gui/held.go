package gui

import (
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"mcptray/app"
	"mcptray/app/present"
	"mcptray/registry"
	"mcptray/registry/tooltrust"
)

// Tool approval in the window: the tools the approvals file holds back
// from every client (a definition that changed since it was approved, a
// new server's tools with approve_new_servers on, one held by hand) are
// named above the server list, and Review shows each with why, the signs
// of hidden instructions and the change itself, to approve one or a
// server's all. The file is the one `mcptray tools` and the daemon read:
// an approval here reaches the sessions through the daemon, which is
// watching it.

// heldPoll is how often the window re-reads the approvals file (controller.watch).
const heldPoll = 3 * time.Second

// heldBanner is the line above the server list while tools are held.
type heldBanner struct {
	c       *controller
	held    []tooltrust.Held
	label   *widget.Label
	content *fyne.Container
	review  *heldReview // the dialog, while it is open
	// relayout lays out what holds the line when it shows or goes.
	relayout func()
}

func newHeldBanner(c *controller) *heldBanner {
	b := &heldBanner{c: c, label: widget.NewLabel("")}
	b.label.Importance = widget.WarningImportance
	b.label.Truncation = fyne.TextTruncateEllipsis
	btn := widget.NewButton("Review…", b.showReview)
	b.content = container.NewBorder(nil, nil, nil, btn, b.label)
	b.content.Hide()
	return b
}

// trustStore opens the approvals file of the config (nil when it cannot
// be), once (UI thread).
func (c *controller) trustStore() *tooltrust.Store {
	if c.trust != nil {
		return c.trust
	}
	cfg, err := registry.Load(c.cfgPath)
	if err != nil {
		return nil
	}
	st, err := app.OpenTrust(cfg)
	if err != nil {
		return nil
	}
	c.trust = st
	return st
}

// refreshHeld re-reads the approvals file: the window's line, the tray's
// item, tooltip and icon follow it (UI thread).
func (c *controller) refreshHeld() {
	st := c.trustStore()
	if st == nil {
		return
	}
	_, _ = st.Reload()
	held := st.List()
	changed := len(held) != len(c.held)
	c.held = held
	if c.main != nil {
		c.main.held.show(held)
	}
	if changed && c.engineSnap.Servers != nil {
		c.apply(c.engineSnap)
	}
}

// reviewHeld opens the window on the held tools' review (the tray's item).
func (c *controller) reviewHeld() {
	c.openMain()
	c.refreshHeld()
	c.main.held.showReview()
}

// heldWords say how many tools wait for approval.
func heldWords(n int) string {
	return present.Plural(n, "tool") + " held for your approval"
}

// open is the approvals file (nil when it cannot be read).
func (b *heldBanner) open() *tooltrust.Store { return b.c.trustStore() }

// refresh re-reads the file and shows the count (UI thread).
func (b *heldBanner) refresh() { b.c.refreshHeld() }

func (b *heldBanner) show(held []tooltrust.Held) {
	b.held = held
	was := b.content.Visible()
	if len(held) == 0 {
		b.content.Hide()
	} else {
		b.label.SetText(heldWords(len(held)))
		b.content.Show()
	}
	if was != b.content.Visible() && b.relayout != nil {
		b.relayout()
	}
	if b.review != nil {
		b.review.show(held)
	}
}

// heldReview is the Review dialog.
type heldReview struct {
	b    *heldBanner
	list *fyne.Container
	d    dialog.Dialog
}

func (b *heldBanner) showReview() {
	st := b.open()
	if st == nil {
		b.c.showError(fmt.Errorf("the tool approvals of %s cannot be read", b.c.cfgPath))
		return
	}
	r := &heldReview{b: b, list: container.NewVBox()}
	r.show(b.held)
	d := dialog.NewCustom("Held tools", "Close", container.NewVScroll(r.list), b.c.win)
	d.Resize(fyne.NewSize(760, 600))
	r.d = d
	b.review = r
	b.c.showEscapable(d, func() { b.review = nil })
}

// heldWhy says why a tool is held, in the window's words.
func heldWhy(h tooltrust.Held) string {
	switch h.Reason {
	case tooltrust.ReasonChanged:
		return "Its definition changed since it was approved. The change is below."
	case tooltrust.ReasonNewServer:
		return "Its server is new and new servers' tools wait for approval (approve_new_servers in servers.toml)."
	default:
		return "It was held by hand."
	}
}

func (r *heldReview) show(held []tooltrust.Held) {
	r.list.RemoveAll()
	if len(held) == 0 {
		r.list.Add(widget.NewLabel("No tool is held: every client sees every tool its profile offers."))
		r.list.Refresh()
		return
	}
	byServer := map[string]int{}
	for _, h := range held {
		byServer[h.Server]++
	}
	last := ""
	for _, h := range held {
		if h.Server != last {
			last = h.Server
			title := heading(present.VisibleLine(h.Server))
			row := container.NewBorder(nil, nil, nil, nil, title)
			if n := byServer[h.Server]; n > 1 {
				server := h.Server
				all := widget.NewButton(fmt.Sprintf("Approve all %d", n), func() { r.approve(server, "") })
				row = container.NewBorder(nil, nil, nil, all, title)
			}
			r.list.Add(widget.NewSeparator())
			r.list.Add(row)
		}
		r.list.Add(r.tool(h))
	}
	r.list.Refresh()
}

// tool is one held tool: its name, why, the signs found, the change and
// its Approve.
func (r *heldReview) tool(h tooltrust.Held) fyne.CanvasObject {
	name := widget.NewLabel(present.VisibleLine(h.Tool) + " · held since " + h.Since.Local().Format("2006-01-02 15:04"))
	name.TextStyle.Bold = true
	server, tool := h.Server, h.Tool
	approve := widget.NewButton("Approve", func() { r.approve(server, tool) })
	approve.Importance = widget.HighImportance
	box := container.NewVBox(container.NewBorder(nil, nil, nil, approve, name), wrapped(heldWhy(h)))
	for _, f := range h.Flags {
		l := wrapped("Look closely: " + present.VisibleLine(f.Field) + ": " + present.VisibleLine(f.Reason))
		l.Importance = widget.DangerImportance
		box.Add(l)
	}
	if h.Reason != tooltrust.ReasonByHand {
		if diff := strings.TrimRight(h.Diff(), "\n"); diff != "" {
			d := widget.NewLabel(present.Visible(jsonUnescapeHTML.Replace(diff)))
			d.TextStyle.Monospace = true
			d.Wrapping = fyne.TextWrapBreak
			box.Add(d)
		}
	}
	return box
}

// jsonUnescapeHTML shows <, > and & as themselves in a definition's JSON
// (Go's JSON writes them escaped), as the person would read them.
var jsonUnescapeHTML = strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&")

func (r *heldReview) approve(server, tool string) {
	st := r.b.open()
	if st == nil {
		return
	}
	if err := st.Approve(server, tool); err != nil {
		r.b.c.showError(err)
		return
	}
	r.b.c.refreshHeld()
}
