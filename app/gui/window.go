package gui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"mcptray/app/present"
	"mcptray/healthcheck"
	"mcptray/supervisor"
)

// mainWindow is the server list and the selected server's details. It only
// reads snapshots; every button becomes a command through the controller.
type mainWindow struct {
	c    *controller
	win  fyne.Window
	snap supervisor.Snapshot

	selected string // the server the details show ("" for none)
	held     *heldBanner
	pending  string // a server to select once the engine lists it
	servers  *serverList
	bulk     *bulkPanel
	empty    *emptyState
	details  fyne.CanvasObject

	// Details of the selected server.
	titleRow   *fyne.Container // the header and the state
	header     *widget.Label
	badge      *canvas.Circle
	stateLabel *widget.Label
	buttons    *fyne.Container
	startStop  *widget.Button
	restart    *widget.Button
	edit       *widget.Button
	duplicate  *widget.Button
	remove     *widget.Button
	copyConfig *widget.Button

	overview     *widget.Form
	fields       map[string]*widget.Label
	diagCard     *widget.Card
	diagMsg      *widget.Label // the diagnosis's message
	diagText     *widget.Label
	signIn       *widget.Button // on the diagnosis card of a server that needs sign-in
	signInRow    *fyne.Container
	instructions *widget.Label
	caps         *widget.Label

	tools, resources, templates, prompts *catalogView
	// panels are the Run (Read, Get) panels made so far, by server and
	// item; panel is the one last shown.
	panels  map[string]tryPanel
	panel   tryPanel
	history *historyView
	// extraTools are the tools a server offered only to the window's
	// calls, by server.
	extraTools map[string][]healthcheck.Tool
	// The report the catalogs show, and whose it is.
	report      *healthcheck.Report
	reportOwner string

	log        *logView
	chart      *latencyChart
	chartStats *widget.Label
	clients    *clientsView
	clientsTab *container.TabItem
	trace      *traceView
	tabs       *container.AppTabs
	warning    *widget.Label // shown while the engine cannot be reached
	checkBtn   *widget.Button
	checkLine  *widget.Label // how the last Check all went
	hostLine   *widget.Label // where the servers run
	config     *configBar
	content    fyne.CanvasObject
}

// overviewRows are the Overview tab's fields, in order.
var overviewRows = present.DetailLabels

func newMainWindow(c *controller, win fyne.Window) *mainWindow {
	m := &mainWindow{c: c, win: win, fields: map[string]*widget.Label{}}
	m.servers = newServerList()
	m.servers.onSelect = m.selectionChanged
	m.servers.onOpen = func(string) { m.showTab("Overview") }
	m.servers.shortcut = m.shortcut

	m.header = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	m.header.SizeName = theme.SizeNameSubHeadingText
	m.badge = canvas.NewCircle(idleColor)
	m.stateLabel = widget.NewLabel("")
	m.stateLabel.Truncation = fyne.TextTruncateEllipsis
	m.startStop = widget.NewButtonWithIcon("Stop", theme.MediaStopIcon(), func() { m.c.startStop(m.selected, m.startStop.Text == "Start") })
	m.restart = widget.NewButtonWithIcon("Restart", theme.ViewRefreshIcon(), func() { m.c.restart(m.selected) })
	m.edit = widget.NewButtonWithIcon("Edit", theme.DocumentCreateIcon(), func() { m.c.editServer(m.selected, false) })
	m.duplicate = widget.NewButtonWithIcon("Duplicate", theme.ContentCopyIcon(), func() { m.c.editServer(m.selected, true) })
	m.remove = widget.NewButtonWithIcon("Remove", theme.DeleteIcon(), func() { m.c.removeServer(m.selected) })
	m.copyConfig = widget.NewButtonWithIcon("Export…", theme.UploadIcon(), func() { m.c.showExport(m.selected) })

	m.overview = widget.NewForm()
	for _, row := range overviewRows {
		l := widget.NewLabel("")
		l.Wrapping = fyne.TextWrapWord
		l.Selectable = true
		m.fields[row] = l
		m.overview.Append(row, l)
	}
	m.diagText = widget.NewLabel("")
	m.diagText.Wrapping = fyne.TextWrapWord
	m.diagText.Selectable = true
	m.signIn = widget.NewButtonWithIcon("Sign in…", theme.LoginIcon(), func() { m.c.signIn(m.selected) })
	m.signIn.Importance = widget.HighImportance
	m.signInRow = container.NewHBox(m.signIn)
	m.signInRow.Hide()
	// The message wraps (a card's subtitle does not: a long one widened
	// the window past the screen).
	m.diagMsg = widget.NewLabel("")
	m.diagMsg.Wrapping = fyne.TextWrapWord
	m.diagMsg.Selectable = true
	m.diagCard = widget.NewCard("", "", container.NewVBox(m.diagMsg, m.diagText, m.signInRow))
	m.instructions = widget.NewLabel("")
	m.instructions.Wrapping = fyne.TextWrapWord
	m.instructions.Selectable = true
	m.caps = widget.NewLabel("")
	m.caps.Wrapping = fyne.TextWrapWord
	overview := container.NewVScroll(container.NewVBox(
		m.diagCard,
		m.overview,
		widget.NewCard("Capabilities", "as the server declared them", m.caps),
		widget.NewCard("Instructions", "", m.instructions),
	))

	m.panels, m.extraTools = map[string]tryPanel{}, map[string][]healthcheck.Tool{}
	m.tools = newCatalogView("tools", func(i int) fyne.CanvasObject { return m.panelFor(callTool, i) }, true)
	m.resources = newCatalogView("resources", func(i int) fyne.CanvasObject { return m.panelFor(callResource, i) }, false)
	m.templates = newCatalogView("resource templates", func(i int) fyne.CanvasObject { return m.panelFor(callTemplate, i) }, false)
	m.prompts = newCatalogView("prompts", func(i int) fyne.CanvasObject { return m.panelFor(callPrompt, i) }, false)
	m.history = newHistoryView(m)
	m.log = newLogView(c.eng, func() fyne.Window { return m.win })
	m.chart = newLatencyChart()
	m.chartStats = widget.NewLabel("")
	latency := container.NewBorder(nil, m.chartStats, nil, nil, m.chart)
	m.clients = newClientsView()
	m.clientsTab = container.NewTabItem("Clients", m.clients.content)
	src, _ := c.eng.(gatewaySource)
	m.trace = newTraceView(c, src, false)

	m.tabs = container.NewAppTabs(
		container.NewTabItem("Overview", overview),
		container.NewTabItem("Tools", container.NewBorder(nil, m.history.content, nil, nil, m.tools.content)),
		container.NewTabItem("Resources", m.resources.content),
		container.NewTabItem("Templates", m.templates.content),
		container.NewTabItem("Prompts", m.prompts.content),
		container.NewTabItem("Log", m.log.content),
		container.NewTabItem("Latency", latency),
		m.clientsTab,
		container.NewTabItem("Trace", m.trace.content),
	)

	badgeBox := container.NewCenter(container.NewGridWrap(fyne.NewSize(14, 14), m.badge))
	m.titleRow = container.NewBorder(nil, nil, m.header, nil, m.stateLabel)
	m.buttons = container.NewHBox(m.startStop, m.restart, m.edit, m.duplicate, m.remove, m.copyConfig)
	m.details = container.NewBorder(container.NewVBox(container.NewBorder(nil, nil, badgeBox, nil, m.titleRow), m.buttons, widget.NewSeparator()), nil, nil, nil, m.tabs)
	m.bulk = newBulkPanel(m)
	m.empty = newEmptyState(m)

	// One row of plain buttons, so the list keeps the height.
	addBtn := widget.NewButton("Add…", func() { m.c.editServer("", false) })
	m.checkBtn = widget.NewButton("Check all", m.c.checkAll)
	m.checkLine = widget.NewLabel("")
	m.checkLine.Wrapping = fyne.TextWrapWord
	m.checkLine.Hide()
	importBtn := widget.NewButton("Import…", m.c.showImport)
	exportBtn := widget.NewButton("Export…", func() { m.c.showExport("") })
	notify := widget.NewCheck("Desktop notifications", c.notify.SetEnabled)
	notify.SetChecked(c.notify.Enabled())
	m.held = newHeldBanner(c)
	left := container.NewBorder(container.NewVBox(container.NewGridWithColumns(4, addBtn, importBtn, exportBtn, m.checkBtn), m.held.content, widget.NewSeparator()),
		container.NewVBox(m.checkLine, widget.NewSeparator(), notify), nil, nil, m.servers.content)
	m.held.relayout = left.Refresh
	split := container.NewHSplit(left, container.NewStack(m.details, m.bulk.content, m.empty.content))
	split.Offset = 0.3
	m.warning = widget.NewLabel("")
	m.warning.Importance = widget.DangerImportance
	m.warning.Wrapping = fyne.TextWrapWord
	m.warning.Hide()
	m.config = newConfigBar(c)
	m.hostLine = widget.NewLabel("")
	m.hostLine.Importance = widget.LowImportance
	m.hostLine.Truncation = fyne.TextTruncateEllipsis
	m.hostLine.Hide()
	m.content = container.NewBorder(container.NewVBox(m.warning, m.config.banner), container.NewVBox(widget.NewSeparator(), m.config.footer, m.hostLine), nil, nil, split)
	m.showDetails(nil)
	return m
}

// Update shows a new snapshot (UI thread).
func (m *mainWindow) Update(snap supervisor.Snapshot) {
	m.snap = snap
	m.servers.Update(snap) // may change the selection: calls selectionChanged
	if p := m.pending; p != "" && snap.Server(p) != nil {
		m.pending = ""
		m.servers.Select(p)
	}
	m.showSelection()
}

// selectionChanged follows the list's selection (UI thread).
func (m *mainWindow) selectionChanged() {
	if name := m.servers.current; name != m.selected {
		m.selected = name
		m.log.SetServer(name)
		m.history.show()
	}
	m.showSelection()
}

// showSelection shows, right of the list, what the list has selected: one
// server's details, the bulk actions for several, or what to do when there
// is nothing to show.
func (m *mainWindow) showSelection() {
	sel := m.servers.Selected()
	show := func(o fyne.CanvasObject) {
		for _, x := range []fyne.CanvasObject{m.details, m.bulk.content, m.empty.content} {
			if x == o {
				if !x.Visible() {
					x.Show()
					x.Refresh() // lay out again: its texts changed while hidden
				}
			} else {
				x.Hide()
			}
		}
	}
	switch {
	case m.selected == "":
		m.showDetails(nil)
		m.empty.Set(len(m.snap.Servers), m.servers.search.Text)
		show(m.empty.content)
	case len(sel) > 1:
		m.bulk.Set(sel)
		show(m.bulk.content)
	default:
		m.showDetails(m.snap.Server(m.selected))
		show(m.details)
	}
}

// setCheckStatus shows how a Check all goes; the button waits while it runs.
func (m *mainWindow) setCheckStatus(text string, running bool) {
	showText(m.checkLine, text)
	setEnabled(m.checkBtn, !running)
}

// setWarning shows (or, with "", hides) a line above everything.
func (m *mainWindow) setWarning(text string) {
	if text == m.warning.Text && m.warning.Visible() == (text != "") {
		return
	}
	m.warning.SetText(text)
	if text == "" {
		m.warning.Hide()
	} else {
		m.warning.Show()
	}
}

// selectServer shows the named server alone (UI thread). A server not
// listed yet (just saved: the engine has not read the file yet) is
// selected as soon as it is.
func (m *mainWindow) selectServer(name string) {
	m.pending = ""
	if m.snap.Server(name) == nil {
		m.pending = name
		return
	}
	m.servers.Select(name)
}

// showTab selects a details tab by its title.
func (m *mainWindow) showTab(title string) {
	for _, t := range m.tabs.Items {
		if strings.HasPrefix(t.Text, title) {
			m.tabs.Select(t)
		}
	}
}

func (m *mainWindow) showDetails(s *supervisor.ServerState) {
	if s == nil {
		m.showNoServer()
		return
	}
	m.showButtons(s)
	now := m.c.now()
	// What the server sent is shown with its control characters visible.
	m.showFields(s, now)
	if r := s.Report; r != nil {
		setText(m.caps, capabilityList(r.Capabilities))
		setText(m.instructions, orDash(present.Visible(r.Instructions)))
	} else {
		setText(m.caps, "–")
		setText(m.instructions, "–")
	}
	p := s.Probes
	if p.Count > 0 {
		setText(m.chartStats, present.ProbeLatency(p))
	} else {
		setText(m.chartStats, "no probes yet")
	}
	m.chart.SetSamples(p.Recent, p.P95)
	m.showClients(s.Name)
	m.showDiagnosis(s)
	m.showCatalog(s, now)
}

// showFields fills the Overview's fields for s at now.
func (m *mainWindow) showFields(s *supervisor.ServerState, now time.Time) {
	// What the server sent is shown with its control characters visible.
	for _, d := range present.Details(s, now) {
		setText(m.fields[d.Label], orDash(present.VisibleLine(d.Text)))
	}
}

// showClock moves on what the details say in terms of the clock (uptimes,
// countdowns, "last seen") when no new snapshot came: only what changed is
// drawn again. The list's rows say nothing that moves on its own.
func (m *mainWindow) showClock() {
	now := m.c.now()
	if s := m.snap.Server(m.selected); s != nil && m.details.Visible() {
		m.showTitle(s.Name, present.StateDetailAt(s, now))
		m.showFields(s, now)
		m.showCatalog(s, now)
	}
}

// showTitle sets the header's name and state, laying the row out again
// when they changed (their widths follow the texts).
func (m *mainWindow) showTitle(name, state string) {
	if m.header.Text == name && m.stateLabel.Text == state {
		return
	}
	setText(m.header, name)
	setText(m.stateLabel, state)
	m.titleRow.Refresh()
}

// setText sets a label's text, drawing it again only when it changed.
func setText(l *widget.Label, text string) {
	if l.Text != text {
		l.SetText(text)
	}
}

// enable enables the buttons, or disables them.
func enable(b bool, ws ...*widget.Button) {
	for _, w := range ws {
		if b {
			w.Enable()
		} else {
			w.Disable()
		}
	}
}

// showNoServer empties the details: nothing of a server that is gone may
// stay on screen.
func (m *mainWindow) showNoServer() {
	m.showTitle("No server selected", "")
	enable(false, m.startStop, m.restart, m.edit, m.duplicate, m.remove, m.copyConfig)
	for _, l := range m.fields {
		l.SetText("–")
	}
	m.diagCard.Hide()
	m.caps.SetText("–")
	m.instructions.SetText("–")
	m.chart.SetSamples(nil, 0)
	m.chartStats.SetText("")
	m.report, m.reportOwner = nil, ""
	m.setCatalogs(&healthcheck.Report{}, false)
	m.showClients("")
}

// showButtons sets the header and the buttons for s: Stop and Restart while
// it runs, Start when it does not.
func (m *mainWindow) showButtons(s *supervisor.ServerState) {
	enable(true, m.startStop, m.restart, m.edit, m.duplicate, m.remove, m.copyConfig)
	m.showTitle(s.Name, present.StateDetailAt(s, m.c.now()))
	if col := dotColor(s); col != m.badge.FillColor {
		m.badge.FillColor = col
		m.badge.Refresh()
	}
	running := s.State.Alive() || s.State == supervisor.StateBackoff
	if running && (m.startStop.Text != "Stop" || !m.restart.Visible()) {
		m.startStop.SetText("Stop")
		m.startStop.SetIcon(theme.MediaStopIcon())
		m.restart.Show()
		m.buttons.Refresh()
	} else if !running && (m.startStop.Text != "Start" || m.restart.Visible()) {
		// Not running: Start is the one way to run it again.
		m.restart.Hide()
		m.startStop.SetText("Start")
		m.startStop.SetIcon(theme.MediaPlayIcon())
		m.buttons.Refresh()
	}
	if !running {
		enable(s.Server == nil || s.Server.Valid(), m.startStop)
	}
}

// showDiagnosis fills the diagnosis card: the diagnosis and the warnings,
// with their evidence and fixes, and the last stderr lines when the
// diagnosis does not already quote them.
func (m *mainWindow) showDiagnosis(s *supervisor.ServerState) {
	d, warns := s.Diagnosis, s.Warnings
	if d == nil && len(warns) == 0 {
		m.diagCard.Hide()
		return
	}
	var b strings.Builder
	title, sub := "", ""
	if d != nil {
		title, sub = string(d.Code), d.Message
		writeDiagnosis(&b, d)
	} else {
		title, sub = "warning: "+string(warns[0].Code), warns[0].Message
		writeDiagnosis(&b, &warns[0])
		warns = warns[1:]
	}
	for i := range warns {
		b.WriteString("\n\nWarning: " + string(warns[i].Code) + ": " + warns[i].Message + "\n")
		writeDiagnosis(&b, &warns[i])
	}
	hasStderr := d == nil || slices.ContainsFunc(d.Evidence, func(e string) bool { return strings.HasPrefix(e, "stderr: ") })
	if len(s.StderrTail) > 0 && !hasStderr && d.Code != healthcheck.CodeStdoutNoise {
		b.WriteString("\n\nLast stderr lines:\n")
		for _, l := range s.StderrTail {
			b.WriteString(l.Text + "\n")
		}
	}
	if m.diagCard.Title != title {
		m.diagCard.SetTitle(title)
	}
	setText(m.diagMsg, present.Visible(sub))
	setText(m.diagText, strings.TrimSpace(present.Visible(b.String())))
	if needsSignIn(s) {
		m.signInRow.Show()
	} else {
		m.signInRow.Hide()
	}
	m.diagCard.Show()
}

// showCatalog fills the catalog tabs when s's report changed; the catalog
// of a server that is not up is as it was last seen.
func (m *mainWindow) showCatalog(s *supervisor.ServerState, now time.Time) {
	if s.Report != m.report || s.Name != m.reportOwner {
		same := s.Name == m.reportOwner
		m.report, m.reportOwner = s.Report, s.Name
		r := s.Report
		if r == nil {
			r = &healthcheck.Report{}
		}
		m.setCatalogs(r, same)
	}
	if s.Report != nil {
		n := len(m.catalogTools(s.Report))
		title := fmt.Sprintf("Tools (%d)", n)
		if !s.Live() && !s.LastLive.IsZero() {
			title = fmt.Sprintf("Tools (%d, last seen %s)", n, present.LastSeen(s.LastLive, now))
		}
		if m.tabs.Items[1].Text != title {
			m.tabs.Items[1].Text = title
			m.tabs.Refresh()
		}
	}
}

// writeDiagnosis writes a diagnosis's evidence and fix for the card.
func writeDiagnosis(b *strings.Builder, d *healthcheck.Diagnosis) {
	for _, e := range d.Evidence {
		b.WriteString("• " + e + "\n")
	}
	if d.Fix != "" {
		b.WriteString("\nSuggested fix: " + d.Fix)
	}
}

// setCatalogs fills the Tools, Resources, Templates and Prompts tabs,
// keeping what is selected in them when keep is set.
func (m *mainWindow) setCatalogs(r *healthcheck.Report, keep bool) {
	tools := m.catalogTools(r)
	m.tools.SetItems(toolItems(tools, len(r.Tools)), keep)
	m.resources.SetItems(resourceItems(r.Resources), keep)
	m.templates.SetItems(templateItems(r.ResourceTemplates), keep)
	m.prompts.SetItems(promptItems(r.Prompts), keep)
	m.tabs.Items[1].Text = fmt.Sprintf("Tools (%d)", len(tools))
	m.tabs.Items[2].Text = fmt.Sprintf("Resources (%d)", len(r.Resources))
	m.tabs.Items[3].Text = fmt.Sprintf("Templates (%d)", len(r.ResourceTemplates))
	m.tabs.Items[4].Text = fmt.Sprintf("Prompts (%d)", len(r.Prompts))
	m.tabs.Refresh()
}

// catalogTools are the tools the Tools tab lists: the report's, then
// those the server offered only to the window's calls (UI thread).
func (m *mainWindow) catalogTools(r *healthcheck.Report) []healthcheck.Tool {
	extra := m.extraTools[m.reportOwner]
	if len(extra) == 0 || r != m.report {
		return r.Tools
	}
	return append(slices.Clone(r.Tools), extra...)
}

// trialTools notes the tools the server offered a session of the window's
// calls: those the health check was not offered join the Tools tab.
func (m *mainWindow) trialTools(server string, tools []healthcheck.Tool) {
	var base []healthcheck.Tool
	if s := m.snap.Server(server); s != nil && s.Report != nil {
		base = s.Report.Tools
	}
	var extra []healthcheck.Tool
	for _, t := range tools {
		if !slices.ContainsFunc(base, func(b healthcheck.Tool) bool { return b.Name == t.Name }) {
			extra = append(extra, t)
		}
	}
	if slices.EqualFunc(extra, m.extraTools[server], func(a, b healthcheck.Tool) bool { return a.Name == b.Name }) {
		return
	}
	m.extraTools[server] = extra
	if server == m.reportOwner && m.report != nil {
		m.setCatalogs(m.report, true)
	}
}

// sizeCap lays its one object out over all of its space but asks for at
// most max: the window keeps the size the person gave it whatever a text
// on screen asks for (Fyne grows a window to its content's minimum size,
// and one long line, or thirty names, made it wider or taller than the
// screen). What is long wraps, truncates or scrolls inside.
type sizeCap struct{ max fyne.Size }

func (l sizeCap) MinSize(objs []fyne.CanvasObject) fyne.Size {
	var m fyne.Size
	for _, o := range objs {
		m = m.Max(o.MinSize())
	}
	return m.Min(l.max)
}

func (l sizeCap) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	for _, o := range objs {
		o.Move(fyne.NewPos(0, 0))
		o.Resize(size)
	}
}
