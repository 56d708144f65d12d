package gui

import (
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
// same rules the config file is loaded with.
type serverForm struct {
	kind        *widget.RadioGroup
	name        *widget.Entry
	description *widget.Entry
	command     *widget.Entry
	args        *widget.Entry
	env         *widget.Entry
	cwd         *widget.Entry
	url         *widget.Entry
	transport   *widget.Select
	headers     *widget.Entry
	autostart   *widget.Check
	restart     *widget.Select
	disabled    *widget.Check
	problems    *widget.Label
	stdioRows   []fyne.CanvasObject // label and field of each stdio row
	remoteRows  []fyne.CanvasObject
	form        *fyne.Container
	content     fyne.CanvasObject

	// taken holds the names of the other servers in the config.
	taken []string
	// onValid is called after each validation with the outcome.
	onValid func(ok bool)
}

func newServerForm(s *registry.Server, taken []string) *serverForm {
	f := &serverForm{taken: taken}
	multi := func(placeholder string) *widget.Entry {
		e := widget.NewMultiLineEntry()
		e.SetPlaceHolder(placeholder)
		e.SetMinRowsVisible(3)
		e.TextStyle.Monospace = true
		return e
	}
	f.name = widget.NewEntry()
	f.name.SetPlaceHolder("filesystem")
	f.description = widget.NewEntry()
	f.description.SetPlaceHolder("optional")
	f.command = widget.NewEntry()
	f.command.SetPlaceHolder("npx")
	f.args = multi("one argument per line, e.g.\n-y\n@modelcontextprotocol/server-filesystem")
	f.env = multi("KEY=VALUE per line; reference secrets as ${env:VAR}")
	f.cwd = widget.NewEntry()
	f.cwd.SetPlaceHolder("optional working folder, e.g. ~/projects")
	f.url = widget.NewEntry()
	f.url.SetPlaceHolder("https://example.com/mcp")
	f.transport = widget.NewSelect(transportChoices, nil)
	f.headers = multi("Name: value per line, e.g.\nAuthorization: Bearer ${env:TOKEN}")
	f.autostart = widget.NewCheck("Start with mcptray", nil)
	f.restart = widget.NewSelect(restartChoices, nil)
	f.disabled = widget.NewCheck("Disabled", nil)
	f.problems = widget.NewLabel("")
	f.problems.Wrapping = fyne.TextWrapWord
	f.problems.Importance = widget.DangerImportance

	// One form, so every label lines up; the rows of the other kind are
	// hidden (the form layout skips a row whose cells are both hidden).
	row := func(label string, w fyne.CanvasObject) []fyne.CanvasObject {
		return []fyne.CanvasObject{widget.NewLabel(label), w}
	}
	f.stdioRows = slices.Concat(row("Command", f.command), row("Arguments", f.args), row("Environment", f.env), row("Working folder", f.cwd))
	f.remoteRows = slices.Concat(row("URL", f.url), row("Transport", f.transport), row("Headers", f.headers))
	f.kind = widget.NewRadioGroup([]string{kindStdio, kindRemote}, func(k string) {
		showRows(f.stdioRows, k == kindStdio)
		showRows(f.remoteRows, k == kindRemote)
		f.validate()
	})
	f.kind.Horizontal = true
	f.kind.Required = true

	f.form = container.New(layout.NewFormLayout(), slices.Concat(
		row("Name", f.name), row("Kind", f.kind), f.stdioRows, f.remoteRows,
		row("Description", f.description), row("Restart", f.restart),
		row("", container.NewHBox(f.autostart, f.disabled)))...)
	f.content = container.NewVBox(f.form, f.problems)

	f.load(s)
	for _, e := range []*widget.Entry{f.name, f.description, f.command, f.args, f.env, f.cwd, f.url, f.headers} {
		e.OnChanged = func(string) { f.validate() }
	}
	f.transport.OnChanged = func(string) { f.validate() }
	f.restart.OnChanged = func(string) { f.validate() }
	return f
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
	f.autostart.SetChecked(s.Autostart)
	f.restart.SetSelected(string(s.RestartPolicy()))
	f.disabled.SetChecked(s.Disabled)
	if s.IsRemote() {
		f.kind.SetSelected(kindRemote)
	} else {
		f.kind.SetSelected(kindStdio)
	}
}

func joinPairs(m map[string]string, sep string) string {
	var lines []string
	for _, k := range sortedKeys(m) {
		lines = append(lines, k+sep+m[k])
	}
	return strings.Join(lines, "\n")
}

// server builds the entry from the form; problems are lines that could not
// be read.
func (f *serverForm) server() (*registry.Server, []string) {
	var problems []string
	s := &registry.Server{
		Name:        strings.TrimSpace(f.name.Text),
		Description: strings.TrimSpace(f.description.Text),
		Autostart:   f.autostart.Checked,
		Disabled:    f.disabled.Checked,
	}
	if f.restart.Selected != string(registry.RestartOnFailure) {
		s.Restart = registry.RestartPolicy(f.restart.Selected)
	}
	pairs := func(field, text, sep string) map[string]string {
		m := map[string]string{}
		for i, line := range strings.Split(text, "\n") {
			line = strings.TrimRight(line, "\r")
			if strings.TrimSpace(line) == "" {
				continue
			}
			k, v, ok := strings.Cut(line, strings.TrimSpace(sep))
			k = strings.TrimSpace(k)
			if !ok || k == "" {
				problems = append(problems, fmt.Sprintf("%s line %d: write %s", field, i+1, map[string]string{"=": "KEY=VALUE", ": ": "Name: value"}[sep]))
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
		s.Headers = pairs("Headers", f.headers.Text, ": ")
	} else {
		s.Command = strings.TrimSpace(f.command.Text)
		for _, a := range strings.Split(f.args.Text, "\n") {
			if a = strings.TrimRight(a, "\r"); a != "" {
				s.Args = append(s.Args, a)
			}
		}
		s.Env = pairs("Environment", f.env.Text, "=")
		s.Cwd = strings.TrimSpace(f.cwd.Text)
	}
	return s, problems
}

// validate checks the entry with the registry's own rules
// ([registry.Server.Validate]), shows the problems and reports the outcome.
func (f *serverForm) validate() bool {
	s, problems := f.server()
	switch {
	case s.Name == "":
		problems = append(problems, "Name: required")
	case slices.Contains(f.taken, s.Name):
		problems = append(problems, fmt.Sprintf("Name: a server called %q already exists", s.Name))
	case f.kind.Selected == kindStdio && s.Command == "":
		problems = append(problems, "Command: required for a local server")
	case f.kind.Selected == kindRemote && s.URL == "":
		problems = append(problems, "URL: required for a remote server")
	default:
		problems = append(problems, registryProblems(s)...)
	}
	f.problems.SetText(strings.Join(problems, "\n"))
	ok := len(problems) == 0
	if f.onValid != nil {
		f.onValid(ok)
	}
	return ok
}

// registryProblems are the errors (and literal-secret hints) the config
// loader would report for s: the registry's one validation.
func registryProblems(s *registry.Server) []string {
	var out []string
	if err := s.Validate(); err != nil {
		out = append(out, err.Error())
	}
	for _, m := range []map[string]string{s.Env, s.Headers} {
		for _, k := range sortedKeys(m) {
			if v := m[k]; v != "" && app.MaskSecret(v) != v && looksSecret(k) {
				out = append(out, fmt.Sprintf("%s holds a literal secret; consider ${env:VAR} so it stays out of servers.toml", k))
			}
		}
	}
	return out
}

func looksSecret(key string) bool {
	k := strings.ToLower(key)
	for _, w := range []string{"token", "secret", "key", "password", "authorization", "auth"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// editServer opens the form for a server ("" adds a new one; duplicate
// starts from a copy under a new name), saves atomically and applies the
// change through Reload so the other servers keep running.
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
	title := "Add server"
	switch {
	case duplicate:
		title = "Duplicate " + name
	case name != "":
		title = "Edit " + name
	}
	var d *dialog.CustomDialog
	save := widget.NewButtonWithIcon("Save", theme.DocumentSaveIcon(), func() {
		if !form.validate() {
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
	})
	save.Importance = widget.HighImportance
	form.onValid = func(ok bool) {
		if ok {
			save.Enable()
		} else {
			save.Disable()
		}
	}
	form.validate()
	cancel := widget.NewButton("Cancel", func() { d.Hide() })
	d = dialog.NewCustomWithoutButtons(title, container.NewVScroll(form.content), c.win)
	d.SetButtons([]fyne.CanvasObject{cancel, save})
	d.Resize(fyne.NewSize(640, 620))
	d.Show()
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

// updateConfig reads servers.toml afresh, changes it, saves it atomically and
// reloads the engine with the result. A file that does not load is not
// touched.
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
	c.eng.Reload(cfg.Servers)
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
	title, what := "Remove "+names[0]+"?", names[0]
	if len(names) > 1 {
		title = fmt.Sprintf("Remove %d servers?", len(names))
		what = strings.Join(names, ", ")
	}
	d := dialog.NewConfirm(title,
		fmt.Sprintf("This stops %s and removes it from %s.\nThe file as it was is kept as %s.", what, c.cfgPath, filepath.Base(c.cfgPath)+".bak"),
		func(ok bool) {
			if !ok {
				return
			}
			err := c.updateConfig(func(cfg *registry.Config) error {
				cfg.Servers = slices.DeleteFunc(cfg.Servers, func(s *registry.Server) bool { return slices.Contains(names, s.Name) })
				return nil
			})
			if err != nil {
				c.showError(err)
			}
		}, c.win)
	d.SetConfirmText("Remove")
	d.SetDismissText("Cancel")
	d.SetConfirmImportance(widget.DangerImportance)
	d.Show()
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
