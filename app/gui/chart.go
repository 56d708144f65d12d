package gui

import (
	"image/color"
	"slices"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"mcptray/app/present"
)

// latencyChart draws the last probes' latencies as bars, newest on the
// right, scaled to the largest, with a dashed p95 line.
type latencyChart struct {
	widget.BaseWidget
	samples []time.Duration
	p95     time.Duration
}

func newLatencyChart() *latencyChart {
	c := &latencyChart{}
	c.ExtendBaseWidget(c)
	return c
}

// SetSamples replaces the data (UI thread).
func (c *latencyChart) SetSamples(samples []time.Duration, p95 time.Duration) {
	if p95 == c.p95 && slices.Equal(samples, c.samples) {
		return
	}
	c.samples = slices.Clone(samples)
	c.p95 = p95
	c.Refresh()
}

func (c *latencyChart) CreateRenderer() fyne.WidgetRenderer {
	r := &chartRenderer{c: c, bg: canvas.NewRectangle(color.Transparent), axis: canvas.NewLine(theme.Color(theme.ColorNameDisabled)),
		empty:    canvas.NewText("no probes yet", theme.Color(theme.ColorNamePlaceHolder)),
		maxLabel: canvas.NewText("", theme.Color(theme.ColorNamePlaceHolder)),
		p95Line:  canvas.NewLine(color.NRGBA{0xd1, 0x24, 0x2f, 0xb0})}
	r.bg.StrokeColor = theme.Color(theme.ColorNameSeparator)
	r.bg.StrokeWidth = 1
	r.maxLabel.TextSize = theme.CaptionTextSize()
	r.p95Line.StrokeWidth = 1
	return r
}

type chartRenderer struct {
	c        *latencyChart
	bg       *canvas.Rectangle
	axis     *canvas.Line
	empty    *canvas.Text
	maxLabel *canvas.Text
	p95Line  *canvas.Line
	bars     []*canvas.Rectangle
}

func (r *chartRenderer) Layout(size fyne.Size) {
	r.bg.Resize(size)
	pad := theme.Padding()
	top := pad + r.maxLabel.MinSize().Height
	h := size.Height - top - pad
	w := size.Width - 2*pad
	r.axis.Position1 = fyne.NewPos(pad, size.Height-pad)
	r.axis.Position2 = fyne.NewPos(size.Width-pad, size.Height-pad)
	r.empty.Move(fyne.NewPos((size.Width-r.empty.MinSize().Width)/2, (size.Height-r.empty.MinSize().Height)/2))
	r.maxLabel.Move(fyne.NewPos(pad, pad/2))

	n := len(r.c.samples)
	for len(r.bars) < n {
		b := canvas.NewRectangle(theme.Color(theme.ColorNamePrimary))
		r.bars = append(r.bars, b)
	}
	r.bars = r.bars[:n]
	if n == 0 || h <= 0 {
		return
	}
	var max time.Duration
	for _, s := range r.c.samples {
		max = maxDur(max, s)
	}
	max = maxDur(max, r.c.p95)
	if max <= 0 {
		max = time.Millisecond
	}
	r.maxLabel.Text = "max " + present.FormatLatency(max)
	slot := w / 100 // room for 100 probes, newest on the right
	gap := float32(1)
	if slot < 3 {
		gap = 0
	}
	for i, s := range r.c.samples {
		bh := float32(float64(h) * float64(s) / float64(max))
		if bh < 1 {
			bh = 1
		}
		x := pad + w - float32(n-i)*slot
		r.bars[i].Move(fyne.NewPos(x, size.Height-pad-bh))
		r.bars[i].Resize(fyne.NewSize(slot-gap, bh))
	}
	y := size.Height - pad - float32(float64(h)*float64(r.c.p95)/float64(max))
	r.p95Line.Position1 = fyne.NewPos(pad, y)
	r.p95Line.Position2 = fyne.NewPos(size.Width-pad, y)
}

func maxDur(a, b time.Duration) time.Duration {
	if a > b {
		return a
	}
	return b
}

func (r *chartRenderer) MinSize() fyne.Size { return fyne.NewSize(200, 120) }

func (r *chartRenderer) Refresh() {
	r.empty.Hidden = len(r.c.samples) > 0
	r.maxLabel.Hidden = len(r.c.samples) == 0
	r.p95Line.Hidden = len(r.c.samples) == 0 || r.c.p95 <= 0
	r.Layout(r.c.Size())
	for _, b := range r.bars {
		b.FillColor = theme.Color(theme.ColorNamePrimary)
	}
	canvas.Refresh(r.c)
}

func (r *chartRenderer) Objects() []fyne.CanvasObject {
	objs := []fyne.CanvasObject{r.bg, r.axis, r.empty, r.maxLabel}
	for _, b := range r.bars {
		objs = append(objs, b)
	}
	return append(objs, r.p95Line)
}

func (r *chartRenderer) Destroy() {}
