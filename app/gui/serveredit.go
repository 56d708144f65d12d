package gui

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"mcptray/app"
	"mcptray/app/present"
	"mcptray/registry"
	"mcptray/supervisor"
)

// The Add/Edit form's actions: opening it for a new, edited or duplicated
// server, its Test, and what Save and Remove write (through updateConfig,
// the one read-modify-write of servers.toml). The form itself is form.go.

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
			c.escapeTop() // this dialog, or one opened over it
		case fyne.KeyReturn, fyne.KeyEnter:
			if manualShown && c.onTop(d) {
				save()
			}
		}
	})
	adding := c.adding
	d.Resize(size)
	c.showEscapable(d, func() {
		cv.SetOnTypedKey(prevKey)
		if tabs != nil && adding != nil {
			adding.closed = true
		}
	})
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
// errSavedNotApplied is updateConfig's error when the file was written
// but the engine did not take it.
var errSavedNotApplied = errors.New("saved, but not applied")

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
			return fmt.Errorf("%w: %w", errSavedNotApplied, err)
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
	c.showEscapable(d, nil) // Escape answers "no", as Cancel does
	c.lastConfirm = d
}
