package gui

import "fyne.io/systray"

// setTrayTooltip sets what hovering the tray icon shows. Fyne has no call
// for it; its tray is fyne.io/systray, whose tooltip this sets (before the
// tray is up it is kept and sent when it registers).
func setTrayTooltip(text string) { systray.SetTooltip(text) }
