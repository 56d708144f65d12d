package gui

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/app/present"
	"mcptray/app/schemaform"
	"mcptray/healthcheck"
)

// tryPanel is what the Tools, Resources, Templates and Prompts tabs show
// under (or above) the selected item's details: a form, a button that
// calls the server, and the result.
type tryPanel interface {
	content() fyne.CanvasObject
	// fill puts earlier arguments into the form (a re-run).
	fill(args map[string]any)
	// start makes the request with what the form holds (UI thread).
	start()
}

// Kinds of call, as the History tab names them.
const (
	callTool     = "tool"
	callResource = "resource"
	callTemplate = "template"
	callPrompt   = "prompt"
)

// callRecord is one call made from the window.
type callRecord struct {
	server, kind string
	name         string // the tool, resource URI, URI template or prompt
	args         map[string]any
	at           time.Time
	took         time.Duration
	outcome      string // in a few words
	good         bool
}

// historyLimit is how many calls a server's history keeps.
const historyLimit = 100

// record adds a call to its server's history (UI thread).
func (c *controller) record(r *callRecord) {
	if c.history == nil {
		c.history = map[string][]*callRecord{}
	}
	h := append(c.history[r.server], r)
	if len(h) > historyLimit {
		h = h[len(h)-historyLimit:]
	}
	c.history[r.server] = h
	if c.main != nil {
		c.main.history.show()
	}
}

// panelFor is the panel of item i of kind on the selected server, made on
// first use and kept while the window is open (with its last result).
func (m *mainWindow) panelFor(kind string, i int) fyne.CanvasObject {
	r, server := m.report, m.reportOwner
	if r == nil {
		return nil
	}
	var key string
	var newPanel func() tryPanel
	switch kind {
	case callTool:
		t := m.catalogTools(r)[i]
		key = t.Name + "\x00" + string(t.InputSchema)
		newPanel = func() tryPanel { return m.newToolPanel(server, t) }
	case callResource:
		res := r.Resources[i]
		key = res.URI
		newPanel = func() tryPanel { return m.newResourcePanel(server, res.URI) }
	case callTemplate:
		t := r.ResourceTemplates[i]
		key = t.URITemplate
		newPanel = func() tryPanel { return m.newTemplatePanel(server, t.URITemplate) }
	case callPrompt:
		p := r.Prompts[i]
		key = p.Name + "\x00" + fmt.Sprint(p.Arguments)
		newPanel = func() tryPanel { return m.newPromptPanel(server, p) }
	}
	key = server + "\x00" + kind + "\x00" + key
	p := m.panels[key]
	if p == nil {
		p = newPanel()
		m.panels[key] = p
	}
	m.panel = p
	return p.content()
}

// panelBase is what every panel has: the form (nil when the schema
// cannot be used, or for a resource, which takes none), the button with
// what it shows, and the box they stand in.
type panelBase struct {
	m      *mainWindow
	server string
	form   *schemaForm
	run    *runView
	box    *fyne.Container
}

func (p *panelBase) content() fyne.CanvasObject { return p.box }

func (p *panelBase) fill(args map[string]any) {
	if p.form != nil {
		p.form.setValues(args)
	}
}

// addForm adds the form made from a schema, or says why there is none
// (and the button cannot run).
func (p *panelBase) addForm(form *schemaform.Form, err error, what string) {
	if err != nil {
		p.box.Add(errorText(what + ": " + err.Error()))
		p.run.button.Disable()
		return
	}
	p.form = newSchemaForm(form)
	p.box.Add(p.form.content)
}

// toolPanel runs a tool from a form made from its input schema.
type toolPanel struct {
	panelBase
	tool healthcheck.Tool
}

func (m *mainWindow) newToolPanel(server string, t healthcheck.Tool) *toolPanel {
	p := &toolPanel{panelBase: panelBase{m: m, server: server}, tool: t}
	p.run = newRunView("Run", theme.MediaPlayIcon(), p.start)
	title := widget.NewLabelWithStyle(nameTitle(t.Name, t.Title), fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	title.Truncation = fyne.TextTruncateEllipsis
	desc := widget.NewLabel(present.Visible(strings.TrimSpace(t.Description)))
	desc.Wrapping = fyne.TextWrapWord
	hints := widget.NewLabel(annotationWords(t.Annotations))
	hints.Truncation = fyne.TextTruncateEllipsis
	hints.Importance = widget.LowImportance
	if destructive(t.Annotations) {
		hints.Importance = widget.WarningImportance
	}
	p.box = container.NewVBox(title)
	if desc.Text != "" {
		p.box.Add(desc)
	}
	p.box.Add(hints)
	form, err := schemaform.NewForm(t.InputSchema)
	p.addForm(form, err, "The tool's input schema cannot be used")
	p.box.Add(p.run.box)
	return p
}

// annotationWords says what a tool's annotations declare.
func annotationWords(a *mcp.ToolAnnotations) string {
	if a == nil {
		return "Hints: none declared."
	}
	var w []string
	if a.ReadOnlyHint {
		w = append(w, "read-only")
	}
	if a.DestructiveHint != nil {
		if *a.DestructiveHint {
			w = append(w, "destructive")
		} else {
			w = append(w, "not destructive")
		}
	}
	if a.IdempotentHint {
		w = append(w, "idempotent")
	}
	if a.OpenWorldHint != nil {
		if *a.OpenWorldHint {
			w = append(w, "open world (reaches outside systems)")
		} else {
			w = append(w, "closed world")
		}
	}
	if len(w) == 0 {
		return "Hints: none declared."
	}
	return "Hints: " + strings.Join(w, " · ") + "."
}

// destructive reports a tool marked destructive (and not read-only).
func destructive(a *mcp.ToolAnnotations) bool {
	return a != nil && !a.ReadOnlyHint && a.DestructiveHint != nil && *a.DestructiveHint
}

func (p *toolPanel) start() {
	if p.form == nil {
		return
	}
	args, err := p.form.values()
	if err != nil {
		return // the problem shows under the form
	}
	if destructive(p.tool.Annotations) && p.m.win != nil {
		d := dialog.NewConfirm("Run "+p.tool.Name+"?",
			p.tool.Name+" is marked destructive: it may delete or overwrite things.\nRun it with these arguments?",
			func(ok bool) {
				if ok {
					p.call(args)
				}
			}, p.m.win)
		d.SetConfirmText("Run")
		d.Show()
		p.m.c.lastConfirm = d
		return
	}
	p.call(args)
}

func (p *toolPanel) call(args map[string]any) {
	c := p.m.c
	var res *healthcheck.CallResult
	rec := &callRecord{server: p.server, kind: callTool, name: p.tool.Name, args: args, at: c.now()}
	c.try(p.server, "Calling "+p.tool.Name, p.run, func(ctx context.Context, s *healthcheck.Session) (err error) {
		res, err = s.CallTool(ctx, p.tool.Name, args)
		return err
	}, func(err error) {
		rec.took = p.run.took()
		if err != nil {
			rec.outcome = "failed"
			p.run.end(outcomeWords("The call failed.", err), false, errorText(failure(err)))
		} else {
			rec.outcome, rec.good = p.showResult(res, rec.took)
		}
		c.record(rec)
	})
}

// showResult shows a tool's result and says in a few words how it went.
func (p *toolPanel) showResult(res *healthcheck.CallResult, took time.Duration) (string, bool) {
	v := p.m.c.newContentView(p.tool.Name, res.IsError)
	v.add(res.Content)
	objs := []fyne.CanvasObject{v.box}
	if res.StructuredContent != nil {
		b, _ := json.MarshalIndent(res.StructuredContent, "", "  ")
		sc := widget.NewLabel(present.Visible(string(b)))
		sc.TextStyle.Monospace = true
		sc.Selectable = true
		sc.Wrapping = fyne.TextWrapWord
		head := widget.NewLabelWithStyle("Structured content", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
		var check *widget.Label
		switch {
		case res.OutputError != nil:
			check = errorText(res.OutputError.Error())
		case len(p.tool.OutputSchema) > 0:
			check = widget.NewLabel("It matches the tool's outputSchema.")
			check.Importance = widget.SuccessImportance
		default:
			check = widget.NewLabel("The tool declares no outputSchema to check it against.")
			check.Importance = widget.LowImportance
		}
		objs = append(objs, widget.NewSeparator(), head, check, sc)
	} else if res.OutputError != nil {
		objs = append(objs, errorText(res.OutputError.Error()))
	}
	after := " in " + present.FormatLatency(took) + "."
	switch {
	case res.IsError:
		p.run.end("The tool reported an error (isError)"+after, false, objs...)
		return "isError", false
	case res.OutputError != nil:
		p.run.end("Returned"+after+" Its structured content does not fit the outputSchema.", false, objs...)
		return "outputSchema not met", false
	}
	p.run.end("Returned"+after, true, objs...)
	return "ok", true
}

// readPanel reads a resource: one listed (uri) or one made from a
// template (its form).
type readPanel struct {
	panelBase
	uri      string // a listed resource ("" for a template)
	template string
	preview  *widget.Label
}

func (m *mainWindow) newResourcePanel(server, uri string) *readPanel {
	p := &readPanel{panelBase: panelBase{m: m, server: server}, uri: uri}
	p.run = newRunView("Read", theme.DocumentIcon(), p.start)
	p.box = container.NewVBox(p.run.box)
	return p
}

func (m *mainWindow) newTemplatePanel(server, uriTemplate string) *readPanel {
	p := &readPanel{panelBase: panelBase{m: m, server: server}, template: uriTemplate}
	p.run = newRunView("Read", theme.DocumentIcon(), p.start)
	p.preview = widget.NewLabel("")
	p.preview.TextStyle.Monospace = true
	p.preview.Wrapping = fyne.TextWrapBreak
	p.box = container.NewVBox()
	form, err := schemaform.TemplateForm(uriTemplate)
	p.addForm(form, err, "The template cannot be filled")
	p.box.Add(p.preview)
	p.box.Add(p.run.box)
	return p
}

func (p *readPanel) start() {
	uri, kind := p.uri, callResource
	var args map[string]any
	if p.template != "" {
		if p.form == nil {
			return
		}
		var err error
		if args, err = p.form.values(); err != nil {
			return
		}
		if uri, err = schemaform.ExpandTemplate(p.template, args); err != nil {
			p.run.end(err.Error(), false)
			return
		}
		p.preview.SetText(uri)
		kind = callTemplate
	}
	c := p.m.c
	name := uri
	if kind == callTemplate {
		name = p.template
	}
	rec := &callRecord{server: p.server, kind: kind, name: name, args: args, at: c.now()}
	var res *mcp.ReadResourceResult
	c.try(p.server, "Reading "+uri, p.run, func(ctx context.Context, s *healthcheck.Session) (err error) {
		res, err = s.ReadResource(ctx, uri)
		return err
	}, func(err error) {
		rec.took = p.run.took()
		if err != nil {
			rec.outcome = "failed"
			p.run.end(outcomeWords("The read failed.", err), false, errorText(failure(err)))
			c.record(rec)
			return
		}
		v := c.newContentView(uri, false)
		for _, rc := range res.Contents {
			v.resource(rc, true)
		}
		rec.outcome, rec.good = "ok", true
		p.run.end(fmt.Sprintf("Read %s in %s.", present.Plural(len(res.Contents), "content"), present.FormatLatency(rec.took)), true, v.box)
		c.record(rec)
	})
}

// promptPanel gets a prompt, with a form of its arguments.
type promptPanel struct {
	panelBase
	prompt healthcheck.Prompt
}

func (m *mainWindow) newPromptPanel(server string, pr healthcheck.Prompt) *promptPanel {
	p := &promptPanel{panelBase: panelBase{m: m, server: server}, prompt: pr}
	p.run = newRunView("Get", theme.MailComposeIcon(), p.start)
	p.box = container.NewVBox()
	form, err := schemaform.PromptForm(pr)
	p.addForm(form, err, "The prompt's arguments cannot be asked")
	p.box.Add(p.run.box)
	return p
}

func (p *promptPanel) start() {
	if p.form == nil {
		return
	}
	args, err := p.form.values()
	if err != nil {
		return
	}
	c := p.m.c
	rec := &callRecord{server: p.server, kind: callPrompt, name: p.prompt.Name, args: args, at: c.now()}
	var res *mcp.GetPromptResult
	c.try(p.server, "Getting "+p.prompt.Name, p.run, func(ctx context.Context, s *healthcheck.Session) (err error) {
		res, err = s.GetPrompt(ctx, p.prompt.Name, schemaform.StringArgs(args))
		return err
	}, func(err error) {
		rec.took = p.run.took()
		if err != nil {
			rec.outcome = "failed"
			p.run.end(outcomeWords("The request failed.", err), false, errorText(failure(err)))
			c.record(rec)
			return
		}
		v := c.newContentView(p.prompt.Name, false)
		if res.Description != "" {
			v.text(res.Description)
		}
		for _, msg := range res.Messages {
			v.caption(string(msg.Role))
			v.add([]mcp.Content{msg.Content})
		}
		rec.outcome, rec.good = "ok", true
		p.run.end(fmt.Sprintf("Got %s in %s.", present.Plural(len(res.Messages), "message"), present.FormatLatency(rec.took)), true, v.box)
		c.record(rec)
	})
}

// historyView is History, under the Tools tab's list (it folds away): the
// selected server's calls from the window, newest first, each with Re-run.
type historyView struct {
	m       *mainWindow
	rows    *fyne.Container
	empty   *widget.Label
	item    *widget.AccordionItem
	acc     *widget.Accordion
	content fyne.CanvasObject
}

func newHistoryView(m *mainWindow) *historyView {
	h := &historyView{m: m, rows: container.NewVBox()}
	h.empty = widget.NewLabel("No calls yet. Run a tool, read a resource or get a prompt: each call shows here, to run again.")
	h.empty.Wrapping = fyne.TextWrapWord
	h.empty.Importance = widget.LowImportance
	scroll := container.NewVScroll(container.NewVBox(h.empty, h.rows))
	scroll.SetMinSize(fyne.NewSize(0, 160))
	h.item = widget.NewAccordionItem("History", scroll)
	h.acc = widget.NewAccordion(h.item)
	h.content = h.acc
	return h
}

// show lists the selected server's calls (UI thread).
func (h *historyView) show() {
	recs := h.m.c.history[h.m.selected]
	h.rows.RemoveAll()
	for i := len(recs) - 1; i >= 0; i-- {
		r := recs[i]
		line := widget.NewLabel(historyLine(r))
		line.Wrapping = fyne.TextWrapWord
		if !r.good {
			line.Importance = widget.DangerImportance
		}
		again := widget.NewButtonWithIcon("Re-run", theme.ViewRefreshIcon(), func() { h.m.rerun(r) })
		again.Importance = widget.LowImportance
		h.rows.Add(container.NewBorder(nil, nil, nil, again, line))
	}
	if len(recs) == 0 {
		h.empty.Show()
	} else {
		h.empty.Hide()
	}
	title := "History"
	if len(recs) > 0 {
		title = fmt.Sprintf("History (%d)", len(recs))
	}
	if h.item.Title != title {
		h.item.Title = title
		h.acc.Refresh()
	}
}

// historyLine is one call in a line: when, what, with what, how it went.
func historyLine(r *callRecord) string {
	s := r.at.Local().Format("15:04:05") + "  " + r.kind + " " + r.name
	if len(r.args) > 0 {
		b, _ := json.Marshal(r.args)
		args := string(b)
		if len(args) > 120 {
			args = args[:117] + "…"
		}
		s += " " + args
	}
	return present.VisibleLine(s + "  → " + r.outcome + ", " + present.FormatLatency(r.took))
}

// rerun opens a call's tab and item, fills in its arguments and makes the
// call again (UI thread).
func (m *mainWindow) rerun(r *callRecord) {
	tab, cat := "Tools", m.tools
	switch r.kind {
	case callResource:
		tab, cat = "Resources", m.resources
	case callTemplate:
		tab, cat = "Templates", m.templates
	case callPrompt:
		tab, cat = "Prompts", m.prompts
	}
	m.showTab(tab)
	if !cat.selectKey(r.name) || m.panel == nil {
		m.c.showError(fmt.Errorf("%s no longer offers the %s %s", r.server, r.kind, r.name))
		return
	}
	if r.args != nil {
		m.panel.fill(r.args)
	}
	m.panel.start()
}
