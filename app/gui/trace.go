package gui

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"mcptray/app/present"
	"mcptray/gateway"
)

// traceViewLimit caps the frames the Trace tab keeps (the daemon keeps the
// last 1000 per server).
const traceViewLimit = 1000

// traceColumns are the Trace tab's columns and their widths.
var traceColumns = []struct {
	title string
	width float32
}{{"Time", 100}, {"Session", 125}, {"Direction", 125}, {"Method", 130}, {"Result", 115}, {"Body", 900}}

// traceView is a server's Trace tab: the protocol frames the daemon
// exchanged for it (client sessions to mcptray, mcptray to the server, and
// back; secrets already masked by the daemon), followed live while the tab
// is on screen, with a pause, a filter, and health-check pings hidden on
// request. Frames arrive on a goroutine and are shown in batches from the
// window's tick, so a busy server cannot flood the UI thread.
type traceView struct {
	c   *controller
	src gatewaySource // nil: no daemon, no trace
	// profile: the frames of a profile's aggregate sessions (its clients
	// and mcptray), not of a server.
	profile bool

	mu      sync.Mutex // guards the fields below, written by the follower
	gen     int        // the follower's generation: an older one's frames are dropped
	pending []gateway.Frame
	problem string // why the follower cannot follow ("" while it does)

	// UI-thread state.
	server     string             // whose frames are shown
	cancel     context.CancelFunc // ends the follower (nil: none runs)
	frames     []gateway.Frame
	shown      []int // indexes into frames that pass the filters
	hideHealth bool
	filter     string
	paused     bool
	held       int // frames received while paused
	table      *widget.Table
	search     *widget.Entry
	health     *widget.Check
	pauseBtn   *widget.Button
	status     *widget.Label
	detail     *widget.Label
	none       *widget.Label
	content    fyne.CanvasObject
}

func newTraceView(c *controller, src gatewaySource, profile bool) *traceView {
	v := &traceView{c: c, src: src, profile: profile, hideHealth: true}
	v.table = widget.NewTableWithHeaders(
		func() (int, int) { return len(v.shown), len(traceColumns) },
		func() fyne.CanvasObject {
			l := widget.NewLabel("")
			l.Truncation = fyne.TextTruncateEllipsis
			return l
		},
		func(id widget.TableCellID, o fyne.CanvasObject) {
			if id.Row < len(v.shown) {
				o.(*widget.Label).SetText(v.cellText(v.frames[v.shown[id.Row]], id.Col))
			}
		})
	v.table.ShowHeaderColumn = false
	v.table.CreateHeader = func() fyne.CanvasObject {
		return widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	}
	v.table.UpdateHeader = func(id widget.TableCellID, o fyne.CanvasObject) {
		if id.Col >= 0 && id.Col < len(traceColumns) {
			o.(*widget.Label).SetText(traceColumns[id.Col].title)
		}
	}
	for i, c := range traceColumns {
		v.table.SetColumnWidth(i, c.width)
	}
	v.table.OnSelected = func(id widget.TableCellID) {
		if id.Row >= 0 && id.Row < len(v.shown) {
			v.detail.SetText(frameDetail(v.frames[v.shown[id.Row]]))
		}
	}
	v.search = widget.NewEntry()
	v.search.SetPlaceHolder("Filter the trace: method, session or body holding this")
	v.search.OnChanged = func(s string) { v.filter = strings.ToLower(s); v.refilter() }
	v.health = widget.NewCheck("Hide health checks", func(b bool) { v.hideHealth = b; v.refilter() })
	v.health.Checked = true
	v.pauseBtn = widget.NewButtonWithIcon("Pause", theme.MediaPauseIcon(), v.togglePause)
	v.status = widget.NewLabel("")
	v.status.Importance = widget.LowImportance
	v.detail = widget.NewLabel("Select a frame to see its body.")
	v.detail.TextStyle = fyne.TextStyle{Monospace: true}
	v.detail.Wrapping = fyne.TextWrapBreak
	v.detail.Selectable = true
	v.none = widget.NewLabel("")
	v.none.Wrapping = fyne.TextWrapWord
	v.none.Hide()
	bar := container.NewBorder(nil, nil, nil, container.NewHBox(v.health, v.pauseBtn), v.search)
	detail := container.NewVScroll(v.detail)
	detail.SetMinSize(fyne.NewSize(0, 110))
	split := container.NewVSplit(v.table, detail)
	split.Offset = 0.78
	v.content = container.NewBorder(container.NewVBox(v.none, bar), v.status, nil, nil, split)
	if src == nil {
		showText(v.none, "The protocol trace is kept by the background service, which is not running: the servers run in this app.")
	}
	return v
}

// follow keeps the follower on server name while on (the tab is on
// screen), and stops it otherwise (UI thread).
func (v *traceView) follow(name string, on bool) {
	if !on || name == "" || v.src == nil {
		v.stop()
		return
	}
	if name == v.server && v.cancel != nil {
		return
	}
	v.stop()
	if name != v.server {
		v.detail.SetText("Select a frame to see its body.")
		v.table.UnselectAll()
	}
	v.server, v.frames, v.held = name, nil, 0
	ctx, cancel := context.WithCancel(context.Background())
	v.cancel = cancel
	v.mu.Lock()
	v.gen++
	gen := v.gen
	v.pending, v.problem = nil, ""
	v.mu.Unlock()
	v.refilter()
	go v.run(ctx, name, gen)
}

// stop ends the follower (UI thread).
func (v *traceView) stop() {
	if v.cancel != nil {
		v.cancel()
		v.cancel = nil
	}
}

// run reads server (or profile) name's trace, then follows it until ctx
// ends; a lost stream (the daemon restarting) is taken up again each
// second.
func (v *traceView) run(ctx context.Context, name string, gen int) {
	read, follow := v.src.Trace, v.src.FollowTrace
	if v.profile {
		read, follow = v.src.ProfileTrace, v.src.FollowProfileTrace
	}
	var since uint64
	for {
		page, err := read(ctx, name, since)
		if err == nil {
			if page.Next < since {
				// A new daemon numbers its frames from 1 again.
				since = 0
				continue
			}
			v.add(gen, page.Frames, "")
			since = page.Next
			err = follow(ctx, name, since, func(f gateway.Frame) {
				since = f.Seq + 1
				v.add(gen, []gateway.Frame{f}, "")
			})
		}
		if ctx.Err() != nil {
			return
		}
		v.add(gen, nil, err.Error())
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// add keeps frames for the next flush (any goroutine).
func (v *traceView) add(gen int, frames []gateway.Frame, problem string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if gen != v.gen {
		return
	}
	v.problem = problem
	v.pending = append(v.pending, frames...)
	if over := len(v.pending) - traceViewLimit; over > 0 {
		v.pending = append(v.pending[:0:0], v.pending[over:]...)
	}
}

// flush shows the frames that arrived since the last flush (UI thread).
func (v *traceView) flush() {
	v.mu.Lock()
	frames, problem := v.pending, v.problem
	v.pending = nil
	v.mu.Unlock()
	if problem != "" {
		v.status.SetText("The trace cannot be followed: " + problem)
	}
	if len(frames) == 0 {
		return
	}
	v.frames = append(v.frames, frames...)
	if over := len(v.frames) - traceViewLimit; over > 0 {
		v.frames = append(v.frames[:0:0], v.frames[over:]...)
	}
	if v.paused {
		v.held += len(frames)
		v.setStatus()
		return
	}
	v.refilter()
}

func (v *traceView) togglePause() {
	v.paused = !v.paused
	if v.paused {
		v.pauseBtn.SetText("Resume")
		v.pauseBtn.SetIcon(theme.MediaPlayIcon())
		v.setStatus()
		return
	}
	v.pauseBtn.SetText("Pause")
	v.pauseBtn.SetIcon(theme.MediaPauseIcon())
	v.held = 0
	v.refilter()
}

// refilter shows the frames that pass the filters, the newest at the
// bottom, in view unless paused (UI thread).
func (v *traceView) refilter() {
	v.shown = v.shown[:0]
	for i, f := range v.frames {
		if v.passes(f) {
			v.shown = append(v.shown, i)
		}
	}
	v.table.Refresh()
	if !v.paused && len(v.shown) > 0 {
		v.table.ScrollToBottom()
	}
	v.setStatus()
}

func (v *traceView) passes(f gateway.Frame) bool {
	if v.hideHealth && present.HealthCheckFrame(f) {
		return false
	}
	if v.filter == "" {
		return true
	}
	for _, s := range []string{f.Method, f.Session, f.Body, f.Dir, f.Kind} {
		if strings.Contains(strings.ToLower(s), v.filter) {
			return true
		}
	}
	return false
}

func (v *traceView) setStatus() {
	hidden := len(v.frames) - len(v.shown)
	s := present.Plural(len(v.shown), "frame")
	if hidden > 0 {
		why := "health checks"
		if v.filter != "" {
			why = "filtered out"
		}
		s += fmt.Sprintf(" (%d more %s)", hidden, why)
	}
	switch {
	case v.paused:
		s += fmt.Sprintf(" · paused, %d new kept", v.held)
	case v.cancel != nil:
		s += " · following"
	}
	if len(v.frames) == 0 && v.profile {
		s += ": none yet; they come as an AI client uses this profile (the entry `mcptray install` writes runs mcptray connect)"
	}
	v.status.SetText(s)
}

// cellText is one column of a frame's row.
func (v *traceView) cellText(f gateway.Frame, col int) string {
	switch col {
	case 0:
		return f.Time.Local().Format("15:04:05.000")
	case 1:
		return v.sessionName(f.Session)
	case 2:
		return f.Dir
	case 3:
		return present.VisibleLine(f.Method)
	case 4:
		// What kind of frame, and for an answer how long it took.
		if f.Took > 0 {
			return f.Kind + " " + present.FormatLatency(f.Took)
		}
		return f.Kind
	}
	body := present.VisibleLine(f.Body)
	if len(body) > 300 {
		body = body[:300] + "…"
	}
	return body
}

// sessionName is a session's number (its id is NAME#n) with its client's
// name, "–" for the server side (relayed requests, health checks).
func (v *traceView) sessionName(id string) string {
	if id == "" {
		return "–"
	}
	short := strings.TrimPrefix(id, v.server)
	sessions := v.c.gw[v.server].Sessions
	if v.profile {
		sessions = nil
		for _, p := range v.c.gwProfiles {
			if p.Profile == v.server {
				sessions = p.Sessions
			}
		}
	}
	for _, s := range sessions {
		if s.ID == id && s.ClientName != "" {
			return short + " " + present.VisibleLine(s.ClientName)
		}
	}
	return present.VisibleLine(short)
}

// frameDetail is a frame in full, its body indented.
func frameDetail(f gateway.Frame) string {
	head := strings.Join(strings.Fields(fmt.Sprintf("%s %s %s %s %s", f.Time.Local().Format("15:04:05.000"), f.Session, f.Dir, f.Kind, f.Method)), " ")
	if f.Took > 0 {
		head += " (" + present.FormatLatency(f.Took) + ")"
	}
	body := f.Body
	var b bytes.Buffer
	if json.Indent(&b, []byte(body), "", "  ") == nil {
		body = b.String()
	}
	return head + "\n" + present.Visible(body)
}
