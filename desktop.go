//go:build !nogui

package main

import "mcptray/app/gui"

// desktop is the desktop app, which this build links.
var desktop = gui.Main
