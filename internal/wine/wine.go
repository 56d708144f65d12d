// Package wine tells whether a Windows program runs under Wine, for the
// tests that exercise something Wine does not do as Windows does (they run
// under Wine on Linux, by make test-windows, and unchanged on Windows).
package wine

import (
	"os"
	"testing"
)

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

// Symlink makes the symbolic link newname → oldname for a test, or skips
// it where none can be made: Wine reports a link made and makes none, and
// Windows makes one only with the privilege (developer mode, or an
// administrator). Any other failure fails the test.
func Symlink(t testing.TB, oldname, newname string) {
	t.Helper()
	if err := os.Symlink(oldname, newname); err != nil {
		if privilegeMissing(err) {
			t.Skipf("Windows makes symbolic links only with the privilege (developer mode, or an administrator): %v", err)
		}
		t.Fatal(err)
	}
	if fi, err := os.Lstat(newname); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		Skip(t, "reports a symbolic link made and makes none")
		t.Fatalf("os.Symlink(%s, %s) succeeded and made no link", oldname, newname)
	}
}
