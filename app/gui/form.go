package gui

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"mcptray/app"
	"mcptray/app/present"
	"mcptray/registry"
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
