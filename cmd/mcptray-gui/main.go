// Command mcptray-gui is mcptray's desktop app: the tray menu and windows over
// the engine. `mcptray` with no command starts it; it is a binary of its own
// so that the command line, the daemon and the demo server need no GUI
// libraries.
package main

import (
	"os"

	"mcptray/app"
	"mcptray/app/gui"
)

func main() {
	os.Exit(gui.Main(os.Args[1:], &app.Env{Stdout: os.Stdout, Stderr: os.Stderr, Stdin: os.Stdin}))
}
