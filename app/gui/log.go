package gui

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"mcptray/app/present"
	"mcptray/control"
	"mcptray/supervisor"
)

// logViewLimit caps the lines the log view keeps (the engine's ring holds
// the full history up to its own cap).
const logViewLimit = 10000

// logView shows one server's stderr: follow, pause, search, copy, save. It
// polls the engine at most a few times a second and appends in batches, so a
// server writing megabytes a second does not freeze the UI.
type logView struct {
	eng    control.Engine
	window func() fyne.Window

	mu     sync.Mutex // guards server and since, read by the poller
	server string
	since  uint64

	// UI-thread state.
	lines    []supervisor.LogLine
	shown    []int // indexes into lines that match the filter
	filter   string
	paused   bool
	follow   bool
	list     *widget.List
	search   *widget.Entry
	status   *widget.Label
	followCh *widget.Check
	// scrolledAway: following stopped because the person scrolled up; it
	// resumes when they scroll back to the bottom.
	scrolledAway bool
	tall         map[int]bool  // display rows given more than one line's height
	asked        dialog.Dialog // the last Save question (tests)
	pauseBtn     *widget.Button
	content      fyne.CanvasObject
}

func newLogView(eng control.Engine, window func() fyne.Window) *logView {
	v := &logView{eng: eng, window: window, follow: true}
	v.list = widget.NewList(
		func() int { return len(v.shown) },
		func() fyne.CanvasObject {
			l := widget.NewLabel("")
			l.TextStyle = fyne.TextStyle{Monospace: true}
			l.Wrapping = fyne.TextWrapBreak // long lines wrap (setHeights sizes their rows)
			return l
		},
		func(id widget.ListItemID, o fyne.CanvasObject) {
			if id < len(v.shown) {
				ln := v.lines[v.shown[id]]
				o.(*widget.Label).SetText(logLine(ln))
			}
		})
	v.list.OnSelected = func(id widget.ListItemID) {
		// Selecting a line stops following, so it stays in view.
		v.followCh.SetChecked(false)
	}
	v.search = widget.NewEntry()
	v.search.SetPlaceHolder("Filter the log: only lines holding this")
	v.search.OnChanged = func(s string) { v.filter = strings.ToLower(s); v.refilter() }
	v.followCh = widget.NewCheck("Follow", nil)
	v.followCh.Checked = true
	v.followCh.OnChanged = func(b bool) {
		v.follow = b
		v.scrolledAway = false
		if b {
			v.scrollToEnd()
		}
	}
	v.pauseBtn = widget.NewButtonWithIcon("Pause", theme.MediaPauseIcon(), nil)
	v.pauseBtn.OnTapped = func() {
		v.paused = !v.paused
		if v.paused {
			v.pauseBtn.SetText("Resume")
			v.pauseBtn.SetIcon(theme.MediaPlayIcon())
		} else {
			v.pauseBtn.SetText("Pause")
			v.pauseBtn.SetIcon(theme.MediaPauseIcon())
			v.refilter()
		}
	}
	copyBtn := widget.NewButtonWithIcon("Copy", theme.ContentCopyIcon(), func() {
		fyne.CurrentApp().Clipboard().SetContent(v.text())
		v.status.SetText("copied " + present.Plural(len(v.shown), "line"))
	})
	saveBtn := widget.NewButtonWithIcon("Save…", theme.DocumentSaveIcon(), v.save)
	v.status = widget.NewLabel("")
	v.status.Importance = widget.LowImportance
	bar := container.NewBorder(nil, nil, nil, container.NewHBox(v.followCh, v.pauseBtn, copyBtn, saveBtn), v.search)
	v.content = container.NewBorder(bar, v.status, nil, nil, v.list)
	return v
}

// SetServer switches the view to another server (UI thread).
func (v *logView) SetServer(name string) {
	v.mu.Lock()
	changed := v.server != name
	v.server = name
	if changed {
		v.since = 0
	}
	v.mu.Unlock()
	if changed {
		v.lines, v.shown = nil, nil
		v.list.UnselectAll()
		// Each server starts unfiltered and following.
		v.search.SetText("")
		v.followCh.SetChecked(true)
		v.list.Refresh()
		v.status.SetText("")
	}
}

// poll fetches new lines (any goroutine) and hands them to the UI thread.
func (v *logView) poll() {
	v.mu.Lock()
	name, since := v.server, v.since
	v.mu.Unlock()
	if name == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	lines, next, err := v.eng.Log(ctx, name, since)
	if err != nil || len(lines) == 0 {
		return
	}
	v.mu.Lock()
	if v.server != name || v.since != since {
		v.mu.Unlock()
		return // switched server meanwhile
	}
	v.since = next
	v.mu.Unlock()
	fyne.Do(func() { v.append(name, lines) })
}

func (v *logView) append(name string, lines []supervisor.LogLine) {
	v.mu.Lock()
	current := v.server == name
	v.mu.Unlock()
	if !current {
		return
	}
	// While paused, lines are kept but the display stays still.
	v.lines = append(v.lines, lines...)
	v.trim()
	if !v.paused {
		v.refilter()
	}
}

func (v *logView) trim() {
	if over := len(v.lines) - logViewLimit; over > 0 {
		v.lines = append(v.lines[:0:0], v.lines[over:]...)
	}
}

func (v *logView) refilter() {
	v.shown = v.shown[:0]
	for i, l := range v.lines {
		if v.filter == "" || strings.Contains(strings.ToLower(l.Text), v.filter) {
			v.shown = append(v.shown, i)
		}
	}
	v.setHeights()
	v.list.Refresh()
	if v.follow {
		v.scrollToEnd()
	}
	if v.filter != "" {
		v.status.SetText(fmt.Sprintf("%d of %s hold %q", len(v.shown), present.Plural(len(v.lines), "line"), v.search.Text))
	} else {
		v.status.SetText(present.Plural(len(v.shown), "line"))
	}
}

func (v *logView) scrollToEnd() {
	if n := len(v.shown); n > 0 {
		v.list.ScrollTo(n - 1)
	}
}

// text is the shown lines, as a person would paste them.
func (v *logView) text() string { return v.textOf(v.shown) }

// allText is every line kept, filtered or not.
func (v *logView) allText() string {
	all := make([]int, len(v.lines))
	for i := range all {
		all[i] = i
	}
	return v.textOf(all)
}

func (v *logView) textOf(idx []int) string {
	var b strings.Builder
	for _, i := range idx {
		l := v.lines[i]
		b.WriteString(l.Time.Format("2006-01-02T15:04:05.000Z07:00") + " " + l.Text + "\n")
	}
	return b.String()
}

// save writes the log to a file; with a filter on, it asks first whether
// all lines or the filtered ones.
func (v *logView) save() {
	w := v.window()
	if w == nil {
		return
	}
	if v.filter == "" || len(v.shown) == len(v.lines) {
		v.saveText(v.allText(), "")
		return
	}
	d := dialog.NewCustomConfirm("Save the log", fmt.Sprintf("All %d lines", len(v.lines)), fmt.Sprintf("The %d filtered lines", len(v.shown)),
		widget.NewLabel(fmt.Sprintf("The filter %q shows %d of %d lines. Which should the file hold?", v.search.Text, len(v.shown), len(v.lines))),
		func(all bool) {
			if all {
				v.saveText(v.allText(), "")
			} else {
				v.saveText(v.text(), "-filtered")
			}
		}, w)
	v.asked = d
	d.Show()
}

func (v *logView) saveText(data, suffix string) {
	w := v.window()
	d := dialog.NewFileSave(func(wc fyne.URIWriteCloser, err error) {
		if err != nil || wc == nil {
			return
		}
		defer wc.Close()
		if _, err := wc.Write([]byte(data)); err != nil {
			dialog.ShowError(err, w)
			return
		}
		v.status.SetText("saved to " + wc.URI().Path())
	}, w)
	v.mu.Lock()
	d.SetFileName(v.server + suffix + ".log")
	v.mu.Unlock()
	d.Show()
}
