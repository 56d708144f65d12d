package app

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestVisible(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                  "plain",
		"tab\there":              "tab\there",
		"\x1b]52;c;ZXZpbA==\x07": `\x1b]52;c;ZXZpbA==\x07`,
		"\x1b[2Jcleared":         `\x1b[2Jcleared`,
		"two\nlines\r\n":         "two\nlines\\r\n",
		"del\x7f nul\x00":        `del\x7f nul\x00`,
		"c1 \u009b31m":           `c1 \u009b31m`,
		"bad \x9b byte":          `bad \x9b byte`,
		"bidi \u202eevil\u202c":  `bidi \u202eevil\u202c`,
		"Grüße, 日本語, emoji 👨‍👩‍👧, ﬁ": "Grüße, 日本語, emoji 👨‍👩‍👧, ﬁ",
	} {
		if got := Visible(in); got != want {
			t.Errorf("Visible(%q) = %q, want %q", in, got, want)
		}
	}
	if got := VisibleLine("a\tb\nc\x1b"); got != "a\tb\\nc\\x1b" {
		t.Errorf("VisibleLine = %q", got)
	}
	if got := VisibleCell("a\tb\nc\x1b"); got != `a b\nc\x1b` {
		t.Errorf("VisibleCell = %q", got)
	}
}

// TestJSONOutputEscapesControls: --json keeps a server's text, escaped,
// including what encoding/json alone leaves raw (DEL, C1 such as CSI).
func TestJSONOutputEscapesControls(t *testing.T) {
	in := "esc\x1b[2J del\x7f csi\u009b31m é 日本"
	var b bytes.Buffer
	writeJSON(&b, map[string]string{"s": in})
	out := b.String()
	if raw(out) || bytes.ContainsAny(b.Bytes(), "\x7f") {
		t.Errorf("raw controls in %q", out)
	}
	var back map[string]string
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || back["s"] != in {
		t.Errorf("round trip: %q, %v", back["s"], err)
	}
}

// raw reports the control bytes of a terminal escape in output.
func raw(out string) bool { return strings.ContainsAny(out, "\x1b\x07\u009b") }
