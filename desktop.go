//go:build !nogui

package main

import (
	"os"

	"mcptray/app/gui"
	"mcptray/handoff"
)

// desktop is the desktop app, which this build links.
var desktop = gui.Main

// handOffFirst runs a command in the headless build beside this one, if
// there is one of the same version (package handoff). On Unix that happened
// before Fyne's packages were initialised, and this does nothing more.
func handOffFirst() {
	if code, handed := handoff.Run(os.Args[1:], os.Stderr); handed {
		os.Exit(code)
	}
}
