package gui

import (
	"context"
	"errors"
	"fmt"
	"image/color"
	"net/url"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/app"
	"mcptray/app/present"
	"mcptray/app/schemaform"
	"mcptray/healthcheck"
	"mcptray/registry"
)

// Calls from the window (Run, Read, Get) go to a second instance of the
// server, started for them as `mcptray call NAME` starts one: the engine's
// own session is a health check, which offers the server nothing (no
// elicitation, no progress), and a daemon's sessions are not this
// process's to use. The instance stays up while the window is open, so
// only the first call waits for a start.

// callTimeout bounds one call from the window (Cancel ends it sooner).
const callTimeout = 5 * time.Minute

// trialRun is the instance one server runs for the window's calls.
type trialRun struct {
	trial *app.Trial
	from  *registry.Server // the entry it was started from

	mu  sync.Mutex // protects cur
	cur *runView   // the call in progress, which gets the notifications
}

func (t *trialRun) current() *runView {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cur
}

// acquire makes v the call in progress; false when another one is.
func (t *trialRun) acquire(v *runView) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cur != nil {
		return false
	}
	t.cur = v
	return true
}

func (t *trialRun) release() {
	t.mu.Lock()
	t.cur = nil
	t.mu.Unlock()
}

// trialFor is the instance of server name for calls, started (or started
// again, after its entry changed) as needed (UI thread).
func (c *controller) trialFor(name string) (*trialRun, error) {
	cfg, err := registry.Load(c.cfgPath)
	if err != nil {
		return nil, fmt.Errorf("servers.toml does not load: %w", err)
	}
	srv := cfg.Server(name)
	switch {
	case srv == nil:
		return nil, fmt.Errorf("%s is no longer in %s", name, c.cfgPath)
	case srv.Invalid != nil:
		return nil, fmt.Errorf("the entry of %s cannot be started: %v", name, srv.Invalid)
	}
	if t := c.trials[name]; t != nil {
		if t.from.Equal(srv) {
			return t, nil
		}
		if t.current() != nil {
			return nil, fmt.Errorf("the entry of %s changed while a call runs: wait for it to end", name)
		}
		delete(c.trials, name)
		go t.trial.Close()
	}
	t := &trialRun{from: srv.Clone()}
	t.trial = app.StartTrial(cfg, srv, c.handlersFor(t))
	if c.trials == nil {
		c.trials = map[string]*trialRun{}
	}
	c.trials[name] = t
	return t, nil
}

// stopTrials stops every instance started for calls (UI thread); wait
// returns once they are stopped.
func (c *controller) stopTrials() (wait func()) {
	ts := c.trials
	c.trials = nil
	var wg sync.WaitGroup
	for _, t := range ts {
		wg.Go(t.trial.Close)
	}
	return wg.Wait
}

// handlersFor answers what the server sends during a call: progress and
// log lines go to the call's view, elicitation opens a dialog, sampling is
// declined.
func (c *controller) handlersFor(t *trialRun) *healthcheck.ClientHandlers {
	note := func(line string) {
		if v := t.current(); v != nil {
			fyne.Do(func() { v.note(line) })
		}
	}
	return &healthcheck.ClientHandlers{
		Progress: func(p *mcp.ProgressNotificationParams) {
			if v := t.current(); v != nil {
				fyne.Do(func() {
					v.progress(p)
					if c.afterProgress != nil {
						c.afterProgress()
					}
				})
			}
		},
		Log:    func(p *mcp.LoggingMessageParams) { note(present.LogLine(p)) },
		Elicit: c.elicit,
		ElicitationComplete: func(id string) {
			note("The server says the request in the browser is complete (" + id + ").")
		},
		Sample: func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			note("The server asked for sampling (an LLM completion): declined, the window does not answer sampling.")
			return nil, &jsonrpc.Error{Code: -1, Message: "mcptray declines sampling: its window has no model to answer with"}
		},
	}
}

// runView is where one Run (or Read, or Get) shows how it goes: its
// status, progress, the server's log lines, and the result.
type runView struct {
	button  *widget.Button // Run, Read or Get
	cancel  *widget.Button
	status  *widget.Label
	bar     *widget.ProgressBar
	notes   *widget.Label
	result  *fyne.Container
	box     *fyne.Container
	stop    context.CancelFunc
	started time.Time
}

func newRunView(label string, icon fyne.Resource, onRun func()) *runView {
	v := &runView{}
	v.button = widget.NewButtonWithIcon(label, icon, onRun)
	v.button.Importance = widget.HighImportance
	v.cancel = widget.NewButtonWithIcon("Cancel", theme.CancelIcon(), func() {
		if v.stop != nil {
			v.stop()
		}
	})
	v.cancel.Hide()
	v.status = widget.NewLabel("")
	v.status.Wrapping = fyne.TextWrapWord
	v.bar = widget.NewProgressBar()
	v.bar.Hide()
	v.notes = widget.NewLabel("")
	v.notes.Wrapping = fyne.TextWrapWord
	v.notes.Importance = widget.LowImportance
	v.notes.Hide()
	v.result = container.NewVBox()
	v.box = container.NewVBox(container.NewBorder(nil, nil, container.NewHBox(v.button, v.cancel), nil, v.status), v.bar, v.notes, v.result)
	return v
}

// begin shows a call starting (UI thread).
func (v *runView) begin(status string, stop context.CancelFunc) {
	v.stop = stop
	v.button.Disable()
	v.cancel.Show()
	v.status.Importance = widget.MediumImportance
	v.status.SetText(status)
	v.bar.Hide()
	v.notes.SetText("")
	v.notes.Hide()
	v.result.RemoveAll()
}

// calling says the session is there and the request is sent.
func (v *runView) calling(status string) {
	v.started = time.Now()
	v.status.SetText(status)
}

func (v *runView) progress(p *mcp.ProgressNotificationParams) {
	if p.Total > 0 {
		v.bar.Max = p.Total
		v.bar.SetValue(p.Progress)
		v.bar.Show()
	}
	if p.Message != "" {
		v.status.SetText(present.VisibleLine(p.Message))
	}
}

func (v *runView) note(line string) {
	text := line
	if v.notes.Text != "" {
		text = v.notes.Text + "\n" + line
	}
	v.notes.SetText(text)
	v.notes.Show()
}

// end shows how the call went: status in words, good or not, and what
// the result holds.
func (v *runView) end(status string, good bool, result ...fyne.CanvasObject) {
	v.stop = nil
	v.button.Enable()
	v.cancel.Hide()
	v.bar.Hide()
	v.status.SetText(status)
	v.status.Importance = widget.SuccessImportance
	if !good {
		v.status.Importance = widget.DangerImportance
	}
	v.status.Refresh()
	v.result.Objects = result
	v.result.Refresh()
}

// took is how long the request took, for the status line.
func (v *runView) took() time.Duration {
	if v.started.IsZero() {
		return 0
	}
	return time.Since(v.started)
}

// failure is a call that did not get a result, said in red: why the server
// did not start, or how the request failed.
func failure(err error) string {
	if text, ok := present.NotReadyText(err); ok {
		return text
	}
	return err.Error()
}

// errorText is a block of text in the error colour.
func errorText(s string) *widget.Label {
	l := widget.NewLabel(present.Visible(s))
	l.Wrapping = fyne.TextWrapWord
	l.Selectable = true
	l.Importance = widget.DangerImportance
	return l
}

// try runs fn on the session of server's instance for calls, off the UI
// thread, with v showing how it goes; done gets fn's error on the UI
// thread. what names the request for the status line.
func (c *controller) try(server, what string, v *runView, fn func(context.Context, *healthcheck.Session) error, done func(error)) {
	t, err := c.trialFor(server)
	if err != nil {
		v.end(err.Error(), false)
		return
	}
	if !t.acquire(v) {
		v.end("Another call to "+server+" is running: wait for it, or cancel it.", false)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	v.begin("Starting "+server+" for calls from this window…", cancel)
	go func() {
		defer cancel()
		var tools []healthcheck.Tool
		err := t.trial.Use(ctx, func(ctx context.Context, s *healthcheck.Session) error {
			tools = s.Report().Tools
			fyne.Do(func() { v.calling(what + "…") })
			return fn(ctx, s)
		})
		if err != nil && ctx.Err() != nil {
			err = endedWords(server, ctx.Err(), err)
		}
		fyne.Do(func() {
			t.release()
			if _, notReady := present.NotReadyText(err); notReady && c.trials[server] == t {
				// It failed to start: do not keep it retrying in the
				// background; the next call starts it afresh.
				delete(c.trials, server)
				go t.trial.Close()
			}
			done(err)
			if c.main != nil && tools != nil {
				c.main.trialTools(server, tools)
			}
			if c.afterCall != nil {
				c.afterCall()
			}
		})
	}()
}

// elicit answers a server's elicitation request with a dialog built from
// its schema (a form), or one that offers to open its page (a URL). It
// waits for the person, or for the call to end.
func (c *controller) elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	answer := make(chan *mcp.ElicitResult, 1)
	var d dialog.Dialog
	fyne.Do(func() { d = c.showElicitation(p, answer) })
	select {
	case r := <-answer:
		return r, nil
	case <-ctx.Done():
		fyne.Do(func() {
			if d != nil {
				d.Hide()
			}
		})
		return nil, ctx.Err()
	}
}

// elicitation is the dialog of an elicitation request, for tests.
type elicitation struct {
	form                  *schemaForm // nil for a URL
	send, decline, cancel *widget.Button
	dialog                *dialog.CustomDialog
}

// showElicitation opens the dialog of an elicitation request; the answer
// goes to answer, once (UI thread).
func (c *controller) showElicitation(p *mcp.ElicitParams, answer chan<- *mcp.ElicitResult) dialog.Dialog {
	if c.win == nil {
		answer <- &mcp.ElicitResult{Action: "decline"}
		return nil
	}
	e := &elicitation{}
	answered := false // the answer is sent once (UI thread)
	reply := func(r *mcp.ElicitResult) {
		if !answered {
			answered = true
			answer <- r
			e.dialog.Hide()
		}
	}
	msg := widget.NewLabel(present.Visible(p.Message))
	msg.Wrapping = fyne.TextWrapWord
	width := canvas.NewRectangle(color.Transparent)
	width.SetMinSize(fyne.NewSize(480, 0))
	body := container.NewVBox(width, msg)
	sendText := "Send"
	if p.Mode == "url" || p.URL != "" {
		link := widget.NewLabel(present.VisibleLine(p.URL))
		link.Wrapping = fyne.TextWrapBreak
		link.TextStyle.Monospace = true
		body.Add(link)
		sendText = "Open in browser"
		e.send = widget.NewButtonWithIcon(sendText, theme.ComputerIcon(), func() {
			if err := c.open(p.URL); err != nil {
				c.showError(fmt.Errorf("the browser did not open: %w", err))
			}
			reply(&mcp.ElicitResult{Action: "accept"})
		})
	} else {
		form, err := schemaform.NewForm(p.RequestedSchema)
		if err != nil {
			body.Add(errorText("The server's form cannot be used (" + err.Error() + "): decline or cancel."))
		} else {
			e.form = newSchemaForm(form)
			body.Add(e.form.content)
		}
		e.send = widget.NewButtonWithIcon(sendText, theme.ConfirmIcon(), func() {
			if e.form == nil {
				return
			}
			content, err := e.form.values()
			if err != nil {
				return // the problem shows under the form
			}
			reply(&mcp.ElicitResult{Action: "accept", Content: content})
		})
	}
	e.send.Importance = widget.HighImportance
	e.decline = widget.NewButton("Decline", func() { reply(&mcp.ElicitResult{Action: "decline"}) })
	e.cancel = widget.NewButton("Cancel", func() { reply(&mcp.ElicitResult{Action: "cancel"}) })
	e.dialog = dialog.NewCustomWithoutButtons("The server asks", container.NewVScroll(body), c.win)
	e.dialog.SetButtons([]fyne.CanvasObject{e.cancel, e.decline, e.send})
	e.dialog.SetOnClosed(func() { reply(&mcp.ElicitResult{Action: "cancel"}) })
	e.dialog.Resize(fyne.NewSize(560, 520))
	e.dialog.Show()
	c.lastElicitation = e
	if c.afterElicit != nil {
		c.afterElicit()
	}
	return e.dialog
}

// open opens a link in the browser (the app's OpenURL, or what tests set).
func (c *controller) open(link string) error {
	u, err := url.Parse(link)
	if err != nil {
		return err
	}
	open := c.openURL
	if open == nil {
		open = c.app.OpenURL
	}
	return open(u)
}

// endedWords says how a call that Cancel or the timeout (why) ended went:
// whether the server was told (notifications/cancelled), or that it was
// still starting.
func endedWords(server string, why, err error) error {
	e := &endedError{timedOut: errors.Is(why, context.DeadlineExceeded)}
	what := "Cancelled"
	if e.timedOut {
		what = "No answer within " + callTimeout.String()
	}
	var ce *healthcheck.CallError
	switch {
	case errors.As(err, &ce) && ce.Cancelled && ce.CancelSent:
		e.text = what + ": the server was sent notifications/cancelled."
	case errors.As(err, &ce) && ce.Cancelled:
		e.text = what + ": notifications/cancelled could not be sent in time."
	case errors.Is(err, why):
		e.text = what + " while " + server + " was starting."
	default:
		return err
	}
	return e
}

// endedError is a call that Cancel or the timeout ended.
type endedError struct {
	text     string
	timedOut bool
}

func (e *endedError) Error() string { return e.text }

// outcomeWords is the status line of a call that did not succeed: failed
// says it failed; one that Cancel or the timeout ended says that instead.
func outcomeWords(failed string, err error) string {
	var e *endedError
	switch {
	case !errors.As(err, &e):
		return failed
	case e.timedOut:
		return "No answer in time."
	}
	return "Cancelled."
}
