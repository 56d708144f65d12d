//go:build !nogui

package main

import (
	"os"

	"mcptray/app/gui"
)

// desktop is the desktop app, which this build links.
var desktop = gui.Main

// handOffFirst runs a command in the headless build beside this one, if
// there is one of the same version (see handOff).
func handOffFirst() {
	if code, handed := handOff(os.Args[1:], os.Stderr); handed {
		os.Exit(code)
	}
}
