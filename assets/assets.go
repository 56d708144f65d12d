// Package assets holds mcptray's embedded icons: the app icon and the tray
// icons for each aggregate health. The PNGs are drawn by gen_icons.go
// (go generate ./assets).
package assets

import (
	_ "embed"

	"fyne.io/fyne/v2"
)

//go:generate go run gen_icons.go

var (
	//go:embed icon.png
	iconPNG []byte
	//go:embed tray-ready.png
	trayReadyPNG []byte
	//go:embed tray-warn.png
	trayWarnPNG []byte
	//go:embed tray-error.png
	trayErrorPNG []byte
	//go:embed tray-idle.png
	trayIdlePNG []byte
)

// Icons as Fyne resources.
var (
	AppIcon   = fyne.NewStaticResource("mcptray.png", iconPNG)
	TrayReady = fyne.NewStaticResource("mcptray-ready.png", trayReadyPNG) // every enabled server ready
	TrayWarn  = fyne.NewStaticResource("mcptray-warn.png", trayWarnPNG)   // starting, degraded or in backoff
	TrayError = fyne.NewStaticResource("mcptray-error.png", trayErrorPNG) // failed, unhealthy or crash-looping
	TrayIdle  = fyne.NewStaticResource("mcptray-idle.png", trayIdlePNG)   // all stopped
)
