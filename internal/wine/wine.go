// Package wine tells whether a Windows program runs under Wine, for the
// tests that exercise something Wine does not do as Windows does (they run
// under Wine on Linux, by make test-windows, and unchanged on Windows).
package wine

import "testing"

// Running reports whether the program is a Windows program run by Wine.
func Running() bool { return running() }

// Skip skips t under Wine, naming Wine and what it lacks; elsewhere (real
// Windows, any other OS) it does nothing and the test runs.
func Skip(t testing.TB, lacks string) {
	t.Helper()
	if Running() {
		t.Skipf("under Wine, which %s", lacks)
	}
}
