package gui

import (
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// TestScreenshotTrayMenu renders the tray menu for a snapshot holding every
// state, and the four tray icons, into MCPTRAY_SCREENSHOTS (for the README).
// A tray has no window of its own to photograph under Xvfb, so the menu is
// drawn by Fyne's software painter from the same builder the tray uses.
func TestScreenshotTrayMenu(t *testing.T) {
	dir := os.Getenv("MCPTRAY_SCREENSHOTS")
	if dir == "" {
		t.Skip("set MCPTRAY_SCREENSHOTS to a folder to write the README's tray pictures")
	}
	a := test.NewTempApp(t)
	a.Settings().SetTheme(darkTheme{theme.DefaultTheme()})
	copyClients = func() [][2]string { return [][2]string{{"cursor", "Cursor"}} }
	noop := func(string) {}
	menu := buildTrayMenu(sampleSnapshot(), nil, "", trayActions{restart: noop, showDetails: noop, viewLog: noop,
		startStop: func(string, bool) {}, copyConfig: func(string, string) {}, openMain: func() {}, checkAll: func() {}, reload: func() {}, quit: func() {}})

	var icons []fyne.CanvasObject
	for _, h := range []health{healthReady, healthWarn, healthError, healthIdle} {
		img := canvas.NewImageFromResource(trayIcon(h))
		img.SetMinSize(fyne.NewSize(24, 24))
		icons = append(icons, img, widget.NewLabel(h.String()))
	}
	content := container.NewPadded(container.NewVBox(container.NewHBox(icons...), widget.NewMenu(menu)))
	w := test.NewTempWindow(t, content)
	w.Resize(content.MinSize().Add(fyne.NewSize(16, 16)))
	writePNG(t, filepath.Join(dir, "tray-menu.png"), w.Canvas().Capture())
}

func writePNG(t *testing.T, path string, img image.Image) {
	t.Helper()
	rgba := image.NewRGBA(img.Bounds())
	draw.Draw(rgba, rgba.Bounds(), img, image.Point{}, draw.Src)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, rgba); err != nil {
		t.Fatal(err)
	}
}

// darkTheme is the default theme in its dark variant, as most people see
// the app.
type darkTheme struct{ fyne.Theme }

func (d darkTheme) Color(n fyne.ThemeColorName, _ fyne.ThemeVariant) color.Color {
	return d.Theme.Color(n, theme.VariantDark)
}

// TestScreenshotMainWindow renders the window with thirty servers, three of
// them failing, as the software painter draws it (main-30.png).
func TestScreenshotMainWindow(t *testing.T) {
	dir := os.Getenv("MCPTRAY_SCREENSHOTS")
	if dir == "" {
		t.Skip("set MCPTRAY_SCREENSHOTS to a folder to write the README's pictures")
	}
	eng := newFakeEngine(manySnapshot(30))
	c := newTestController(t, eng, "")
	c.app.Settings().SetTheme(darkTheme{theme.DefaultTheme()})
	c.apply(eng.Snapshot())
	writePNG(t, filepath.Join(dir, "main-30.png"), c.win.Canvas().Capture())
}
