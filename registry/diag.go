package registry

import (
	"fmt"
	"strconv"
	"strings"
)

// Severity of a [Diagnostic].
type Severity string

const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Diagnostic is one problem found in the config file, with its position.
type Diagnostic struct {
	Severity Severity `json:"severity"`
	File     string   `json:"file"`
	Line     int      `json:"line,omitempty"`   // 1-based; 0 when unknown
	Col      int      `json:"column,omitempty"` // 1-based; 0 when unknown
	Server   string   `json:"server,omitempty"` // the server it concerns, if any
	Field    string   `json:"field,omitempty"`  // the key path, e.g. "servers.github.url"
	Message  string   `json:"message"`
	Source   string   `json:"source,omitempty"` // the offending line, when known
}

// Visible shows s's control characters as escapes (ESC as \x1b, a carriage
// return as \r): text from a file printed on a terminal must not move the
// cursor, recolour the screen or hide what comes before it. Tabs stay.
func Visible(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if !isControl(r) {
			b.WriteRune(r)
			continue
		}
		q := strconv.QuoteRune(r)
		b.WriteString(q[1 : len(q)-1])
	}
	return b.String()
}

// isControl: C0 and C1 controls but the tab, DEL, and the bidirectional
// overrides that reorder what a terminal shows.
func isControl(r rune) bool {
	switch {
	case r == '\t':
		return false
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// String formats the diagnostic the way compilers do: FILE:LINE:COL: message.
// Control characters from the file are shown as escapes ([Visible]).
func (d Diagnostic) String() string {
	var b strings.Builder
	b.WriteString(Visible(d.File))
	if d.Line > 0 {
		fmt.Fprintf(&b, ":%d", d.Line)
		if d.Col > 0 {
			fmt.Fprintf(&b, ":%d", d.Col)
		}
	}
	b.WriteString(": ")
	if d.Severity == SeverityWarning {
		b.WriteString("warning: ")
	}
	b.WriteString(Visible(d.Message))
	return b.String()
}

// Long is String followed by the offending line and a caret under the column.
func (d Diagnostic) Long() string {
	s := d.String()
	if d.Source == "" {
		return s
	}
	s += "\n    " + Visible(d.Source)
	if d.Col > 0 && d.Col <= len(d.Source)+1 {
		pad := strings.Map(func(r rune) rune {
			if r == '\t' {
				return '\t'
			}
			return ' '
		}, Visible(d.Source[:d.Col-1]))
		s += "\n    " + pad + "^"
	}
	return s
}

// SyntaxError is a TOML syntax error: the file could not be parsed at all.
type SyntaxError struct{ Diagnostic }

func (e *SyntaxError) Error() string { return e.Long() }

// ServerError is why a server entry is invalid. It names the field.
type ServerError struct {
	Server  string
	Field   string // the key under [servers.NAME], "" for the entry as a whole
	Message string
}

func (e *ServerError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("servers.%s: %s", e.Server, e.Message)
	}
	return fmt.Sprintf("servers.%s.%s: %s", e.Server, e.Field, e.Message)
}
