package gui

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
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
	"mcptray/registry/clients"
	"mcptray/registry/secrets"
)

func init() {
	// The tray's "Copy config for" submenu: the clients people use most.
	copyClients = func() [][2]string {
		var out [][2]string
		for _, id := range []string{"claude-desktop", "claude-code", "cursor", "vscode", "windsurf", "codex", "gemini", "zed", "generic"} {
			if c, err := clients.Lookup(id); err == nil {
				out = append(out, [2]string{c.ID, c.Name})
			}
		}
		return out
	}
}

// plan decides the entries for req with [app.PlanEntries], the rule the
// command line uses, from servers.toml as written (references unexpanded,
// so secrets stay references).
func (c *controller) plan(req app.EntryRequest) (*app.Entries, error) {
	cfg, err := registry.Load(c.cfgPath)
	if err != nil {
		return nil, err
	}
	return app.PlanEntries(c.env, cfg, c.clientOptions(), req)
}

// exportChoices are the servers the export dialog offers (every valid one:
// ticking one names it) and the ones ticked at first (what an export of
// everything takes, less the servers failing now).
func (c *controller) exportChoices() (offered, ticked []string, err error) {
	cfg, err := registry.Load(c.cfgPath)
	if err != nil {
		return nil, nil, err
	}
	for _, s := range cfg.Servers {
		if s.Valid() {
			offered = append(offered, s.Name)
		}
	}
	def, _, err := clients.Select(cfg, nil)
	if errors.Is(err, clients.ErrNoServers) && len(offered) > 0 {
		// Every valid one is disabled: offer them, tick none.
		return offered, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	for _, s := range def {
		// Healthy ones only: a failing server is offered, not ticked.
		if st := c.snap.Server(s.Name); st == nil || rank(st) == 2 {
			ticked = append(ticked, s.Name)
		}
	}
	return offered, ticked, nil
}

// copyConfig puts one server's entry for a client on the clipboard, and
// says so in a notification.
func (c *controller) copyConfig(name, clientID string) {
	go func() {
		text, note, err := c.configCopy(name, clientID)
		fyne.Do(func() {
			if err != nil {
				c.showError(err)
				return
			}
			c.app.Clipboard().SetContent(text)
			c.app.SendNotification(note)
		})
	}()
}

// configCopy is what Copy config copies for server name and a client:
// the server through mcptray (`mcptray connect NAME`), as install writes
// a named server, and the notification that says where to paste it.
func (c *controller) configCopy(name, clientID string) (string, *fyne.Notification, error) {
	cl, err := clients.Lookup(clientID)
	if err != nil {
		return "", nil, fmt.Errorf("copy config for %s: %w", clientID, err)
	}
	e, err := c.plan(app.EntryRequest{Route: app.RoutePerServer, Names: []string{name}})
	if err != nil {
		return "", nil, fmt.Errorf("copy config for %s: %w", clientID, err)
	}
	res, err := e.Render(cl, clients.OutputSnippet)
	if err != nil {
		return "", nil, fmt.Errorf("copy config for %s: %w", clientID, err)
	}
	body := "Paste it into " + cl.Name + "'s config: the client reaches " + name + " through mcptray."
	if p, err := cl.Path(c.clientOptions()); err == nil && p != "" {
		body = "Paste it into " + cl.Name + "'s config, " + p + ": the client reaches " + name + " through mcptray."
	}
	switch {
	case strings.Contains(string(res.Data), clients.Hidden):
		body = "It holds " + clients.Hidden + " in place of secret values: replace them, or use Export… and tick \"" + revealLabel + "\"."
	case len(res.Warnings) > 0:
		body = strings.Join(res.Warnings, " ")
	}
	return string(res.Data), fyne.NewNotification("Copied "+name+" for "+cl.Name, body), nil
}

// clientOptions are the export options for this machine: commands resolve
// through the login shell's PATH, as GUI clients need.
func (c *controller) clientOptions() *clients.Options {
	o := app.ClientOptions(context.Background(), c.env)
	o.Remedies = &windowRemedies
	return o
}

// windowRemedies are the fixes the window's warnings offer, in the
// window's terms: its boxes and choices, not the command line's flags.
var windowRemedies = clients.Remedies{
	Reveal:  `tick "` + revealLabel + `"`,
	Through: `choose a route through mcptray ("` + app.RouteOne.Label() + `" or "` + app.RoutePerServer.Label() + `")`,
	Keyring: `tick "` + keyringLabel + `"`,
}

// revealLabel is the export dialog's box for secrets' values; keyringLabel
// the import dialog's for keeping literal secrets in the keyring.
const (
	revealLabel  = "Include secret values"
	keyringLabel = "Keep secrets in the keyring"
)

// exportDialog picks a client, a route, servers and an output, shows it,
// and copies, installs (after showing the diff) or opens the client's
// install link. The route is the command line's (the one entry by
// default, per server through mcptray, or direct), decided by
// [app.PlanEntries]. What it shows never holds a secret's value; "Copy
// with secret values" copies the values the client needs.
type exportDialog struct {
	c        *controller
	client   *widget.Select
	output   *widget.RadioGroup
	route    *widget.Select
	profile  *widget.Select
	servers  *widget.CheckGroup
	all      *widget.Button
	none     *widget.Button
	ticks    []string // the ticks per server, kept while the one entry shows its profile's
	byRoute  map[string]app.EntryRoute
	snippet  *widget.Entry
	notes    *widget.Label
	path     *widget.Label
	reveal   *widget.Check
	install  *widget.Button
	link     *widget.Button
	copyBtn  *widget.Button
	byName   map[string]*clients.Client
	byOutput map[string]clients.Output
	content  fyne.CanvasObject
}

// outputLabels name the outputs in the dialog.
var outputLabels = map[clients.Output]string{
	clients.OutputSnippet:  "Config snippet",
	clients.OutputCLI:      "Add command",
	clients.OutputDeepLink: "Install link",
}

func (c *controller) showExport(name string) {
	c.openMain()
	offered, ticked, err := c.exportChoices()
	if err != nil {
		c.showError(err)
		return
	}
	if name != "" {
		ticked = []string{name}
	}
	e := c.newExportDialog(offered, ticked)
	if name != "" {
		// A server's own Export…: its entry, through mcptray.
		e.route.SetSelected(app.RoutePerServer.Label())
	}
	d := dialog.NewCustom("Export to an AI client", "Close", e.content, c.win)
	d.Resize(fyne.NewSize(820, 640))
	c.showEscapable(d, nil)
}

func (c *controller) newExportDialog(names, ticked []string) *exportDialog {
	e := &exportDialog{c: c, byOutput: map[string]clients.Output{}, byRoute: map[string]app.EntryRoute{}}
	labels, byName, pick := clientChoices(c.app.Preferences(), c.clientOptions())
	e.byName = byName
	e.servers = widget.NewCheckGroup(names, func([]string) { e.render() })
	e.servers.SetSelected(ticked)
	// A list that scrolls: thirty servers do not push the dialog off
	// screen, and the layout stays put whatever the client.
	serverScroll := container.NewVScroll(e.servers)
	serverScroll.SetMinSize(fyne.NewSize(0, 5.5*widget.NewCheck("", nil).MinSize().Height))
	e.all = widget.NewButton("All", func() { e.servers.SetSelected(names) })
	e.none = widget.NewButton("None", func() { e.servers.SetSelected(nil) })
	e.snippet = widget.NewMultiLineEntry()
	e.snippet.TextStyle.Monospace = true
	e.snippet.Wrapping = fyne.TextWrapOff
	e.snippet.SetMinRowsVisible(8)
	e.notes = widget.NewLabel("")
	e.notes.Wrapping = fyne.TextWrapWord
	notes := container.NewVScroll(e.notes)
	notes.SetMinSize(fyne.NewSize(0, 3*rowHeight()))
	e.path = widget.NewLabel("")
	e.path.Truncation = fyne.TextTruncateEllipsis
	e.reveal = widget.NewCheck(revealLabel, func(bool) { e.render() }) // the notes say what it changes
	e.copyBtn = widget.NewButtonWithIcon("Copy", theme.ContentCopyIcon(), e.copy)
	e.install = widget.NewButtonWithIcon("Install…", theme.DocumentSaveIcon(), e.confirmInstall)
	e.link = widget.NewButtonWithIcon("Open install link", theme.ComputerIcon(), e.openLink)
	e.output = widget.NewRadioGroup(nil, func(string) { e.render() })
	e.output.Horizontal = true
	var routes []string
	for _, r := range app.Routes {
		routes = append(routes, r.Label())
		e.byRoute[r.Label()] = r
	}
	profiles := []string{registry.DefaultProfile}
	if cfg, err := registry.Load(c.cfgPath); err == nil {
		profiles = cfg.ProfileNames()
	}
	e.profile = widget.NewSelect(profiles, func(string) { e.showRoute() })
	e.profile.SetSelected(profiles[0])
	e.route = widget.NewSelect(routes, func(string) { e.showRoute() })
	e.route.Selected = app.RouteOne.Label()
	e.client = widget.NewSelect(labels, func(label string) {
		if cl := e.byName[label]; cl != nil {
			c.app.Preferences().SetString(prefExportClient, cl.ID)
		}
		e.setOutputs()
		e.render()
	})
	e.client.SetSelected(pick)
	e.showRoute()

	// The route sits beside the client, and what it means heads the
	// notes: the dialog keeps its height.
	top := container.New(layout.NewFormLayout(),
		widget.NewLabel("Client"), container.NewBorder(nil, nil, nil,
			container.NewHBox(widget.NewLabel("Route"), wide(e.route, 250), widget.NewLabel("Profile"), e.profile), e.client),
		widget.NewLabel("Output"), e.output,
		container.NewVBox(widget.NewLabel("Servers"), e.all, e.none), serverScroll,
		widget.NewLabel("File"), e.path)
	e.content = container.NewBorder(top, container.NewVBox(notes, container.NewHBox(e.copyBtn, e.reveal, e.install, e.link)), nil, nil, e.snippet)
	return e
}

// setOutputs offers the outputs the chosen client has.
func (e *exportDialog) setOutputs() {
	if e.output == nil {
		return
	}
	cl := e.byName[e.client.Selected]
	var opts []string
	if cl != nil {
		for _, o := range cl.Outputs() {
			opts = append(opts, outputLabels[o])
			e.byOutput[outputLabels[o]] = o
		}
	}
	keep := e.output.Selected
	e.output.Options = opts
	if !slices.Contains(opts, keep) && len(opts) > 0 {
		keep = opts[0]
	}
	e.output.Selected = keep
	e.output.Refresh()
}

// entries are the entries for the current choice, with the client.
func (e *exportDialog) entries() (*clients.Client, *app.Entries, error) {
	cl := e.byName[e.client.Selected]
	if cl == nil {
		return nil, nil, errors.New("pick a client")
	}
	req := app.EntryRequest{Route: e.byRoute[e.route.Selected]}
	if req.Route == app.RouteOne {
		if p := e.profile.Selected; p != registry.DefaultProfile {
			req.Profile = p
		}
	} else {
		if len(e.servers.Selected) == 0 {
			return cl, nil, errors.New("pick at least one server")
		}
		req.Names = e.servers.Selected
	}
	plan, err := e.c.plan(req)
	return cl, plan, err
}

// renderWith renders the current choice, with secrets' values or without.
func (e *exportDialog) renderWith(reveal bool) (*clients.Client, *clients.Result, error) {
	cl, plan, err := e.entries()
	if err != nil {
		return cl, nil, err
	}
	if reveal {
		plan = plan.Revealed()
	}
	res, err := plan.Render(cl, e.byOutput[e.output.Selected])
	return cl, res, err
}

// showRoute shows the route's servers and renders: the one entry holds
// every server of its profile, so the list shows those, unchangeable, and
// the ticks for entries per server come back with their route.
func (e *exportDialog) showRoute() {
	if e.servers == nil || e.route == nil || e.profile == nil {
		return
	}
	one := e.byRoute[e.route.Selected] == app.RouteOne
	for _, w := range []fyne.Disableable{e.servers, e.all, e.none} {
		setEnabled(w, !one)
	}
	setEnabled(e.profile, one)
	if one {
		if e.ticks == nil {
			e.ticks = append([]string{}, e.servers.Selected...)
		}
		var members []string
		req := app.EntryRequest{Route: app.RouteOne}
		if p := e.profile.Selected; p != registry.DefaultProfile {
			req.Profile = p
		}
		if plan, err := e.c.plan(req); err == nil {
			members = plan.Members
		}
		e.servers.Selected = members
		e.servers.Refresh()
	} else if e.ticks != nil {
		e.servers.Selected, e.ticks = e.ticks, nil
		e.servers.Refresh()
	}
	e.render()
}

// render shows the output for the current choice (UI thread; the work is
// small and local).
func (e *exportDialog) render() {
	if e.snippet == nil || e.client == nil || e.output == nil || e.route == nil {
		return
	}
	cl, plan, err := e.entries()
	var res *clients.Result
	if err == nil {
		res, err = plan.Render(cl, e.byOutput[e.output.Selected])
	}
	if cl != nil {
		setEnabled(e.install, cl.HasFile() && plan != nil)
		setEnabled(e.link, cl.HasDeepLink() && plan != nil)
		if p, perr := cl.Path(e.c.clientOptions()); perr == nil {
			e.path.SetText(tildePath(p))
		} else {
			e.path.SetText("–")
		}
	}
	if err != nil {
		e.snippet.SetText("")
		e.notes.SetText(err.Error())
		setEnabled(e.copyBtn, false)
		return
	}
	setEnabled(e.copyBtn, true)
	// What is shown never holds a secret's value; with "Include secret
	// values" the notes are those of what Copy and Install write.
	e.snippet.SetText(string(res.Data))
	if e.reveal.Checked {
		if _, revealed, rerr := e.renderWith(true); rerr == nil {
			res = revealed
		}
	}
	// What the route means comes first: the notes say where the
	// client's requests go.
	summary := plan.Summary()
	e.notes.SetText(strings.Join(append([]string{strings.ToUpper(summary[:1]) + summary[1:] + "."}, append(slices.Clone(res.Warnings), res.Notes...)...), "\n"))
}

// copy puts what is shown on the clipboard, or, with "Include secret
// values", the same with the values a client needs in place of <hidden>.
func (e *exportDialog) copy() {
	text := e.snippet.Text
	msg := "Copied to the clipboard."
	if e.reveal.Checked {
		_, res, err := e.renderWith(true)
		if err != nil {
			e.notes.SetText(err.Error())
			return
		}
		text = string(res.Data)
		msg = "Copied to the clipboard, with secret values: paste it only into the client's config."
	} else if strings.Contains(text, clients.Hidden) {
		msg = "Copied to the clipboard. It holds " + clients.Hidden + " in place of secret values: tick \"" + revealLabel + "\" to copy them."
	}
	e.c.app.Clipboard().SetContent(text)
	e.notes.SetText(msg + "\n" + e.notes.Text)
}

// wide gives a select room for its longest option (a select alone is as
// narrow as its placeholder and truncates the choice).
func wide(o fyne.CanvasObject, width float32) fyne.CanvasObject {
	return container.New(layout.NewGridWrapLayout(fyne.NewSize(width, o.MinSize().Height)), o)
}

func setEnabled(w fyne.Disableable, on bool) {
	if on {
		w.Enable()
	} else {
		w.Disable()
	}
}

// confirmInstall shows the diff and the target file, then writes it.
func (e *exportDialog) confirmInstall() {
	cl, plan, err := e.entries()
	if err != nil {
		e.c.showError(err)
		return
	}
	// With "Include secret values" the file gets them; the diff shown
	// keeps them masked all the same.
	if e.reveal.Checked {
		plan = plan.Revealed()
	}
	ch, err := plan.Install(cl, &clients.FileOptions{DryRun: true})
	if err != nil {
		e.c.showError(err)
		return
	}
	if !ch.Changed() {
		dialog.ShowInformation("Nothing to change", ch.Path+" already holds these entries.", e.c.win)
		return
	}
	diff := widget.NewMultiLineEntry()
	diff.TextStyle.Monospace = true
	diff.Wrapping = fyne.TextWrapOff
	diff.SetText(ch.MaskedDiff())
	diff.SetMinRowsVisible(16)
	say := "mcptray will write " + ch.Path + " and keep the previous version beside it."
	if lines := append(append(ch.MaskedSwitchLines(), ch.Notes...), ch.Warnings...); len(lines) > 0 {
		say += "\n" + strings.Join(lines, "\n")
	}
	msg := widget.NewLabel(say)
	msg.Wrapping = fyne.TextWrapWord
	body := container.NewBorder(msg, nil, nil, nil, diff)
	d := dialog.NewCustomConfirm("Install into "+cl.Name, "Install", "Cancel", body, func(ok bool) {
		if !ok {
			return
		}
		ch, err := plan.Install(cl, nil)
		if err != nil {
			e.c.showError(err)
			return
		}
		info := "Wrote " + ch.Path
		if ch.Backup != "" {
			info += "\nBackup: " + ch.Backup
		}
		e.notes.SetText(info)
	}, e.c.win)
	d.Resize(fyne.NewSize(780, 560))
	d.Show()
}

func (e *exportDialog) openLink() {
	cl, plan, err := e.entries()
	if err == nil {
		var res *clients.Result
		if res, err = plan.Render(cl, clients.OutputDeepLink); err == nil {
			for _, line := range strings.Split(strings.TrimSpace(string(res.Data)), "\n") {
				u, perr := url.Parse(strings.TrimSpace(line))
				if perr != nil {
					err = perr
					break
				}
				if oerr := e.c.app.OpenURL(u); oerr != nil {
					err = oerr
					break
				}
			}
		}
	}
	if err != nil {
		e.c.showError(err)
	}
}

// importServers adds servers found in a client's file to servers.toml,
// their literal secrets kept in the keyring when toKeyring (undone when
// the file cannot be written), replacing servers of the same name when
// replace, else skipping them (named).
func (c *controller) importServers(found []*registry.Server, toKeyring, replace bool) (skipped []string, err error) {
	servers := make([]*registry.Server, len(found))
	for i, s := range found {
		servers[i] = s.Clone() // a failed import leaves what is shown as it was
	}
	var st secrets.Store
	if toKeyring && len(app.LiteralSecrets(servers)) > 0 {
		if st, err = app.OpenSecrets(c.env); err != nil {
			return nil, fmt.Errorf("keep the imported secrets in the keyring: %w (untick %q to write them into servers.toml)", err, keyringLabel)
		}
	}
	var moved *app.MovedSecrets
	err = c.updateConfig(func(cfg *registry.Config) error {
		merged := app.MergeImported(cfg, servers, replace)
		skipped = merged.Skipped
		// Only the written servers' secrets move.
		if st != nil && len(app.LiteralSecrets(merged.Written)) > 0 {
			moved = app.MoveToKeyring(merged.Written, st)
			return moved.Persist() // before the save: a failure writes nothing
		}
		return nil
	})
	if err != nil && moved != nil && !errors.Is(err, errSavedNotApplied) {
		moved.Undo() // servers.toml does not refer to them
	}
	return skipped, err
}

// showImport reads a client's config file and, after a preview, adds its
// servers to servers.toml.
func (c *controller) showImport() {
	c.openMain()
	var labels []string
	byName := map[string]*clients.Client{}
	for _, cl := range clients.All() {
		labels = append(labels, cl.Name)
		byName[cl.Name] = cl
	}
	path := widget.NewEntry()
	replace := widget.NewCheck("Replace servers with the same name", nil)
	// Literal secrets in what is imported go to the keyring unless the
	// person unticks it, as `mcptray import --keyring` does.
	var load func()
	keep := widget.NewCheck(keyringLabel, func(bool) {
		if load != nil {
			load()
		}
	})
	keep.SetChecked(true)
	preview := widget.NewLabel("")
	preview.Wrapping = fyne.TextWrapWord
	preview.TextStyle.Monospace = true
	var found []*registry.Server
	var importBtn *widget.Button
	current := byName[labels[0]]
	load = func() {
		found = nil
		importBtn.Disable()
		cl := current
		data, err := os.ReadFile(path.Text)
		if errors.Is(err, fs.ErrNotExist) {
			preview.SetText(fmt.Sprintf("%s has no config file at %s: choose another client, or type the path of the file to read.", cl.Name, path.Text))
			return
		}
		if err != nil {
			preview.SetText(err.Error())
			return
		}
		imp, err := cl.Import(path.Text, data, c.clientOptions())
		if err != nil {
			preview.SetText(err.Error())
			return
		}
		var b strings.Builder
		for _, s := range imp.Servers {
			s := s.Redacted() // credentials in a URL or bridge arguments stay hidden
			b.WriteString("+ " + s.Name + "  ")
			if s.IsRemote() {
				b.WriteString(s.URL + "\n")
			} else {
				b.WriteString(clients.ShellJoin(append([]string{s.Command}, s.Args...)) + "\n")
			}
		}
		lits := app.LiteralSecrets(imp.Servers)
		setEnabled(keep, len(lits) > 0)
		toKeyring := keep.Checked && len(lits) > 0
		for _, w := range imp.Warnings {
			if toKeyring && strings.Contains(w, "holds a literal secret") {
				continue // it goes to the keyring
			}
			b.WriteString("! " + w + "\n")
		}
		if toKeyring {
			fmt.Fprintf(&b, "  %s kept in the keyring, not in servers.toml: %s\n", present.Plural(len(lits), "literal secret"), strings.Join(lits, ", "))
		}
		if len(imp.Servers) == 0 {
			b.WriteString("no servers in this file\n")
		}
		preview.SetText(b.String())
		found = imp.Servers
		setEnabled(importBtn, len(found) > 0)
	}
	client := widget.NewSelect(labels, func(l string) {
		current = byName[l]
		if p, err := byName[l].Path(c.clientOptions()); err == nil {
			path.SetText(p)
		}
	})
	path.OnChanged = func(string) {
		if importBtn != nil {
			load()
		}
	}
	importBtn = widget.NewButtonWithIcon("Import", theme.DownloadIcon(), nil)
	var d *dialog.CustomDialog
	importBtn.OnTapped = func() {
		skipped, err := c.importServers(found, keep.Checked, replace.Checked)
		if err != nil {
			c.showError(err)
			return
		}
		d.Hide()
		if len(skipped) > 0 {
			dialog.ShowInformation("Imported", "Skipped (already in servers.toml): "+strings.Join(skipped, ", ")+
				".\nTick \"Replace servers with the same name\" to overwrite them.", c.win)
		}
	}
	client.SetSelected(labels[0])
	load()
	top := container.New(layout.NewFormLayout(), widget.NewLabel("Client"), client, widget.NewLabel("File"), path, widget.NewLabel(""), replace, widget.NewLabel(""), keep)
	content := container.NewBorder(top, nil, nil, nil, container.NewVScroll(preview))
	d = dialog.NewCustomWithoutButtons("Import from an AI client", content, c.win)
	d.SetButtons([]fyne.CanvasObject{widget.NewButton("Cancel", func() { d.Hide() }), importBtn})
	d.Resize(fyne.NewSize(760, 520))
	c.showEscapable(d, nil)
}
