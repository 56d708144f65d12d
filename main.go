// Command mcptray runs and checks the MCP servers configured on this machine:
// a tray app, a command line and a background service over one engine.
package main

import (
	"os"

	"mcptray/app"
)

func main() {
	os.Exit(app.Main(os.Args[1:], &app.Env{Stdout: os.Stdout, Stderr: os.Stderr, Stdin: os.Stdin}))
}
