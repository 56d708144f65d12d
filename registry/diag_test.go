package registry

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiagnosticControlCharacters: a config line holding terminal control
// characters (an escape sequence that recolours or clears the screen, a
// carriage return that hides what comes before it) is printed with them as
// escapes, the caret still under the column; nothing raw reaches the
// terminal.
func TestDiagnosticControlCharacters(t *testing.T) {
	dir := t.TempDir()
	check := func(what, long, want string) {
		t.Helper()
		for _, r := range long {
			if r != '\n' && r != '\t' && (r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == 0x202e) {
				t.Errorf("%s prints the control character %U raw:\n%q", what, r, long)
				break
			}
		}
		if !strings.Contains(long, want) {
			t.Errorf("%s: want %q in\n%s", what, want, long)
		}
	}
	// A syntax error on a line holding an escape sequence.
	bad := filepath.Join(dir, "bad.toml")
	os.WriteFile(bad, []byte("[servers.a]\ncommand = \"x\x1b[2J\x1b[31m\" junk\r\n"), 0o600)
	_, err := Load(bad)
	var se *SyntaxError
	if !errors.As(err, &se) {
		t.Fatalf("want a syntax error, got %v", err)
	}
	check("a syntax error", se.Long(), `\x1b[2J`)
	// The caret sits under the same character as before the escapes.
	lines := strings.Split(se.Long(), "\n")
	if len(lines) >= 3 && se.Col > 0 {
		src, caret := lines[1], lines[2]
		if i := strings.Index(caret, "^"); i < 0 || i >= len(src) || src[i] != se.Source[se.Col-1] {
			t.Errorf("caret not under column %d:\n%s\n%s", se.Col, src, caret)
		}
	}
	// A raw escape sequence where TOML refuses it.
	raw := filepath.Join(dir, "raw.toml")
	os.WriteFile(raw, []byte("[servers.a]\ncommand = \"x\"\n\"evil\x1b]0;title\x07\u202ekey\" = 1\n"), 0o600)
	if _, err := Load(raw); !errors.As(err, &se) {
		t.Fatalf("want a syntax error, got %v", err)
	} else {
		check("a raw escape", se.Long(), `\x1b]0;title\a\u202e`)
	}
	// A warning naming an unknown key that TOML's escapes fill with
	// control characters.
	warn := filepath.Join(dir, "warn.toml")
	os.WriteFile(warn, []byte("[servers.a]\ncommand = \"x\"\n\"evil\\u001b[2Jkey\" = 1\n"), 0o600)
	cfg, err := Load(warn)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Diagnostics) == 0 {
		t.Fatal("no warning for the unknown key")
	}
	for _, d := range cfg.Diagnostics {
		check("a warning", d.Long(), `[2Jkey`)
	}
}
