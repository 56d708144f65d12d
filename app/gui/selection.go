package gui

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// bulkPanel takes the place of the details while several servers are
// selected: what is selected, and the actions that apply to all of them.
type bulkPanel struct {
	m       *mainWindow
	names   []string
	title   *widget.Label
	list    *widget.Label
	start   *widget.Button
	stop    *widget.Button
	restart *widget.Button
	remove  *widget.Button
	content fyne.CanvasObject
}

func newBulkPanel(m *mainWindow) *bulkPanel {
	b := &bulkPanel{m: m}
	b.title = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	b.title.SizeName = theme.SizeNameSubHeadingText
	b.list = widget.NewLabel("")
	b.start = widget.NewButtonWithIcon("Start all", theme.MediaPlayIcon(), func() { m.bulk.each(func(n string) { m.c.startStop(n, true) }) })
	b.stop = widget.NewButtonWithIcon("Stop all", theme.MediaStopIcon(), func() { m.bulk.each(func(n string) { m.c.startStop(n, false) }) })
	b.restart = widget.NewButtonWithIcon("Restart all", theme.ViewRefreshIcon(), func() { m.bulk.each(m.c.restart) })
	b.remove = widget.NewButtonWithIcon("Remove…", theme.DeleteIcon(), func() { m.c.removeServers(b.names) })
	hint := widget.NewLabel("Ctrl+click adds or removes a server, Shift+click selects a range, Ctrl+A selects every server shown, Ctrl+R restarts the selected, Delete removes them.")
	hint.Wrapping = fyne.TextWrapWord
	// The names scroll: thirty of them made the window taller than the
	// screen.
	b.content = container.NewBorder(container.NewVBox(b.title, container.NewHBox(b.start, b.stop, b.restart, b.remove), widget.NewSeparator()),
		hint, nil, nil, container.NewVScroll(b.list))
	b.content.Hide()
	return b
}

// Set shows the servers selected, in list order.
func (b *bulkPanel) Set(names []string) {
	b.names = names
	b.title.SetText(fmt.Sprintf("%d servers selected", len(names)))
	var lines []string
	for _, n := range names {
		line := n
		if s := b.m.snap.Server(n); s != nil {
			line = "• " + n + ": " + countWord(s)
		}
		lines = append(lines, line)
	}
	b.list.SetText(strings.Join(lines, "\n"))
}

func (b *bulkPanel) each(fn func(name string)) {
	for _, n := range b.names {
		fn(n)
	}
}

// Keyboard: the window's shortcuts, and the keys the list takes when no
// field has the focus.

var (
	shortcutFind      = &desktop.CustomShortcut{KeyName: fyne.KeyF, Modifier: fyne.KeyModifierShortcutDefault}
	shortcutRestart   = &desktop.CustomShortcut{KeyName: fyne.KeyR, Modifier: fyne.KeyModifierShortcutDefault}
	shortcutSelectAll = &desktop.CustomShortcut{KeyName: fyne.KeyA, Modifier: fyne.KeyModifierShortcutDefault}
	shortcutClose     = &desktop.CustomShortcut{KeyName: fyne.KeyW, Modifier: fyne.KeyModifierShortcutDefault}
)

// installKeys puts the window's keyboard handling in place.
func (m *mainWindow) installKeys() {
	cv := m.win.Canvas()
	for _, s := range []fyne.Shortcut{shortcutFind, shortcutRestart, shortcutSelectAll, &fyne.ShortcutSelectAll{}, shortcutClose} {
		cv.AddShortcut(s, func(sc fyne.Shortcut) { m.shortcut(sc) })
	}
	cv.SetOnTypedKey(m.typedKey)
}

// shortcut runs a window shortcut; false when sc is none of them.
func (m *mainWindow) shortcut(sc fyne.Shortcut) bool {
	if sc.ShortcutName() == shortcutClose.ShortcutName() {
		// Ctrl+W closes the window, dialogs and all, as its close button
		// does: the app goes on in the tray.
		m.c.closeMain()
		return true
	}
	if m.win.Canvas().Overlays().Top() != nil {
		return false // a dialog is open: the list is not what is edited
	}
	switch sc.ShortcutName() {
	case shortcutFind.ShortcutName():
		m.win.Canvas().Focus(m.servers.search)
	case shortcutRestart.ShortcutName():
		for _, n := range m.servers.Selected() {
			m.c.restart(n)
		}
	case shortcutSelectAll.ShortcutName(), (&fyne.ShortcutSelectAll{}).ShortcutName():
		// The desktop driver turns Ctrl+A into Fyne's own select-all.
		if m.win.Canvas().Focused() == m.servers.search {
			return false // the field's own select-all
		}
		m.servers.selectAll()
	default:
		return false
	}
	return true
}

// typedKey takes the keys typed while no field has the focus: arrows and
// Page keys move through the list (Shift extends), Enter opens the
// details, Delete asks to remove the selected servers.
func (m *mainWindow) typedKey(k *fyne.KeyEvent) {
	if m.win.Canvas().Overlays().Top() != nil {
		// Escape answers a confirmation "no", as its Cancel button does,
		// and closes the dialog on top, as its Close button does.
		if k.Name == fyne.KeyEscape {
			m.c.escapeTop()
		}
		return
	}
	extend := false
	if d, ok := fyne.CurrentApp().Driver().(desktop.Driver); ok {
		extend = d.CurrentKeyModifiers()&fyne.KeyModifierShift != 0
	}
	page := max(1, int(m.servers.list.Size().Height/rowHeight())-1)
	switch k.Name {
	case fyne.KeyUp:
		m.servers.move(-1, extend)
	case fyne.KeyDown:
		m.servers.move(1, extend)
	case fyne.KeyPageUp:
		m.servers.move(-page, extend)
	case fyne.KeyPageDown:
		m.servers.move(page, extend)
	case fyne.KeyHome:
		m.servers.move(-len(m.servers.shown), extend)
	case fyne.KeyEnd:
		m.servers.move(len(m.servers.shown), extend)
	case fyne.KeyReturn, fyne.KeyEnter:
		if m.selected != "" {
			m.showTab("Overview")
		}
	case fyne.KeyDelete:
		if sel := m.servers.Selected(); len(sel) > 0 {
			m.c.removeServers(sel)
		}
	}
}
