// Command mcptray runs and checks the MCP servers configured on this machine:
// a tray app, a command line and a background service over one engine.
//
// The default build links the desktop app (Fyne, cgo) and starts it when run
// with no command. `go build -tags nogui` builds the headless binary: the
// same commands, pure Go, no GUI libraries, for servers and containers.
package main

import (
	"os"

	"mcptray/app"
	"mcptray/app/cli"
)

func main() {
	handOffFirst()
	os.Exit(cli.Main(os.Args[1:], &app.Env{Stdout: os.Stdout, Stderr: os.Stderr, Stdin: os.Stdin, Desktop: desktop}))
}
