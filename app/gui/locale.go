package gui

import "mcptray/app/gui/quietlocale"

// Fyne has read the locale by now (its packages are initialised before this
// one): give servers and commands the user's own locale back.
func init() { quietlocale.Restore() }
