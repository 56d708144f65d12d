package present

import (
	"os/exec"
	"strings"
	"testing"

	"mcptray/internal/testenv"
	"mcptray/internal/wine"
)

// TestTellingStderrLineOfANodeCrash: what Node.js prints when a server's
// script cannot be loaded ends with its version; the line quoted is the
// error.
func TestTellingStderrLineOfANodeCrash(t *testing.T) {
	wine.Skip(t, "runs no Node.js here")
	if _, err := exec.LookPath("node"); err != nil {
		testenv.Need(t, "node")
	}
	out, err := exec.Command("node", "/nonexistent/mcptray-test/index.js").CombinedOutput()
	if err == nil {
		t.Fatal("node ran a script that does not exist")
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "Node.js v") {
		t.Logf("node's last line is %q, not its version", last)
	}
	if got, want := TellingStderrLine(lines), "Error: Cannot find module '/nonexistent/mcptray-test/index.js'"; got != want {
		t.Errorf("TellingStderrLine = %q, want %q\n%s", got, want, out)
	}
	if got := TellingStderrLine([]string{"listening on stdio", "", "}"}); got != "listening on stdio" {
		t.Errorf("with no error named: %q", got)
	}
}
