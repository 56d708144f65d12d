package app

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestLayout holds the packages under app/ to their roles (ARCHITECTURE.md):
// the two front ends, app/cli and app/gui, share app and the presentation
// packages and never import each other; app and the shared packages know
// neither front end, nor flag nor Fyne, so the headless build needs no GUI
// libraries and the window and the command line cannot drift apart by
// calling into each other.
func TestLayout(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("the layout check runs `go list`: %v", err)
	}
	const (
		cli  = "mcptray/app/cli"
		gui  = "mcptray/app/gui"
		fyne = "fyne.io/"
	)
	shared := []string{"mcptray/app", "mcptray/app/present", "mcptray/app/schemaform"}
	rules := map[string][]string{
		cli: {gui, fyne},
		gui: {cli},
	}
	for _, p := range shared {
		rules[p] = []string{cli, gui, fyne, "flag"}
	}
	for pkg, banned := range rules {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		deps := strings.Fields(string(out))
		if !slices.Contains(deps, pkg) {
			t.Fatalf("go list -deps %s does not list the package itself: %q", pkg, deps)
		}
		for _, d := range deps {
			for _, b := range banned {
				if d == b || strings.HasSuffix(b, "/") && strings.HasPrefix(d, b) {
					t.Errorf("%s imports %s (directly or through another package): it must not", pkg, d)
				}
			}
		}
	}
}
