// Command floor is the smallest desktop app Fyne makes with what mcptray's
// desktop app shows: one window and a tray icon with a menu. `make bench`
// measures its memory beside mcptray's, in the same run, as the toolkit's
// floor on the machine.
package main

import (
	"fyne.io/fyne/v2"
	fyneapp "fyne.io/fyne/v2/app"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/widget"

	"mcptray/assets"
)

func main() {
	a := fyneapp.NewWithID("dev.mcptray.bench-floor")
	if desk, ok := a.(desktop.App); ok {
		desk.SetSystemTrayIcon(assets.TrayReady)
		desk.SetSystemTrayMenu(fyne.NewMenu("floor", fyne.NewMenuItem("One item", nil)))
	}
	w := a.NewWindow("floor")
	w.SetContent(widget.NewLabel("The floor: one window and a tray icon."))
	w.Resize(fyne.NewSize(1100, 700))
	w.SetCloseIntercept(w.Hide)
	w.Show()
	a.Run()
}
