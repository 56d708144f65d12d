package gui

import (
	"errors"
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
	footer  fyne.CanvasObject
}

func newConfigBar(c *controller) *configBar {
	b := &configBar{}
	b.path = widget.NewLabel("Config: " + tildePath(c.cfgPath))
	b.path.Truncation = fyne.TextTruncateEllipsis
	b.open = widget.NewButtonWithIcon("Open config file", theme.FileTextIcon(), c.openConfigFile)
	reload := widget.NewButtonWithIcon("Reload", theme.ViewRefreshIcon(), c.reloadConfig)
	b.footer = container.NewBorder(nil, nil, nil, container.NewHBox(b.open, reload), b.path)

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

// Set shows why the config does not load, or (nil) hides the banner.
func (b *configBar) Set(err error) {
	if err == nil {
		b.banner.Hide()
		return
	}
	where, source := configProblem(err)
	b.problem.SetText(where + "\nThe servers keep running as they were; fix the file and it applies when saved.")
	b.source.SetText(source)
	if source == "" {
		b.source.Hide()
	} else {
		b.source.Show()
	}
	b.banner.Show()
	b.banner.Refresh()
}

// configProblem splits a load error into its first line (FILE:LINE:COL:
// what) and the quoted source with its caret.
func configProblem(err error) (where, source string) {
	text := err.Error()
	var se *registry.SyntaxError
	if errors.As(err, &se) {
		text = se.Long()
	}
	first, rest, _ := strings.Cut(text, "\n")
	return "servers.toml does not load: " + first, strings.TrimRight(rest, "\n")
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

// setConfigErr records whether the config on disk loads and shows it (UI
// thread).
func (c *controller) setConfigErr(err error) {
	c.configErr = err
	if c.main != nil {
		c.main.config.Set(err)
		c.main.content.Refresh() // the banner takes or gives back its room
	}
}
