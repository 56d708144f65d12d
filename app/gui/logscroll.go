package gui

import (
	"math"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"

	"mcptray/app/present"
	"mcptray/supervisor"
)

// logLine is a line as the log view shows it.
func logLine(l supervisor.LogLine) string {
	return l.Time.Format(time.TimeOnly+".000") + "  " + present.VisibleLine(l.Text)
}

// setHeights gives each shown line that does not fit the list's width the
// height of its wrapped rows (a List's rows are one height unless told).
func (v *logView) setHeights() {
	width := v.list.Size().Width - 2*theme.InnerPadding() - theme.ScrollBarSize()
	base := v.list.CreateItem().MinSize().Height
	style := fyne.TextStyle{Monospace: true}
	lineH := fyne.MeasureText("M", theme.TextSize(), style).Height
	tall := map[int]bool{}
	for id, i := range v.shown {
		if width <= 0 {
			break
		}
		w := fyne.MeasureText(logLine(v.lines[i]), theme.TextSize(), style).Width
		if w <= width {
			continue
		}
		rows := float32(math.Ceil(float64(w / width)))
		v.list.SetItemHeight(id, base+(rows-1)*lineH)
		tall[id] = true
	}
	for id := range v.tall {
		if !tall[id] {
			v.list.SetItemHeight(id, base)
		}
	}
	v.tall = tall
}

// followScroll stops following when the person scrolled up from the
// bottom, and resumes it when they scroll back down to it (UI thread; the
// controller calls it while the Log tab is shown).
func (v *logView) followScroll() {
	if len(v.shown) == 0 {
		return
	}
	off := v.list.GetScrollOffset()
	// The offset of the bottom: scroll there and back, within one frame.
	v.list.ScrollToBottom()
	bottom := v.list.GetScrollOffset()
	atBottom := off >= bottom-1
	if !atBottom {
		v.list.ScrollToOffset(off)
	}
	switch {
	case v.follow && !atBottom:
		v.followCh.SetChecked(false)
		v.scrolledAway = true
	case !v.follow && v.scrolledAway && atBottom:
		v.followCh.SetChecked(true)
	}
}
