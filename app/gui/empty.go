package gui

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// emptyState takes the place of the details when no server is selected:
// with no servers configured it says what to do first; when the search
// hides every server it offers to clear it.
type emptyState struct {
	title   *widget.Label
	body    *widget.Label
	add     *widget.Button
	imp     *widget.Button
	clear   *widget.Button
	content fyne.CanvasObject
}

func newEmptyState(m *mainWindow) *emptyState {
	e := &emptyState{}
	e.title = widget.NewLabelWithStyle("", fyne.TextAlignCenter, fyne.TextStyle{Bold: true})
	e.title.SizeName = theme.SizeNameSubHeadingText
	e.body = widget.NewLabelWithStyle("", fyne.TextAlignCenter, fyne.TextStyle{})
	e.add = widget.NewButtonWithIcon("Add a server", theme.ContentAddIcon(), func() { m.c.editServer("", false) })
	e.add.Importance = widget.HighImportance
	e.imp = widget.NewButtonWithIcon("Import from a client…", theme.DownloadIcon(), m.c.showImport)
	e.clear = widget.NewButtonWithIcon("Clear the search", theme.ContentClearIcon(), func() { m.servers.search.SetText("") })
	e.content = container.NewCenter(container.NewVBox(e.title, e.body, container.NewCenter(container.NewHBox(e.add, e.imp, e.clear))))
	e.content.Hide()
	return e
}

// Set says why nothing is shown: no servers at all, or none matching query.
func (e *emptyState) Set(servers int, query string) {
	if servers == 0 {
		e.title.SetText("No servers yet")
		e.body.SetText("Add the MCP servers you use, or import the ones an AI client\n(Claude, Cursor, VS Code, …) already has. mcptray keeps them\nrunning and shows here what each one offers.")
		e.add.Show()
		e.imp.Show()
		e.clear.Hide()
		return
	}
	e.title.SetText("No server matches")
	e.body.SetText(fmt.Sprintf("None of the %d servers has %q\nin its name, state or command.", servers, query))
	e.add.Hide()
	e.imp.Hide()
	e.clear.Show()
}
