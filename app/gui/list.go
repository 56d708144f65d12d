package gui

import (
	"fmt"
	"image/color"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"mcptray/app/present"
	"mcptray/supervisor"
)

// rank sorts problems first: failing, then needing attention (warnings,
// waiting to retry, degraded, starting again after it went down), then the
// rest in config order. A fresh start is not a problem, so it does not
// shuffle the list; a start after a failure is (a server that never
// becomes ready is starting most of the time).
func rank(s *supervisor.ServerState) int {
	if s.Server != nil && s.Server.Disabled {
		return 2
	}
	if retrying(s) {
		return 1
	}
	switch levelOf(s) {
	case supervisor.LevelError:
		return 0
	case supervisor.LevelWarn:
		if s.State != supervisor.StateStarting && s.State != supervisor.StateStopping {
			return 1
		}
	}
	return 2
}

// problemsFirst lists the indexes of snap.Servers, failing ones first, the
// rest in config order.
func problemsFirst(snap supervisor.Snapshot) []int {
	idx := make([]int, len(snap.Servers))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return rank(&snap.Servers[a]) - rank(&snap.Servers[b]) })
	return idx
}

// countSummary is the one line that says where every server is:
// "27 ready · 2 failing · 1 stopped".
func countSummary(snap supervisor.Snapshot) string {
	if len(snap.Servers) == 0 {
		return "no servers"
	}
	counts := map[string]int{}
	for i := range snap.Servers {
		counts[countWord(&snap.Servers[i])]++
	}
	var parts []string
	for _, w := range []string{"ready", "with warnings", "failing", "retrying", "degraded", "need sign-in", "starting", "stopped", "disabled"} {
		if n := counts[w]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, w))
		}
	}
	return strings.Join(parts, " · ")
}

// retrying is whether a server is starting again after a failed start or
// a crash (not after a restart a person asked for): still being retried.
func retrying(s *supervisor.ServerState) bool {
	return s.State == supervisor.StateStarting && s.Failures > 0
}

func countWord(s *supervisor.ServerState) string {
	if s.Server != nil && s.Server.Disabled {
		return "disabled"
	}
	switch s.State {
	case supervisor.StateReady, supervisor.StateRunning:
		if levelOf(s) == supervisor.LevelWarn {
			return "with warnings"
		}
		return "ready"
	case supervisor.StateSignIn:
		return "need sign-in"
	case supervisor.StateFailed, supervisor.StateCrashLooping, supervisor.StateUnhealthy:
		return "failing"
	case supervisor.StateBackoff:
		return "retrying"
	case supervisor.StateDegraded:
		return "degraded"
	case supervisor.StateStarting:
		if retrying(s) {
			return "retrying"
		}
		return "starting"
	}
	return "stopped"
}

// matches says whether a server matches a search: every word of it appears
// in the name, the state, the command or the URL.
func matches(s *supervisor.ServerState, query string) bool {
	hay := strings.ToLower(s.Name + " " + present.StateDetail(s) + " " + s.Command)
	if s.Server != nil {
		hay += " " + strings.ToLower(s.Server.Command+" "+s.Server.URL)
	}
	for _, w := range strings.Fields(strings.ToLower(query)) {
		if !strings.Contains(hay, w) {
			return false
		}
	}
	return true
}

// serverList is the window's left column: a search field, the order, the
// count summary, and one compact row per server. It owns the selection:
// current is the server the details show, marked the servers bulk actions
// apply to (current among them). Both only ever name servers on the list.
type serverList struct {
	snap    supervisor.Snapshot
	shown   []int // indexes into snap.Servers, in display order
	current string
	marked  map[string]bool
	anchor  string // where a Shift-click range starts
	drawn   string // the rows as last drawn (rowsKey)

	search  *searchEntry
	order   *widget.Check // problems first; else config order
	summary *widget.Label
	list    *widget.List
	content fyne.CanvasObject

	// onSelect runs when current or marked changed (UI thread).
	onSelect func()
	// onOpen runs on Enter or a double click on a row.
	onOpen func(name string)
	// shortcut handles the window's shortcuts typed in the search field.
	shortcut func(fyne.Shortcut) bool
}

func newServerList() *serverList {
	l := &serverList{marked: map[string]bool{}}
	l.search = newSearchEntry(l)
	l.search.SetPlaceHolder("Search (Ctrl+F)")
	l.search.OnChanged = func(string) { l.refilter() }
	l.order = widget.NewCheck("Problems first", func(bool) { l.refilter() })
	l.order.Checked = true
	l.summary = widget.NewLabel("")
	l.summary.Truncation = fyne.TextTruncateEllipsis
	l.list = widget.NewList(
		func() int { return len(l.shown) },
		func() fyne.CanvasObject { return newServerRow(l) },
		func(id widget.ListItemID, o fyne.CanvasObject) {
			if id < len(l.shown) {
				s := &l.snap.Servers[l.shown[id]]
				o.(*serverRow).set(id, s, l.marked[s.Name])
			}
		})
	l.content = container.NewBorder(container.NewVBox(container.NewBorder(nil, nil, nil, l.order, l.search), l.summary), nil, nil, nil, l.list)
	return l
}

// Update shows a new snapshot, keeping the selection on the servers still
// listed.
func (l *serverList) Update(snap supervisor.Snapshot) {
	l.snap = snap
	l.refilter()
}

// refilter recomputes the rows shown and drops from the selection what is
// no longer among them.
func (l *serverList) refilter() {
	var idx []int
	if !l.order.Checked {
		for i := range l.snap.Servers {
			idx = append(idx, i)
		}
	} else {
		idx = problemsFirst(l.snap)
	}
	q := l.search.Text
	shown := idx[:0]
	for _, i := range idx {
		if matches(&l.snap.Servers[i], q) {
			shown = append(shown, i)
		}
	}
	l.shown = shown
	text := countSummary(l.snap)
	if len(shown) < len(l.snap.Servers) {
		text = fmt.Sprintf("%d of %d shown · %s", len(shown), len(l.snap.Servers), text)
	}
	if l.summary.Text != text {
		l.summary.SetText(text)
	}

	changed := false
	for name := range l.marked {
		if l.row(name) < 0 {
			delete(l.marked, name)
			changed = true
		}
	}
	if l.current != "" && l.row(l.current) < 0 {
		l.current = ""
		changed = true
	}
	if l.current == "" && len(l.shown) > 0 {
		l.current = l.name(0)
		l.marked = map[string]bool{l.current: true}
		l.anchor = l.current
		changed = true
	}
	if l.current == "" {
		l.anchor = ""
	}
	if rows := l.rowsKey(); rows != l.drawn {
		l.drawn = rows
		l.list.Refresh()
	}
	if changed && l.onSelect != nil {
		l.onSelect()
	}
}

// rowsKey is what the rows show, as one string: the list is drawn again
// only when it changes.
func (l *serverList) rowsKey() string {
	var b strings.Builder
	for _, i := range l.shown {
		s := &l.snap.Servers[i]
		fmt.Fprintf(&b, "%s\x00%s\x00%v\x00%d\x00%v\x01", s.Name, present.SteadyDetail(s), dotColor(s), rank(s), l.marked[s.Name])
	}
	return b.String()
}

// row is the display row of a server, -1 when it is not shown.
func (l *serverList) row(name string) int {
	for r, i := range l.shown {
		if l.snap.Servers[i].Name == name {
			return r
		}
	}
	return -1
}

func (l *serverList) name(row int) string { return l.snap.Servers[l.shown[row]].Name }

// Selected lists the marked servers in display order.
func (l *serverList) Selected() []string {
	var out []string
	for r := range l.shown {
		if n := l.name(r); l.marked[n] {
			out = append(out, n)
		}
	}
	return out
}

// Select makes name the one selected server (when it is shown).
func (l *serverList) Select(name string) {
	r := l.row(name)
	if r < 0 && l.search.Text != "" {
		// Asked for from elsewhere (the tray): show it even if the search
		// hid it.
		l.search.SetText("")
		r = l.row(name)
	}
	if r < 0 {
		return
	}
	l.current, l.anchor = name, name
	l.marked = map[string]bool{name: true}
	l.list.ScrollTo(r)
	l.list.Refresh()
	if l.onSelect != nil {
		l.onSelect()
	}
}

// click selects a row as a mouse click does: alone, added or removed with
// Ctrl, a range from the last click with Shift.
func (l *serverList) click(row int, mod fyne.KeyModifier) {
	if row < 0 || row >= len(l.shown) {
		return
	}
	name := l.name(row)
	switch {
	case mod&fyne.KeyModifierShift != 0 && l.anchor != "" && l.row(l.anchor) >= 0:
		a := l.row(l.anchor)
		lo, hi := min(a, row), max(a, row)
		l.marked = map[string]bool{}
		for r := lo; r <= hi; r++ {
			l.marked[l.name(r)] = true
		}
		l.current = name
	case mod&(fyne.KeyModifierControl|fyne.KeyModifierSuper) != 0:
		if l.marked[name] && len(l.marked) > 1 {
			delete(l.marked, name)
			if l.current == name {
				l.current = l.Selected()[0]
			}
		} else {
			l.marked[name] = true
			l.current = name
		}
		l.anchor = name
	default:
		l.current, l.anchor = name, name
		l.marked = map[string]bool{name: true}
	}
	l.list.Refresh()
	if l.onSelect != nil {
		l.onSelect()
	}
}

// move moves the selection by delta rows (arrows, Page keys), extending it
// with Shift.
func (l *serverList) move(delta int, extend bool) {
	if len(l.shown) == 0 {
		return
	}
	r := l.row(l.current) + delta
	r = max(0, min(r, len(l.shown)-1))
	mod := fyne.KeyModifier(0)
	if extend {
		mod = fyne.KeyModifierShift
	}
	l.click(r, mod)
	l.list.ScrollTo(r)
}

// selectAll marks every server shown.
func (l *serverList) selectAll() {
	for r := range l.shown {
		l.marked[l.name(r)] = true
	}
	l.list.Refresh()
	if l.onSelect != nil {
		l.onSelect()
	}
}

// rowHeight is the height of one row: one line of text and a little air.
func rowHeight() float32 {
	return fyne.MeasureText("Mg", theme.TextSize(), fyne.TextStyle{Bold: true}).Height + 1.5*theme.Padding()
}

// serverRow is one line of the server list: a status dot, the name, and
// the state in words, ellipsised to the width.
type serverRow struct {
	widget.BaseWidget
	l      *serverList
	id     int
	mod    fyne.KeyModifier
	bg     *canvas.Rectangle
	dot    *canvas.Circle
	name   *canvas.Text
	detail *canvas.Text
	full   [2]string // the untruncated name and detail
}

func newServerRow(l *serverList) *serverRow {
	r := &serverRow{l: l, bg: canvas.NewRectangle(color.Transparent), dot: canvas.NewCircle(idleColor)}
	r.name = canvas.NewText("", theme.Color(theme.ColorNameForeground))
	r.name.TextStyle.Bold = true
	r.detail = canvas.NewText("", theme.Color(theme.ColorNamePlaceHolder))
	r.ExtendBaseWidget(r)
	return r
}

func (r *serverRow) set(id int, s *supervisor.ServerState, marked bool) {
	r.id = id
	r.full = [2]string{s.Name, present.SteadyDetail(s)}
	r.dot.FillColor = dotColor(s)
	if marked {
		r.bg.FillColor = theme.Color(theme.ColorNameSelection)
	} else {
		r.bg.FillColor = color.Transparent
	}
	r.name.Color = theme.Color(theme.ColorNameForeground)
	r.detail.Color = theme.Color(theme.ColorNamePlaceHolder)
	switch rank(s) {
	case 0:
		r.detail.Color = theme.Color(theme.ColorNameError)
	case 1:
		r.detail.Color = theme.Color(theme.ColorNameWarning)
	}
	r.Refresh()
}

func (r *serverRow) MouseDown(e *desktop.MouseEvent) { r.mod = e.Modifier }
func (r *serverRow) MouseUp(*desktop.MouseEvent)     {}
func (r *serverRow) Tapped(*fyne.PointEvent) {
	r.l.click(r.id, r.mod)
	r.mod = 0
}
func (r *serverRow) DoubleTapped(*fyne.PointEvent) {
	if r.id < len(r.l.shown) && r.l.onOpen != nil {
		r.l.onOpen(r.l.name(r.id))
	}
}

func (r *serverRow) CreateRenderer() fyne.WidgetRenderer {
	return &serverRowRenderer{r: r, objects: []fyne.CanvasObject{r.bg, r.dot, r.name, r.detail}}
}

type serverRowRenderer struct {
	r       *serverRow
	objects []fyne.CanvasObject
}

func (rr *serverRowRenderer) Destroy()                     {}
func (rr *serverRowRenderer) Objects() []fyne.CanvasObject { return rr.objects }
func (rr *serverRowRenderer) MinSize() fyne.Size           { return fyne.NewSize(120, rowHeight()) }
func (rr *serverRowRenderer) Refresh() {
	rr.Layout(rr.r.Size())
	for _, o := range rr.objects {
		o.Refresh()
	}
}

func (rr *serverRowRenderer) Layout(size fyne.Size) {
	r, pad := rr.r, theme.Padding()
	r.bg.Resize(size)
	const dot = 10
	r.dot.Resize(fyne.NewSize(dot, dot))
	r.dot.Move(fyne.NewPos(2*pad, (size.Height-dot)/2))
	x := 2*pad + dot + 2*pad
	avail := size.Width - x - 2*pad
	// The name gets what it needs up to 60% of the row; the state the rest.
	nameW := min(fyne.MeasureText(r.full[0], r.name.TextSize, r.name.TextStyle).Width, avail*0.6)
	r.name.Text = ellipsis(r.full[0], nameW, r.name.TextSize, r.name.TextStyle)
	r.name.Resize(fyne.NewSize(nameW, size.Height))
	r.name.Move(fyne.NewPos(x, 0))
	detailX := x + nameW + 2*pad
	detailW := max(0, size.Width-detailX-2*pad)
	r.detail.Text = ellipsis(r.full[1], detailW, r.detail.TextSize, r.detail.TextStyle)
	r.detail.Resize(fyne.NewSize(detailW, size.Height))
	r.detail.Move(fyne.NewPos(detailX, 0))
}

// ellipsis shortens text with "…" to fit width.
func ellipsis(text string, width, size float32, style fyne.TextStyle) string {
	if fyne.MeasureText(text, size, style).Width <= width {
		return text
	}
	runes := []rune(text)
	lo, hi := 0, len(runes)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if fyne.MeasureText(string(runes[:mid])+"…", size, style).Width <= width {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	if lo == 0 {
		return ""
	}
	return string(runes[:lo]) + "…"
}

// searchEntry is the list's search field. Up and Down move the selection
// while typing, Enter goes to the list, Escape clears; the window's
// shortcuts still work while it has focus.
type searchEntry struct {
	widget.Entry
	l *serverList
}

func newSearchEntry(l *serverList) *searchEntry {
	e := &searchEntry{l: l}
	e.ExtendBaseWidget(e)
	return e
}

func (e *searchEntry) TypedKey(k *fyne.KeyEvent) {
	switch k.Name {
	case fyne.KeyUp:
		e.l.move(-1, false)
	case fyne.KeyDown:
		e.l.move(1, false)
	case fyne.KeyReturn, fyne.KeyEnter:
		if c := fyne.CurrentApp().Driver().CanvasForObject(e); c != nil {
			c.Unfocus()
		}
	case fyne.KeyEscape:
		if e.Text != "" {
			e.SetText("")
		} else if c := fyne.CurrentApp().Driver().CanvasForObject(e); c != nil {
			c.Unfocus()
		}
	default:
		e.Entry.TypedKey(k)
	}
}

func (e *searchEntry) TypedShortcut(s fyne.Shortcut) {
	if _, ok := s.(*desktop.CustomShortcut); ok && e.l.shortcut != nil && e.l.shortcut(s) {
		return
	}
	e.Entry.TypedShortcut(s)
}
