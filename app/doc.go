// Package app is the application layer both front ends (app/cli, the
// command line, and app/gui, the desktop app) stand on: the environment a
// run has, config loading, engine construction, trials and one-off checks,
// the daemon (run it, dial it, start one), sign-in and stored credentials,
// secrets, and the options of AI clients' entries. It imports neither flag
// nor Fyne and knows neither front end (TestLayout holds it to that), so the
// headless build needs no GUI libraries.
package app
