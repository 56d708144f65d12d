package gui

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"mcptray/app"
	"mcptray/app/present"
	"mcptray/registry"
	"mcptray/supervisor"
)

const (
	kindStdio  = "Local command (stdio)"
	kindRemote = "Remote URL"
)

var (
	transportChoices = []string{"http — Streamable HTTP", "sse — deprecated HTTP+SSE"}
	restartChoices   = []string{string(registry.RestartOnFailure), string(registry.RestartAlways), string(registry.RestartNever)}
)

// serverForm edits one server entry and validates it as you type with the
// same rules the config file is loaded with. A field's problem shows under
// it, in plain words, once the field was touched (or Save was pressed).
type serverForm struct {
	kind        *widget.RadioGroup
	name        *formEntry
	description *formEntry
	command     *formEntry
	args        *formEntry
	env         *formEntry
	cwd         *formEntry
	url         *formEntry
	transport   *widget.Select
	headers     *formEntry
	autostart   *widget.Check
	restart     *widget.Select
	disabled    *widget.Check
	note        *widget.Label // what the entry holds that the form cannot
	testResult  *widget.Label
	// tested counts the Tests and the edits: a Test's outcome is shown
	// only if nothing was edited since it started, and an edit takes away
	// the outcome of the values before it.
	tested     int
	testShown  bool                // testResult shows a Test's outcome (or that one runs)
	stdioRows  []fyne.CanvasObject // label and field of each stdio row
	remoteRows []fyne.CanvasObject
	form       *fyne.Container
	content    fyne.CanvasObject

	// errs and hints are the labels under each field, by field key.
	errs, hints map[string]*widget.Label
	touched     map[string]bool
	showAll     bool // Save was pressed: every problem shows
	loading     bool // load fills the fields: that touches nothing
	// dropped is the url (or command) of an entry that had both, which
	// saving drops.
	dropped [2]string
	// loaded is the entry the form was filled from: what the form does not
	// show of it (start = "lazy", idle_stop, share) is saved as it was.
	loaded *registry.Server

	// taken holds the names of the other servers in the config.
	taken []string
	// onValid is called after each validation with the outcome.
	onValid func(ok bool)
	// onSubmit runs on Enter in a one-line field, onCancel on Escape.
	onSubmit, onCancel func()
	// keep moves the entry's literal secrets into the OS keyring (nil: the
	// offer is not shown); keepBtns are its buttons, by field key.
	keep     func(*registry.Server) (*registry.Server, []string, string, error)
	keepBtns map[string]*widget.Button
	keepRows map[string]*fyne.Container // hidden whole, so they take no space
}

// formEntry is an entry of the form: Escape cancels the form, Enter in a
// one-line field submits it.
type formEntry struct {
	widget.Entry
	f *serverForm
}

func (f *serverForm) newEntry(multi bool) *formEntry {
	e := &formEntry{f: f}
	e.MultiLine = multi
	if multi {
		e.Wrapping = fyne.TextWrapOff
	}
	e.ExtendBaseWidget(e)
	if !multi {
		e.OnSubmitted = func(string) {
			if f.onSubmit != nil {
				f.onSubmit()
			}
		}
	}
	return e
}

func (e *formEntry) TypedKey(k *fyne.KeyEvent) {
	if k.Name == fyne.KeyEscape && e.f.onCancel != nil {
		e.f.onCancel()
		return
	}
	e.Entry.TypedKey(k)
}

func newServerForm(s *registry.Server, taken []string) *serverForm {
	f := &serverForm{taken: taken, errs: map[string]*widget.Label{}, hints: map[string]*widget.Label{}, touched: map[string]bool{},
		keepBtns: map[string]*widget.Button{}, keepRows: map[string]*fyne.Container{}}
	multi := func(placeholder string) *formEntry {
		e := f.newEntry(true)
		e.SetPlaceHolder(placeholder)
		e.SetMinRowsVisible(3)
		e.TextStyle.Monospace = true
		return e
	}
	one := func(placeholder string) *formEntry {
		e := f.newEntry(false)
		e.SetPlaceHolder(placeholder)
		return e
	}
	f.name = one("filesystem")
	f.description = one("optional")
	f.command = one("npx")
	f.args = multi("one argument per line, e.g.\n-y\n@modelcontextprotocol/server-filesystem")
	f.env = multi("KEY=VALUE per line; reference secrets as ${env:VAR}")
	f.cwd = one("optional working folder, e.g. ~/projects")
	f.url = one("https://example.com/mcp")
	f.transport = widget.NewSelect(transportChoices, nil)
	f.headers = multi("Name: value per line, e.g.\nAuthorization: Bearer ${env:TOKEN}")
	f.autostart = widget.NewCheck("Start with mcptray", nil)
	f.restart = widget.NewSelect(restartChoices, nil)
	f.disabled = widget.NewCheck("Disabled", nil)
	f.note = widget.NewLabel("")
	f.note.Wrapping = fyne.TextWrapWord
	f.note.Importance = widget.WarningImportance
	f.note.Hide()
	f.testResult = widget.NewLabel("")
	f.testResult.Wrapping = fyne.TextWrapWord
	f.testResult.Hide()

	// One form, so every label lines up; the rows of the other kind are
	// hidden (the form layout skips a row whose cells are both hidden).
	// Each field carries its problem (and a hint) under it.
	row := func(label, key string, w fyne.CanvasObject) []fyne.CanvasObject {
		if key == "" {
			return []fyne.CanvasObject{widget.NewLabel(label), w}
		}
		e := widget.NewLabel("")
		e.Importance = widget.DangerImportance
		e.Wrapping = fyne.TextWrapWord
		e.Hide()
		h := widget.NewLabel("")
		h.Importance = widget.WarningImportance
		h.Wrapping = fyne.TextWrapWord
		h.Hide()
		f.errs[key], f.hints[key] = e, h
		if key == "env" || key == "headers" {
			b := widget.NewButtonWithIcon("Keep in the keyring", theme.StorageIcon(), f.keepSecrets)
			r := container.NewHBox(b)
			r.Hide()
			f.keepBtns[key], f.keepRows[key] = b, r
			return []fyne.CanvasObject{widget.NewLabel(label), container.NewVBox(w, e, h, r)}
		}
		return []fyne.CanvasObject{widget.NewLabel(label), container.NewVBox(w, e, h)}
	}
	f.stdioRows = slices.Concat(row("Command", "command", f.command), row("Arguments", "args", f.args), row("Environment", "env", f.env), row("Working folder", "cwd", f.cwd))
	f.remoteRows = slices.Concat(row("URL", "url", f.url), row("Transport", "transport", f.transport), row("Headers", "headers", f.headers))
	f.kind = widget.NewRadioGroup([]string{kindStdio, kindRemote}, func(k string) {
		showRows(f.stdioRows, k == kindStdio)
		showRows(f.remoteRows, k == kindRemote)
		f.validate()
	})
	f.kind.Horizontal = true
	f.kind.Required = true

	f.form = container.New(layout.NewFormLayout(), slices.Concat(
		row("Name", "name", f.name), row("Kind", "", f.kind), f.stdioRows, f.remoteRows,
		row("Description", "", f.description), row("Restart", "restart", f.restart),
		row("", "", container.NewHBox(f.autostart, f.disabled)))...)
	f.content = container.NewVBox(f.note, f.form, f.testResult)

	f.load(s)
	for key, e := range map[string]*formEntry{"name": f.name, "description": f.description, "command": f.command, "args": f.args,
		"env": f.env, "cwd": f.cwd, "url": f.url, "headers": f.headers} {
		e.OnChanged = func(string) { f.touch(key) }
	}
	f.transport.OnChanged = func(string) { f.touch("transport") }
	f.restart.OnChanged = func(string) { f.touch("restart") }
	return f
}

// touch marks a field as edited and validates.
func (f *serverForm) touch(key string) {
	if !f.loading {
		f.touched[key] = true
		if f.testShown {
			f.tested++
			f.testShown = false
			showText(f.testResult, "")
		}
	}
	f.validate()
}

func showRows(objs []fyne.CanvasObject, show bool) {
	for _, o := range objs {
		if show {
			o.Show()
		} else {
			o.Hide()
		}
	}
}

// load fills the form from a server (nil: a new stdio server).
func (f *serverForm) load(s *registry.Server) {
	f.loading = true
	defer func() { f.loading = false; f.validate() }()
	if s == nil {
		s = &registry.Server{Autostart: true}
	}
	f.name.SetText(s.Name)
	f.description.SetText(s.Description)
	f.command.SetText(s.Command)
	f.args.SetText(strings.Join(s.Args, "\n"))
	f.env.SetText(joinPairs(s.Env, "="))
	f.cwd.SetText(s.Cwd)
	f.url.SetText(s.URL)
	if s.TransportName == registry.TransportSSE {
		f.transport.SetSelected(transportChoices[1])
	} else {
		f.transport.SetSelected(transportChoices[0])
	}
	f.headers.SetText(joinPairs(s.Headers, ": "))
	f.loaded = s
	f.autostart.SetChecked(s.StartMode() == registry.StartAuto)
	f.restart.SetSelected(string(s.RestartPolicy()))
	f.disabled.SetChecked(s.Disabled)
	f.dropped = [2]string{}
	if s.Command != "" && s.URL != "" {
		// The file has both: say so, keep the command (what runs today if
		// anything does), and name what saving drops.
		f.dropped = [2]string{s.Command, s.URL}
	}
	if s.IsRemote() && s.Command == "" {
		f.kind.SetSelected(kindRemote)
	} else {
		f.kind.SetSelected(kindStdio)
	}
	f.setNote()
}

// setNote says what saving drops of an entry that had both a command and a
// url.
func (f *serverForm) setNote() {
	if f.dropped[0] == "" {
		f.note.Hide()
		return
	}
	keep, drop := "the command "+f.dropped[0], "its url "+f.dropped[1]
	if f.kind.Selected == kindRemote {
		keep, drop = "the url "+f.dropped[1], "its command "+f.dropped[0]
	}
	f.note.SetText("This entry has both a command and a url, and a server can have only one. Saving keeps " + keep + " and drops " + drop + "; pick the other kind to keep that instead.")
	f.note.Show()
}

func joinPairs(m map[string]string, sep string) string {
	var lines []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		lines = append(lines, k+sep+m[k])
	}
	return strings.Join(lines, "\n")
}

// server builds the entry from the form; problems are the lines that could
// not be read, by field key.
func (f *serverForm) server() (*registry.Server, map[string][]string) {
	problems := map[string][]string{}
	s := &registry.Server{
		Name:        strings.TrimSpace(f.name.Text),
		Description: strings.TrimSpace(f.description.Text),
		Autostart:   f.autostart.Checked,
		Disabled:    f.disabled.Checked,
	}
	if f.restart.Selected != string(registry.RestartOnFailure) {
		s.Restart = registry.RestartPolicy(f.restart.Selected)
	}
	if l := f.loaded; l != nil {
		// "Start with mcptray" is start = "auto"; unchecked, a lazy or
		// manual entry stays as it was, spelled as it was.
		s.IdleStop, s.Unshared = l.IdleStop, l.Unshared
		// Where the entry came from has no field: an edit keeps it.
		s.Source = l.Source
		switch {
		case s.Autostart && l.Start != "":
			s.Start = registry.StartAuto
		case !s.Autostart && l.StartMode() != registry.StartAuto:
			s.Start = l.Start
		}
	}
	pairs := func(key, text, sep string) map[string]string {
		m := map[string]string{}
		for i, line := range strings.Split(text, "\n") {
			line = strings.TrimRight(line, "\r")
			if strings.TrimSpace(line) == "" {
				continue
			}
			k, v, ok := strings.Cut(line, strings.TrimSpace(sep))
			k = strings.TrimSpace(k)
			if !ok || k == "" {
				problems[key] = append(problems[key], fmt.Sprintf("Line %d: write %s.", i+1, map[string]string{"=": "KEY=VALUE", ": ": "Name: value"}[sep]))
				continue
			}
			if sep == ": " {
				v = strings.TrimSpace(v)
			}
			m[k] = v
		}
		if len(m) == 0 {
			return nil
		}
		return m
	}
	if f.kind.Selected == kindRemote {
		s.URL = strings.TrimSpace(f.url.Text)
		if f.transport.Selected == transportChoices[1] {
			s.TransportName = registry.TransportSSE
		}
		s.Headers = pairs("headers", f.headers.Text, ": ")
	} else {
		s.Command = strings.TrimSpace(f.command.Text)
		for _, a := range strings.Split(f.args.Text, "\n") {
			if a = strings.TrimRight(a, "\r"); a != "" {
				s.Args = append(s.Args, a)
			}
		}
		s.Env = pairs("env", f.env.Text, "=")
		s.Cwd = strings.TrimSpace(f.cwd.Text)
	}
	return s, problems
}

// validate checks the entry with the registry's own rules
// ([registry.Server.Validate]), shows each problem under its field (once
// touched) and reports the outcome.
func (f *serverForm) validate() bool {
	if f.errs == nil || f.kind == nil {
		return false // still being built
	}
	s, problems := f.server()
	add := func(key, msg string) { problems[key] = append(problems[key], msg) }
	switch {
	case s.Name == "":
		add("name", "Give the server a short name, e.g. filesystem.")
	case slices.Contains(f.taken, s.Name):
		add("name", fmt.Sprintf("A server called %q already exists.", s.Name))
	case !registry.ValidName(s.Name):
		add("name", "Use up to 64 letters, digits, - or _ (no spaces).")
	}
	switch {
	case f.kind.Selected == kindStdio && s.Command == "":
		add("command", "Say which program to run, e.g. npx.")
	case f.kind.Selected == kindRemote && s.URL == "":
		add("url", "Give the server's address, e.g. https://example.com/mcp.")
	case len(problems) == 0:
		var se *registry.ServerError
		if err := s.Validate(); errors.As(err, &se) {
			add(formKey(se.Field), sentence(se.Message))
		} else if err != nil {
			add("name", sentence(err.Error()))
		}
	}
	hints := secretHints(s)
	ok := len(problems) == 0
	for key, l := range f.errs {
		text := ""
		if f.showAll || f.touched[key] {
			text = strings.Join(problems[key], "\n")
		}
		showText(l, text)
		showText(f.hints[key], strings.Join(hints[key], "\n"))
		if r := f.keepRows[key]; r != nil {
			if f.keep != nil && len(hints[key]) > 0 {
				r.Show()
			} else {
				r.Hide()
			}
		}
	}
	f.setNote()
	f.form.Refresh()
	if f.onValid != nil {
		f.onValid(ok)
	}
	return ok
}

// keepSecrets moves the literal secrets of env and headers into the OS
// keyring and writes ${keyring:} references in their place.
func (f *serverForm) keepSecrets() {
	if f.keep == nil {
		return
	}
	s, _ := f.server()
	if s.Name == "" {
		showText(f.testResult, "Give the server a name first: the secrets are kept under it.")
		return
	}
	out, names, where, err := f.keep(s)
	if err != nil {
		showText(f.testResult, "The secrets could not be kept: "+err.Error())
		return
	}
	f.env.SetText(joinPairs(out.Env, "="))
	f.headers.SetText(joinPairs(out.Headers, ": "))
	showText(f.testResult, fmt.Sprintf("Kept %s in %s (%s); servers.toml will refer to them as ${keyring:NAME}.",
		present.Plural(len(names), "secret"), where, strings.Join(names, ", ")))
	f.validate()
}

// problemText is every problem shown, for tests and messages.
func (f *serverForm) problemText() string {
	var out []string
	for _, key := range []string{"name", "command", "args", "env", "cwd", "url", "transport", "headers", "restart"} {
		if l := f.errs[key]; l.Visible() {
			out = append(out, l.Text)
		}
		if l := f.hints[key]; l.Visible() {
			out = append(out, l.Text)
		}
	}
	return strings.Join(out, "\n")
}

func showText(l *widget.Label, text string) {
	if l.Text != text {
		l.SetText(text)
	}
	if text == "" {
		l.Hide()
	} else {
		l.Show()
	}
}

// formKey is the form field of a registry field ("env.TOKEN" → "env").
func formKey(field string) string {
	k, _, _ := strings.Cut(field, ".")
	switch k {
	case "":
		return "name"
	case "cwd", "args", "command", "url", "transport", "restart", "env", "headers":
		return k
	}
	return "name"
}

// sentence starts a message with a capital and ends it with a full stop.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return s
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.ContainsAny(s[len(s)-1:], ".!?…") {
		s += "."
	}
	return s
}

// secretHints are the literal-secret hints for env and headers.
func secretHints(s *registry.Server) map[string][]string {
	out := map[string][]string{}
	for key, m := range map[string]map[string]string{"env": s.Env, "headers": s.Headers} {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if v := m[k]; v != "" && app.MaskSecret(v) != v && registry.SecretName(k) {
				out[key] = append(out[key], fmt.Sprintf("%s holds a literal secret: write ${env:VAR} so it stays out of servers.toml.", k))
			}
		}
	}
	return out
}

// editServer opens the form for a server ("" adds a new one; duplicate
// starts from a copy under a new name) and saves atomically; the engine
// applies the change, and the other servers keep running.
func (c *controller) editServer(name string, duplicate bool) {
	c.openMain()
	cfg, err := registry.Load(c.cfgPath)
	if err != nil {
		c.showError(err)
		return
	}
	var orig *registry.Server
	if name != "" {
		if orig = cfg.Server(name); orig == nil {
			c.showError(fmt.Errorf("%s is no longer in %s", name, c.cfgPath))
			return
		}
	}
	start := orig
	if duplicate && orig != nil {
		start = orig.Clone()
		start.Name = uniqueName(cfg, orig.Name+"-copy")
	}
	var taken []string
	for _, s := range cfg.Servers {
		if s.Name != name || duplicate {
			taken = append(taken, s.Name)
		}
	}
	form := newServerForm(start, taken)
	form.keep = func(s *registry.Server) (*registry.Server, []string, string, error) { return app.KeepSecrets(c.env, s) }
	form.validate() // an entry with literal secrets offers to keep them at once
	title := "Add server"
	switch {
	case duplicate:
		title = "Duplicate " + name
	case name != "":
		title = "Edit " + name
	}
	var d *dialog.CustomDialog
	save := func() {
		if !form.validate() {
			form.showAll = true // say what is missing, field by field
			form.validate()
			return
		}
		s, _ := form.server()
		replace := name
		if duplicate {
			replace = ""
		}
		if err := c.saveServer(replace, s); err != nil {
			c.showError(err)
			return
		}
		d.Hide()
		c.main.selectServer(s.Name)
	}
	saveBtn := widget.NewButtonWithIcon("Save", theme.DocumentSaveIcon(), save)
	saveBtn.Importance = widget.HighImportance
	testBtn := widget.NewButtonWithIcon("Test", theme.MediaPlayIcon(), nil)
	testBtn.OnTapped = func() { c.testForm(form, testBtn) }
	paste := widget.NewButtonWithIcon("Paste entry", theme.ContentPasteIcon(), func() {
		form.paste(c.app.Clipboard().Content())
	})
	cancel := widget.NewButton("Cancel", func() { d.Hide() })
	form.onSubmit = save
	form.onCancel = func() { d.Hide() }
	var body fyne.CanvasObject = container.NewVScroll(form.content)
	formButtons := []fyne.CanvasObject{cancel, paste, testBtn, saveBtn}
	manualShown := true
	var tabs *container.AppTabs
	size := fyne.NewSize(640, 620)
	if name == "" && !duplicate {
		// A new server: from the catalog, a bundle or a snippet, or by hand.
		tabs = c.addSources(body, func(names []string) {
			d.Hide()
			c.main.selectServer(names[0])
		}, func(manual bool) {
			manualShown = manual
			if manual {
				d.SetButtons(formButtons)
			} else {
				d.SetButtons([]fyne.CanvasObject{cancel})
			}
		})
		body = tabs
		size = fyne.NewSize(820, 640)
	}
	d = dialog.NewCustomWithoutButtons(title, body, c.win)
	d.SetButtons(formButtons)
	if tabs != nil {
		tabs.OnSelected(tabs.Selected())
	}
	// Escape and Enter work with no field focused too.
	cv := c.win.Canvas()
	prevKey := cv.OnTypedKey()
	cv.SetOnTypedKey(func(k *fyne.KeyEvent) {
		switch k.Name {
		case fyne.KeyEscape:
			d.Hide()
		case fyne.KeyReturn, fyne.KeyEnter:
			if manualShown {
				save()
			}
		}
	})
	d.SetOnClosed(func() { cv.SetOnTypedKey(prevKey) })
	d.Resize(size)
	d.Show()
	c.form = form
}

// testForm checks what the form holds, once, before it is saved, and says
// how it went under the form.
func (c *controller) testForm(f *serverForm, btn *widget.Button) {
	if !f.validate() {
		f.showAll = true
		f.validate()
		return
	}
	s, _ := f.server()
	cfg, _ := registry.Load(c.cfgPath) // its settings; defaults if it does not load
	btn.Disable()
	showText(f.testResult, "Testing "+s.Name+"…")
	f.testResult.Importance = widget.MediumImportance
	f.tested++
	f.testShown = true
	gen := f.tested
	go func() {
		st := c.checkServer(s, cfg)
		fyne.Do(func() {
			btn.Enable()
			if gen != f.tested {
				return // edited since: the outcome is of values no longer there
			}
			text, good := testWords(&st)
			f.testResult.Importance = widget.SuccessImportance
			if !good {
				f.testResult.Importance = widget.DangerImportance
			}
			showText(f.testResult, text)
			f.testResult.Refresh()
			if c.afterTest != nil {
				c.afterTest()
			}
		})
	}()
}

// testWords says how a one-off check went: what answered, or why not.
func testWords(st *supervisor.ServerState) (string, bool) {
	if st.State == supervisor.StateReady {
		text := "Works: " + present.StateDetail(st)
		if r := st.Report; r != nil && r.ServerInfo.Name != "" {
			text = "Works: " + r.ServerInfo.Name + " " + r.ServerInfo.Version + ", " + present.StateDetail(st)
		}
		return text + ".", true
	}
	text := "Does not work: " + present.StateDetail(st) + "."
	if d := st.Diagnosis; d != nil {
		text = "Does not work: " + d.Message
		if d.Fix != "" {
			text += "\nSuggested fix: " + d.Fix
		}
	}
	var lines []string
	for _, l := range st.StderrTail {
		lines = append(lines, l.Text)
	}
	if l := present.TellingStderrLine(lines); l != "" {
		text += "\nFrom its stderr: " + l
	}
	return text, false
}

// paste fills the form from a pasted entry (clients.ParseSnippet).
func (f *serverForm) paste(text string) {
	s, warnings, err := parsePasted(text)
	if err != nil {
		f.testResult.Importance = widget.DangerImportance
		showText(f.testResult, "Nothing pasted: "+sentence(err.Error()))
		return
	}
	if s.Name == pastedName {
		if n := strings.TrimSpace(f.name.Text); n != "" {
			s.Name = n
		}
	}
	f.load(s)
	for key := range f.errs {
		f.touched[key] = true
	}
	f.validate()
	f.testResult.Importance = widget.MediumImportance
	showText(f.testResult, strings.TrimSpace("Filled from the pasted entry. "+strings.Join(warnings, " ")))
}

func uniqueName(cfg *registry.Config, base string) string {
	name := base
	for i := 2; cfg.Server(name) != nil; i++ {
		name = fmt.Sprintf("%s-%d", base, i)
	}
	return name
}

// saveServer writes s into servers.toml in place of the server called
// replace ("" appends), then applies the new list.
func (c *controller) saveServer(replace string, s *registry.Server) error {
	return c.updateConfig(func(cfg *registry.Config) error {
		if replace == "" {
			cfg.Servers = append(cfg.Servers, s)
			return nil
		}
		for i, old := range cfg.Servers {
			if old.Name == replace {
				cfg.Servers[i] = s
				return nil
			}
		}
		return fmt.Errorf("%s is no longer in %s", replace, cfg.Path)
	})
}

// updateConfig reads servers.toml afresh, changes it and saves it
// atomically. The engine applies the saved file itself, as it does any
// edit (a daemon's engine too: the app must not reload on top); only an
// engine that cannot follow its file is told to read it. A file that does
// not load is not touched.
func (c *controller) updateConfig(change func(cfg *registry.Config) error) error {
	c.saveMu.Lock()
	defer c.saveMu.Unlock()
	cfg, err := registry.Load(c.cfgPath)
	if err != nil {
		return fmt.Errorf("servers.toml was not changed: %w", err)
	}
	if err := change(cfg); err != nil {
		return err
	}
	if err := registry.Save(cfg); err != nil {
		return err
	}
	if c.eng.Status().WatchProblem != "" {
		ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
		defer cancel()
		if _, err := c.eng.Reload(ctx); err != nil {
			return fmt.Errorf("saved, but not applied: %w", err)
		}
	}
	return nil
}

// removeServer asks, then removes a server from the config and stops it.
func (c *controller) removeServer(name string) { c.removeServers([]string{name}) }

// removeServers asks, then removes servers from the config and stops them.
func (c *controller) removeServers(names []string) {
	if len(names) == 0 {
		return
	}
	c.openMain()
	title, what, it := "Remove "+names[0]+"?", names[0], "it"
	if len(names) > 1 {
		title = fmt.Sprintf("Remove %d servers?", len(names))
		what, it = strings.Join(names, ", "), "them"
	}
	msg := widget.NewLabel(fmt.Sprintf("This stops %s and removes %s from %s.\nThe file as it was is kept as %s.", what, it, c.cfgPath, filepath.Base(c.cfgPath)+".bak"))
	msg.Wrapping = fyne.TextWrapWord
	body := container.NewVBox(msg)
	// A server added from an MCP bundle runs from the folder it was
	// unpacked into: offered for deletion too, not deleted unasked.
	var folders []app.BundleFolder
	if cfg, err := registry.Load(c.cfgPath); err == nil {
		folders, _ = app.BundleFolders(cfg, names, "")
	}
	var delFiles *widget.Check
	if len(folders) > 0 {
		var paths []string
		for _, f := range folders {
			paths = append(paths, tildePath(f.Folder))
		}
		label := "Also delete the folder its MCP bundle was unpacked into: " + strings.Join(paths, ", ")
		if len(folders) > 1 {
			label = "Also delete the folders their MCP bundles were unpacked into: " + strings.Join(paths, ", ")
		}
		delFiles = widget.NewCheck(label, nil)
		body.Add(delFiles)
	}
	d := dialog.NewCustomConfirm(title, "Remove", "Cancel", body, func(ok bool) {
		c.dismiss = nil
		if !ok {
			return
		}
		err := c.updateConfig(func(cfg *registry.Config) error {
			cfg.Servers = slices.DeleteFunc(cfg.Servers, func(s *registry.Server) bool { return slices.Contains(names, s.Name) })
			return nil
		})
		if err == nil && delFiles != nil && delFiles.Checked {
			err = app.DeleteBundleFolders(folders, "")
		}
		if err != nil {
			c.showError(err)
		}
	}, c.win)
	d.SetConfirmImportance(widget.DangerImportance)
	d.Show()
	c.dismiss = d.Hide
	c.lastConfirm = d
}
