package gui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/widget"

	"mcptray/app"
	"mcptray/app/present"
	"mcptray/registry"
	"mcptray/registry/bundle"
	"mcptray/registry/catalog"
)

// The Add server dialog offers four ways in, each a tab: a server from the
// MCP Registry, an MCP bundle file, a pasted snippet, and the form to
// write an entry by hand. The first three make their entries the way
// `mcptray add` does (app.PlanRegistryAdd, PlanBundleAdd, PlanSnippetAdd,
// then Commit), so the window and the command line write the same thing.

// addTabManual is the title of the hand-written form's tab.
const addTabManual = "Manual"

// addDialog is the Add server dialog's four ways in.
type addDialog struct {
	tabs     *container.AppTabs
	registry *registryPane
	bundle   *bundlePane
	paste    *pastePane
	closed   bool // the dialog is gone
}

// addSources lays the four tabs out around the manual form; added is
// called on the main thread with the names of what one of the other tabs
// added, and onTab with whether the manual form is the tab shown.
func (c *controller) addSources(manual fyne.CanvasObject, added func(names []string), onTab func(manual bool)) *container.AppTabs {
	a := &addDialog{registry: c.newRegistryPane(added), bundle: c.newBundlePane(added), paste: c.newPastePane(added)}
	a.tabs = container.NewAppTabs(
		container.NewTabItem("From the catalog", a.registry.content),
		container.NewTabItem("From a bundle", a.bundle.content),
		container.NewTabItem("Paste", a.paste.content),
		container.NewTabItem(addTabManual, manual),
	)
	a.tabs.OnSelected = func(ti *container.TabItem) {
		onTab(ti.Text == addTabManual)
		if ti.Content == a.registry.content {
			a.registry.start()
		}
	}
	c.adding = a
	return a.tabs
}

// fieldsForm is an entry per field a server or bundle asks for, with its
// description; a secret's entry hides what is typed.
type fieldsForm struct {
	fields   []catalog.Field
	entries  []*widget.Entry
	content  *fyne.Container
	onSubmit func() // Enter in a field: what the pane's Add does
}

func newFieldsForm() *fieldsForm {
	return &fieldsForm{content: container.NewVBox()}
}

// set shows fields, replacing what was shown.
func (f *fieldsForm) set(fields []catalog.Field) {
	f.fields, f.entries = fields, nil
	f.content.RemoveAll()
	if len(fields) == 0 {
		f.content.Refresh()
		return
	}
	f.content.Add(heading("What it needs"))
	for _, fd := range fields {
		var e *widget.Entry
		if fd.Secret {
			e = widget.NewPasswordEntry()
		} else {
			e = widget.NewEntry()
		}
		switch {
		case fd.Placeholder != "":
			e.SetPlaceHolder(fd.Placeholder)
		case fd.Default != "":
			e.SetPlaceHolder(fd.Default + " (the default)")
		}
		label := fd.Name
		var notes []string
		if fd.Required {
			notes = append(notes, "required")
		}
		if fd.Secret {
			notes = append(notes, "secret: kept in the keyring, not in servers.toml")
		}
		if len(fd.Choices) > 0 {
			notes = append(notes, "one of "+strings.Join(fd.Choices, ", "))
		}
		if len(notes) > 0 {
			label += " (" + strings.Join(notes, "; ") + ")"
		}
		l := wrapped(label)
		l.TextStyle.Bold = true
		f.content.Add(l)
		if fd.Description != "" {
			d := widget.NewLabel(fd.Description)
			d.Wrapping = fyne.TextWrapWord
			f.content.Add(d)
		}
		e.OnSubmitted = func(string) {
			if f.onSubmit != nil {
				f.onSubmit()
			}
		}
		f.content.Add(e)
		f.entries = append(f.entries, e)
	}
	f.content.Refresh()
}

// focus puts the keyboard in the first field, so that a person types what
// the server needs and presses Enter to add it; with no field, on add.
func (f *fieldsForm) focus(w fyne.Window, add fyne.Focusable) {
	switch {
	case w == nil:
	case len(f.entries) > 0:
		w.Canvas().Focus(f.entries[0])
	default:
		w.Canvas().Focus(add)
	}
}

// values are the fields filled in, by name.
func (f *fieldsForm) values() map[string]string {
	out := map[string]string{}
	for i, fd := range f.fields {
		if v := strings.TrimSpace(f.entries[i].Text); v != "" {
			out[fd.Name] = v
		}
	}
	return out
}

// missing names the required fields left empty that have no default.
func (f *fieldsForm) missing() []string {
	var out []string
	for i, fd := range f.fields {
		if fd.Required && fd.Default == "" && strings.TrimSpace(f.entries[i].Text) == "" {
			out = append(out, fd.Name)
		}
	}
	return out
}

func heading(text string) *widget.Label {
	l := widget.NewLabel(text)
	l.TextStyle.Bold = true
	return l
}

func wrapped(text string) *widget.Label {
	l := widget.NewLabel(text)
	l.Wrapping = fyne.TextWrapWord
	return l
}

// commitAddition writes what an add made into the config, under names no
// entry has yet (the window never replaces an entry it did not show),
// and reports the names it used. It runs off the main thread.
func (c *controller) commitAddition(a *app.Addition) ([]string, error) {
	defer a.Close()
	cfg, err := registry.Load(c.cfgPath)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, s := range a.Servers {
		if cfg.Server(s.Name) != nil {
			s.Name = uniqueName(cfg, s.Name)
		}
		names = append(names, s.Name)
	}
	if err := a.Commit(c.env, cfg, false); err != nil {
		return nil, err
	}
	return names, nil
}

// uniqueAddName is the entry name an add would use for base, made unique
// in the config at path: a plan's secrets are named after the entry, so
// the name is settled before the plan is made.
func uniqueAddName(path, base string) string {
	cfg, err := registry.Load(path)
	if err != nil || cfg.Server(base) == nil {
		return ""
	}
	return uniqueName(cfg, base)
}

// registryPane searches the MCP Registry as the person types and adds the
// server picked.
type registryPane struct {
	c       *controller
	added   func([]string)
	once    sync.Once
	client  *catalog.Client
	search  *widget.Entry
	list    *widget.List
	results []catalog.Response
	seq     int // the search whose results are shown; main thread only
	timer   *time.Timer
	status  *widget.Label
	detail  *widget.Label
	fields  *fieldsForm
	add     *widget.Button
	picked  *catalog.Response
	right   *fyne.Container // the details, fields and Add
	content fyne.CanvasObject
	// async runs the registry's requests off the main thread (a test
	// runs them in turn); soon runs a search once typing pauses.
	async func(func())
	soon  func(func())
}

func (c *controller) newRegistryPane(added func([]string)) *registryPane {
	p := &registryPane{c: c, added: added, status: wrapped(""), detail: wrapped(""), fields: newFieldsForm(),
		async: func(f func()) { go f() }}
	p.soon = func(f func()) {
		if p.timer != nil {
			p.timer.Stop()
		}
		p.timer = time.AfterFunc(300*time.Millisecond, func() { fyne.Do(f) })
	}
	p.search = widget.NewEntry()
	p.search.SetPlaceHolder("Search the MCP Registry (a name or a word of its description)")
	p.search.OnChanged = func(string) { p.soon(p.runSearch) }
	p.search.OnSubmitted = func(string) { p.runSearch() }
	p.list = widget.NewList(
		func() int { return len(p.results) },
		func() fyne.CanvasObject {
			t := widget.NewLabel("")
			t.TextStyle.Bold = true
			t.Truncation = fyne.TextTruncateEllipsis
			return container.NewVBox(t, newSubtitle())
		},
		func(id widget.ListItemID, o fyne.CanvasObject) {
			if id >= len(p.results) {
				return
			}
			s := p.results[id].Server
			box := o.(*fyne.Container)
			box.Objects[0].(*widget.Label).SetText(s.Name + " " + s.Version)
			setSubtitle(box.Objects[1].(*widget.RichText), present.Visible(firstLine(s.Description)))
		})
	p.list.OnSelected = func(id widget.ListItemID) {
		if id < len(p.results) {
			p.pick(&p.results[id])
		}
	}
	p.add = widget.NewButton("Add", p.addPicked)
	p.fields.onSubmit = func() {
		if !p.add.Disabled() { // not while one runs
			p.addPicked()
		}
	}
	p.add.Importance = widget.HighImportance
	p.add.Disable()
	all := widget.NewButton("List all", func() {
		p.search.SetText("")
		p.runSearch()
	})
	p.right = container.NewVBox(p.detail, p.fields.content, container.NewHBox(p.add))
	split := container.NewHSplit(p.list, container.NewVScroll(p.right))
	split.Offset = 0.45
	p.content = container.NewBorder(container.NewVBox(container.NewBorder(nil, nil, nil, all, p.search), p.status), nil, nil, nil, split)
	return p
}

// start makes the registry's client the first time the tab shows, and
// says what to do; nothing is asked of the registry until the person
// searches.
func (p *registryPane) start() {
	p.once.Do(func() {
		cfg, _ := registry.Load(p.c.cfgPath)
		client, err := app.RegistryClient(cfg, "")
		if err != nil {
			p.status.SetText("The catalog cannot be read: " + err.Error())
			return
		}
		p.client = client
		p.status.SetText("Type to search the MCP Registry (" + client.BaseURL() + "), or press List all.")
	})
}

func (p *registryPane) runSearch() {
	if p.client == nil {
		p.start()
		if p.client == nil {
			return
		}
	}
	p.seq++
	seq, query, client := p.seq, strings.TrimSpace(p.search.Text), p.client
	p.status.SetText("Searching " + client.BaseURL() + "…")
	p.async(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		page, err := client.Search(ctx, query, &catalog.SearchOptions{Limit: 50})
		fyne.Do(func() {
			if seq != p.seq {
				return // a newer search is under way
			}
			p.showResults(query, page, err)
		})
	})
}

func (p *registryPane) showResults(query string, page *catalog.Page, err error) {
	p.list.UnselectAll()
	p.results = nil
	switch {
	case err != nil:
		p.status.SetText("The catalog could not be searched: " + err.Error())
	case len(page.Servers) == 0 && query != "":
		p.status.SetText(fmt.Sprintf("No server in the catalog matches %q.", query))
	default:
		p.results = page.Servers
		more := ""
		if page.NextCursor != "" {
			more = " (the first ones: type to narrow)"
		}
		p.status.SetText(fmt.Sprintf("%s%s. Pick one to see how it runs and what it needs.", present.Plural(len(p.results), "server"), more))
	}
	p.list.Refresh()
}

// pick shows a server's details and the fields the way it runs here asks
// for.
func (p *registryPane) pick(r *catalog.Response) {
	p.picked = r
	s := r.Server
	var b strings.Builder
	title := s.Name
	if s.Title != "" {
		title = s.Title + " (" + s.Name + ")"
	}
	fmt.Fprintf(&b, "%s, version %s\n", title, s.Version)
	if s.Description != "" {
		b.WriteString(present.Visible(s.Description) + "\n")
	}
	if s.Repository != nil && s.Repository.URL != "" {
		b.WriteString("Source: " + s.Repository.URL + "\n")
	} else if s.WebsiteURL != "" {
		b.WriteString("Website: " + s.WebsiteURL + "\n")
	}
	if how := s.HowItRuns(); len(how) > 1 {
		b.WriteString("Published as: " + strings.Join(how, ", ") + "\n")
	}
	if st := r.Status(); st != "active" {
		fmt.Fprintf(&b, "The registry marks this version %s.", st)
		if msg := r.Meta.Official.StatusMessage; msg != "" {
			b.WriteString(" " + msg)
		}
		b.WriteString("\n")
	}
	ch, err := catalog.Choose(&s, "")
	if err == nil {
		err = s.CheckSchema()
	}
	if err != nil {
		b.WriteString("\nmcptray cannot add it: " + err.Error())
		p.fields.set(nil)
		p.add.Disable()
	} else {
		b.WriteString(choiceWords(ch))
		p.fields.set(ch.Fields())
		p.add.Enable()
	}
	p.detail.SetText(strings.TrimSpace(b.String()))
	p.right.Refresh() // the details' wrapped height changed
}

// choiceWords says how mcptray will run the way it picked.
func choiceWords(ch catalog.Choice) string {
	if ch.Remote != nil {
		return fmt.Sprintf("mcptray will connect to %s (%s).", present.VisibleLine(ch.Remote.URL), ch.Remote.Type)
	}
	pk := ch.Package
	ref := pk.Identifier
	if pk.Version != "" {
		ref += " " + pk.Version
	}
	return fmt.Sprintf("mcptray will run the %s package %s (%s).", ch.Kind(), present.VisibleLine(ref), pk.Transport.Type)
}

func (p *registryPane) addPicked() {
	r := p.picked
	if r == nil {
		return
	}
	if miss := p.fields.missing(); len(miss) > 0 {
		p.status.SetText("Fill in " + strings.Join(miss, ", ") + " first: the server needs it.")
		return
	}
	ref := r.Server.Name + "@" + r.Server.Version
	o := &app.AddOptions{Values: p.fields.values(), Name: uniqueAddName(p.c.cfgPath, catalog.EntryName(r.Server.Name))}
	client := p.client
	p.c.addInBackground(p.async, p.add, p.status, "Adding "+ref+"…", ref, func() (*app.Addition, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		a, _, err := app.PlanRegistryAdd(ctx, client, ref, o)
		return a, err
	}, p.added)
}

// addInBackground makes an addition with plan off the main thread (async),
// commits it and says how it went in status, Add disabled meanwhile;
// added gets the names written.
func (c *controller) addInBackground(async func(func()), add *widget.Button, status *widget.Label, doing, what string,
	plan func() (*app.Addition, error), added func([]string)) {
	add.Disable()
	status.SetText(doing)
	async(func() {
		a, err := plan()
		var names []string
		if err == nil {
			names, err = c.commitAddition(a)
		}
		fyne.Do(func() {
			add.Enable()
			if err != nil {
				status.SetText(addFailed(what, err))
				return
			}
			status.SetText("Added " + strings.Join(names, ", ") + ".")
			added(names)
		})
	})
}

// addFailed says why an add failed, naming the fields a missing value
// belongs to.
func addFailed(what string, err error) string {
	var miss *catalog.MissingError
	if errors.As(err, &miss) {
		var n []string
		for _, f := range miss.Fields {
			n = append(n, f.Name)
		}
		return fmt.Sprintf("%s needs %s: fill it in and press Add again.", what, strings.Join(n, ", "))
	}
	return fmt.Sprintf("%s was not added: %v", what, err)
}

// runsAs is what an entry runs, secrets masked: its URL, or its command
// line.
func runsAs(s *registry.Server) string {
	r := s.Redacted()
	if r.URL != "" {
		return present.VisibleLine(r.URL)
	}
	return present.VisibleLine(strings.Join(append([]string{r.Command}, r.Args...), " "))
}

// bundlePane adds an MCP bundle (.mcpb) picked from the disk.
type bundlePane struct {
	c       *controller
	added   func([]string)
	path    string
	status  *widget.Label
	detail  *widget.Label
	fields  *fieldsForm
	add     *widget.Button
	content fyne.CanvasObject
	async   func(func()) // runs the unpack off the main thread
}

func (c *controller) newBundlePane(added func([]string)) *bundlePane {
	p := &bundlePane{c: c, added: added, async: func(f func()) { go f() }, status: wrapped("An MCP bundle (.mcpb) is a server packed with what it needs to run. Choose one, or drop it on mcptray's window: mcptray checks it, unpacks it into its data folder and adds its entry."),
		detail: wrapped(""), fields: newFieldsForm()}
	choose := widget.NewButton("Choose a bundle…", func() {
		d := dialog.NewFileOpen(func(rc fyne.URIReadCloser, err error) {
			if err != nil || rc == nil {
				return
			}
			rc.Close()
			p.open(rc.URI().Path())
		}, c.win)
		d.SetFilter(storage.NewExtensionFileFilter([]string{".mcpb"}))
		d.Show()
	})
	p.add = widget.NewButton("Add", p.addBundle)
	p.fields.onSubmit = func() {
		if !p.add.Disabled() { // not while one runs
			p.addBundle()
		}
	}
	p.add.Importance = widget.HighImportance
	p.add.Disable()
	p.content = container.NewVScroll(container.NewVBox(p.status, container.NewHBox(choose), p.detail, p.fields.content, container.NewHBox(p.add)))
	return p
}

// open reads the bundle at path and shows what it is and needs, or why
// mcptray refuses it.
func (p *bundlePane) open(path string) {
	p.path = path
	p.add.Disable()
	p.fields.set(nil)
	b, err := bundle.Open(path)
	if err != nil {
		p.detail.SetText(err.Error())
		return
	}
	defer b.Close()
	m := b.Manifest
	var s strings.Builder
	fmt.Fprintf(&s, "%s, version %s\n", m.Name, m.Version)
	if m.Description != "" {
		s.WriteString(present.Visible(m.Description) + "\n")
	}
	fmt.Fprintf(&s, "A %s server.", m.Server.Type)
	if err := b.Check(&bundle.Host{Resolve: app.LoginResolver(context.Background())}); err != nil {
		s.WriteString("\nmcptray cannot run it here: " + err.Error())
		p.detail.SetText(s.String())
		return
	}
	p.detail.SetText(s.String())
	p.fields.set(m.Fields())
	p.add.Enable()
	p.fields.focus(p.c.win, p.add)
}

func (p *bundlePane) addBundle() {
	if p.path == "" {
		return
	}
	if miss := p.fields.missing(); len(miss) > 0 {
		p.status.SetText("Fill in " + strings.Join(miss, ", ") + " first: the server needs it.")
		return
	}
	path := p.path
	o := &app.AddOptions{Values: p.fields.values()}
	if b, err := bundle.Open(path); err == nil {
		o.Name = uniqueAddName(p.c.cfgPath, catalog.EntryName(b.Manifest.Name))
		b.Close()
	}
	p.c.addInBackground(p.async, p.add, p.status, "Unpacking and adding the bundle…", "The bundle", func() (*app.Addition, error) {
		return app.PlanBundleAdd(context.Background(), path, o)
	}, p.added)
}

// pastePane adds the entries of a snippet: any AI client's JSON, Codex's
// TOML or a command line, one server or many.
type pastePane struct {
	c       *controller
	added   func([]string)
	text    *widget.Entry
	preview *widget.Label
	add     *widget.Button
	content fyne.CanvasObject
}

func (c *controller) newPastePane(added func([]string)) *pastePane {
	p := &pastePane{c: c, added: added, preview: wrapped("")}
	p.text = widget.NewMultiLineEntry()
	p.text.SetPlaceHolder("Paste a server's entry from a README or another AI client: Claude Desktop's or Cursor's mcpServers, VS Code's servers, Codex's [mcp_servers.NAME], or a command line such as npx -y @modelcontextprotocol/server-memory")
	p.text.Wrapping = fyne.TextWrapWord
	p.text.SetMinRowsVisible(8)
	p.text.OnChanged = func(string) { p.parse() }
	fromClipboard := widget.NewButton("Paste from the clipboard", func() { p.text.SetText(c.app.Clipboard().Content()) })
	p.add = widget.NewButton("Add", p.addPasted)
	p.add.Importance = widget.HighImportance
	p.add.Disable()
	p.content = container.NewVScroll(container.NewVBox(p.text, container.NewHBox(fromClipboard), p.preview, container.NewHBox(p.add)))
	return p
}

// parse says what the text holds as it is typed.
func (p *pastePane) parse() {
	if strings.TrimSpace(p.text.Text) == "" {
		p.preview.SetText("")
		p.add.Disable()
		return
	}
	a, err := app.PlanSnippetAdd(p.text.Text, nil)
	if err != nil {
		p.preview.SetText(err.Error())
		p.add.Disable()
		return
	}
	var lines []string
	for _, s := range a.Servers {
		lines = append(lines, "• "+s.Name+": "+runsAs(s))
	}
	for _, w := range a.Warnings {
		lines = append(lines, "Note: "+w)
	}
	p.preview.SetText(strings.Join(lines, "\n"))
	p.add.SetText("Add " + present.Plural(len(a.Servers), "server"))
	p.add.Enable()
}

func (p *pastePane) addPasted() {
	a, err := app.PlanSnippetAdd(p.text.Text, nil)
	if err != nil {
		p.preview.SetText(err.Error())
		return
	}
	names, err := p.c.commitAddition(a)
	if err != nil {
		p.preview.SetText(addFailed("The snippet", err))
		return
	}
	p.added(names)
}

// droppedTextLimit is the largest file a drop pastes: a client's config
// file is a few kilobytes.
const droppedTextLimit = 1 << 20

// dropped takes files dropped on the main window (UI thread): an MCP
// bundle opens in the Add dialog's bundle tab, a client's config file or
// a snippet in its Paste tab, ready to add. Anything else is refused with
// the reason, and nothing is written until the person presses Add.
func (c *controller) dropped(uris []fyne.URI) {
	var files []fyne.URI
	for _, u := range uris {
		if u.Scheme() == "file" {
			files = append(files, u)
		}
	}
	if len(files) == 0 {
		return
	}
	if len(files) > 1 {
		c.showError(fmt.Errorf("%d files were dropped on mcptray's window: drop one at a time (an MCP bundle, or a client's config file)", len(files)))
		return
	}
	path := files[0].Path()
	if strings.EqualFold(files[0].Extension(), ".mcpb") {
		if c.openAddTab(1) {
			c.adding.bundle.open(path)
		}
		return
	}
	text, err := readDropped(path)
	if err != nil {
		c.showError(err)
		return
	}
	if c.openAddTab(2) {
		c.adding.paste.text.SetText(text)
	}
}

// openAddTab shows the Add server dialog, opening it when it is not
// shown, at tab i; false when it could not be opened.
func (c *controller) openAddTab(i int) bool {
	if c.adding == nil || c.adding.closed || c.win == nil {
		c.editServer("", false)
	}
	if c.adding == nil || c.adding.closed {
		return false // the dialog could not open; it said why
	}
	c.adding.tabs.SelectIndex(i)
	return true
}

// readDropped reads a dropped file that should hold a server's entry:
// text, of the size of a config file.
func readDropped(path string) (string, error) {
	name := filepath.Base(path)
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return "", fmt.Errorf("cannot read the dropped file %s: %w", path, errors.Unwrap(err))
	case fi.IsDir():
		return "", fmt.Errorf("%s is a folder: drop an MCP bundle (.mcpb) or a client's config file (JSON or TOML)", name)
	case fi.Size() > droppedTextLimit:
		return "", fmt.Errorf("%s is larger than 1 MiB, too large for a config file: drop an MCP bundle (.mcpb) or a client's config file (JSON or TOML)", name)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("cannot read the dropped file %s: %w", path, err)
	}
	if !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0 {
		return "", fmt.Errorf("%s is not text: drop an MCP bundle (.mcpb) or a client's config file (JSON or TOML)", name)
	}
	return string(b), nil
}
