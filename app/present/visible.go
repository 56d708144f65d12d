package present

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Visible renders text that came from a server (its name, tools, stderr,
// what it wrote on stdout) for a terminal: control characters are shown as
// escapes (ESC as \x1b, a carriage return as \r) instead of acting, so a
// server can neither clear the screen, retitle the window, nor write the
// clipboard (OSC 52) of the person reading the output. Printable text, in
// any script, is kept as is, and so are tabs and newlines. JSON output keeps
// the text as it was: the encoder escapes it. There is one rule, in three
// shapes: Visible for text, [VisibleLine] for what must stay on one line,
// [VisibleCell] for a table's cell.
func Visible(s string) string { return visible(s, modeText) }

// VisibleLine is Visible for one line of output: a newline shows as \n.
func VisibleLine(s string) string { return visible(s, modeLine) }

// VisibleCell is VisibleLine for one cell of a table: a tab, which would
// move the columns, is shown as a space.
func VisibleCell(s string) string { return visible(s, modeCell) }

type visibleMode int

const (
	modeText visibleMode = iota
	modeLine
	modeCell
)

func visible(s string, mode visibleMode) string {
	if !needsEscape(s, mode) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			// Not UTF-8: a lone byte such as 0x9b is CSI to some terminals.
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\t' && mode == modeCell:
			b.WriteByte(' ')
		case r == '\t':
			b.WriteByte('\t')
		case r == '\n' && mode == modeText:
			b.WriteByte('\n')
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case isHiddenControl(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func needsEscape(s string, mode visibleMode) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < 0x20 && !(c == '\t' && mode != modeCell || c == '\n' && mode == modeText) || c == 0x7f {
			return true
		}
		if c < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || isHiddenControl(r) {
			return true
		}
		i += size
	}
	return false
}

// isHiddenControl reports the non-ASCII runes that act instead of showing:
// the C1 controls (U+009B is CSI), the line and paragraph separators, and
// the bidirectional overrides and isolates that reorder what is shown.
func isHiddenControl(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x2028, r == 0x2029:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// EscapeJSONControls escapes in encoded JSON what encoding/json leaves raw
// but a terminal may obey: DEL and the C1 controls (U+0080 to U+009F, in
// UTF-8 0xC2 0x80 to 0xC2 0x9F). Both occur only inside strings, where
// \u00XX means the same character.
func EscapeJSONControls(data []byte) []byte {
	if !bytes.ContainsFunc(data, func(r rune) bool { return r == 0x7f || r >= 0x80 && r <= 0x9f }) {
		return data
	}
	var b bytes.Buffer
	b.Grow(len(data) + 16)
	for i := 0; i < len(data); i++ {
		switch {
		case data[i] == 0x7f:
			b.WriteString(`\u007f`)
		case data[i] == 0xc2 && i+1 < len(data) && data[i+1] >= 0x80 && data[i+1] <= 0x9f:
			fmt.Fprintf(&b, `\u%04x`, rune(data[i+1]))
			i++
		default:
			b.WriteByte(data[i])
		}
	}
	return b.Bytes()
}
