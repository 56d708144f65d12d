package gui

import (
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/systray"
)

// trayView keeps the tray menu on screen in step with the model it is given,
// through the systray the Fyne driver runs. Fyne's own SetSystemTrayMenu
// removes every item and adds it again, with new ids, on each call: a tray
// host then re-reads the whole menu, and a click on an id it read just
// before is lost (a host busy or starved of CPU can show a menu it read
// seconds ago). trayView changes only the items whose label or state
// changed, so ids stay; it rebuilds the menu only when its shape changes,
// which the model keeps to a change in the set of servers (a server moving
// between the problems and the healthy ones is hidden in one place and
// shown in the other). A hidden item's submenu is made the first time the
// item is shown, so the places a server never takes cost one item each.
// Changes are coalesced to one update every minGap. UI thread only.
type trayView struct {
	started bool
	ready   bool                  // Fyne's systray is up and has reset the menu: the items are ours
	stopped bool                  // the app quits: the menu is left as it is
	shape   string                // the shape on screen: the keys in order
	items   map[string]*trayEntry // on screen, by path of keys
	gen     int                   // counts rebuilds: a listener of an older one is done
	pending []trayNode            // the model waiting for minGap to pass
	waiting bool                  // an update of pending is scheduled
	last    time.Time             // when the menu last changed
	minGap  time.Duration
	updates int // how many times the menu changed (tests)
}

// trayTitle is the tray item's title, the app's name.
const trayTitle = "mcptray"

type trayEntry struct {
	item     *systray.MenuItem
	label    string
	disabled bool
	hidden   bool
	built    bool // its submenu's items are made: it has been shown
	action   func()
}

func newTrayView() *trayView {
	return &trayView{items: map[string]*trayEntry{}, minGap: 400 * time.Millisecond}
}

// set shows the model, now or, within minGap of the last change, once
// minGap has passed (the latest model then).
func (v *trayView) set(start func(), model []trayNode) {
	if !v.started {
		// Fyne starts its systray on the first menu it is given, and
		// resets the menu once more as the systray comes up: the items
		// are ours once it has. A hidden item tells when (the reset
		// closes its channel). It has a child because the systray's
		// reset spares the item added last.
		v.started = true
		start()
		sentinel := &trayEntry{item: systray.AddMenuItem("", "")}
		sentinel.item.Hide()
		sentinel.item.AddSubMenuItem("", "")
		go v.listen(sentinel, v.gen)
	}
	v.pending = model
	if !v.ready {
		return
	}
	if v.waiting {
		return
	}
	if wait := v.minGap - time.Since(v.last); wait > 0 {
		v.waiting = true
		time.AfterFunc(wait, func() {
			fyne.Do(func() {
				v.waiting = false
				v.flush()
			})
		})
		return
	}
	v.flush()
}

// stop leaves the menu alone from now on (the app quits).
func (v *trayView) stop() { v.stopped = true }

// flush shows the pending model.
func (v *trayView) flush() {
	model := v.pending
	if model == nil || v.stopped {
		return
	}
	if shape := trayShape(model, ""); shape != v.shape {
		v.rebuild(model, shape)
		return
	}
	changed := false
	var walk func(nodes []trayNode, prefix string)
	walk = func(nodes []trayNode, prefix string) {
		for _, n := range nodes {
			if n.sep {
				continue
			}
			path := prefix + n.key
			e := v.items[path]
			e.action = n.action
			if n.hidden {
				// Off screen it stays as it was (each change is a
				// signal every host acts on); it is brought up to
				// date as it is shown again.
				if !e.hidden {
					e.hidden = true
					e.item.Hide()
					changed = true
				}
				continue
			}
			if e.label != n.label {
				e.label = n.label
				e.item.SetTitle(n.label)
				changed = true
			}
			if e.disabled != n.disabled {
				e.disabled = n.disabled
				if n.disabled {
					e.item.Disable()
				} else {
					e.item.Enable()
				}
				changed = true
			}
			if e.built {
				walk(n.children, path+"/")
			} else {
				v.add(n.children, e.item, path+"/")
				e.built = true
				changed = true
			}
			if e.hidden {
				e.hidden = false
				e.item.Show()
				changed = true
			}
		}
	}
	walk(model, "")
	if changed {
		v.last = time.Now()
		v.updates++
	}
}

// trayShape is the model's keys in menu order, with where submenus start
// and end: two models of one shape differ only in labels and states.
func trayShape(nodes []trayNode, prefix string) string {
	var b strings.Builder
	for _, n := range nodes {
		if n.sep {
			b.WriteString("-|")
			continue
		}
		b.WriteString(prefix + n.key + "|")
		if len(n.children) > 0 {
			b.WriteString("(" + trayShape(n.children, prefix+n.key+"/") + ")")
		}
	}
	return b.String()
}

// rebuild replaces every item.
func (v *trayView) rebuild(model []trayNode, shape string) {
	v.gen++
	systray.ResetMenu()
	v.items = map[string]*trayEntry{}
	v.shape = shape
	v.add(model, nil, "")
	// The systray's reset spares the item added last: let that be a
	// hidden one, not a real item whose listener would live on.
	systray.AddMenuItem("", "").Hide()
	v.last = time.Now()
	v.updates++
}

func (v *trayView) add(nodes []trayNode, parent *systray.MenuItem, prefix string) {
	for _, n := range nodes {
		if n.sep {
			if parent != nil {
				parent.AddSeparator()
			} else {
				systray.AddSeparator()
			}
			continue
		}
		var item *systray.MenuItem
		if parent != nil {
			item = parent.AddSubMenuItem(n.label, "")
		} else {
			item = systray.AddMenuItem(n.label, "")
		}
		if n.disabled {
			item.Disable()
		}
		if n.hidden {
			item.Hide()
		}
		e := &trayEntry{item: item, label: n.label, disabled: n.disabled, hidden: n.hidden, built: !n.hidden, action: n.action}
		path := prefix + n.key
		v.items[path] = e
		if e.built {
			v.add(n.children, item, path+"/")
		}
		go v.listen(e, v.gen)
	}
}

// listen runs an item's action on each click. The item's channel closes
// when the item is removed: by a rebuild (a newer gen), or by Fyne resetting
// the menu as its systray comes up, and then the menu is built again.
func (v *trayView) listen(e *trayEntry, gen int) {
	for range e.item.ClickedCh {
		fyne.Do(func() {
			if gen == v.gen && e.action != nil {
				e.action()
			}
		})
	}
	fyne.Do(func() {
		if gen == v.gen {
			if !v.ready {
				// Fyne sets the title as its systray comes up, racing
				// the systray's export of its properties, and the title
				// can be lost (a host then shows none): set it again
				// now that they are on the bus.
				systray.SetTitle(trayTitle)
			}
			v.ready = true
			v.shape = ""
			v.flush()
		}
	})
}
