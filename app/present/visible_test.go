package present

import (
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
