// Package gui is the desktop app: the tray menu and the windows, drawn with
// Fyne over the engine's snapshots and transitions, in-process or through the
// daemon. It holds Fyne code only: what it shows comes from app/present and
// app/schemaform and what it does from app, the same calls the command line
// makes; it never imports app/cli.
package gui
