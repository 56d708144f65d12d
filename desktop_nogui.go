//go:build nogui

package main

import "mcptray/app"

// desktop is nil: the headless build has no desktop app (and needs no GUI
// libraries to run).
var desktop app.DesktopFunc

// handOffFirst does nothing: this is the headless build.
func handOffFirst() {}
