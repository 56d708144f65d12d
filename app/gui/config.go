package gui

import (
	"net/url"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"mcptray/registry"
)

// configBar is the window's line about servers.toml: where it is, a way to
// open it, and, when it does not load, a banner saying where it breaks
// (FILE:LINE:COL and the line itself) and that what runs keeps running.
type configBar struct {
	path    *widget.Label
	open    *widget.Button
	banner  *fyne.Container
	problem *widget.Label
	source  *widget.Label
	shown   string // the problem shown, to redo nothing while it stays
	footer  fyne.CanvasObject
}

func newConfigBar(c *controller) *configBar {
	b := &configBar{}
	b.path = widget.NewLabel("Config: " + tildePath(c.cfgPath))
	b.path.Truncation = fyne.TextTruncateEllipsis
	b.open = widget.NewButtonWithIcon("Open config file", theme.FileTextIcon(), c.openConfigFile)
	reload := widget.NewButtonWithIcon("Reload", theme.ViewRefreshIcon(), c.reloadConfig)
	profiles := widget.NewButton("Profiles…", c.showProfiles)
	b.footer = container.NewBorder(nil, nil, nil, container.NewHBox(profiles, b.open, reload), b.path)

	b.problem = widget.NewLabel("")
	b.problem.Wrapping = fyne.TextWrapWord
	b.problem.Importance = widget.DangerImportance
	b.source = widget.NewLabel("")
	b.source.TextStyle.Monospace = true
	openHere := widget.NewButtonWithIcon("Open config file", theme.FileTextIcon(), c.openConfigFile)
	b.banner = container.NewBorder(nil, widget.NewSeparator(), nil, container.NewCenter(openHere), container.NewVBox(b.problem, b.source))
	b.banner.Hide()
	return b
}

// Set shows where the config on disk does not load (the engine's
// ConfigProblem), or, with nil, hides the banner.
func (b *configBar) Set(d *registry.Diagnostic) {
	if d == nil {
		b.banner.Hide()
		b.shown = ""
		return
	}
	long := d.Long()
	if long == b.shown && b.banner.Visible() {
		return
	}
	b.shown = long
	first, source, _ := strings.Cut(long, "\n")
	b.problem.SetText("servers.toml does not load: " + first + "\nThe servers run as the file last loaded. Fix the file and save it: it is applied at once.")
	b.source.SetText(strings.TrimRight(source, "\n"))
	if source == "" {
		b.source.Hide()
	} else {
		b.source.Show()
	}
	b.banner.Show()
}

// openConfigFile opens servers.toml in the program the desktop opens text
// files with (xdg-open, open, the Windows file opener: Fyne's OpenURL).
func (c *controller) openConfigFile() {
	abs, err := filepath.Abs(c.cfgPath)
	if err == nil {
		open := c.openURL
		if open == nil {
			open = c.app.OpenURL
		}
		err = open(&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)})
	}
	if err != nil {
		c.showError(err)
	}
}
