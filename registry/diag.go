package registry

import (
	"fmt"
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

// String formats the diagnostic the way compilers do: FILE:LINE:COL: message.
func (d Diagnostic) String() string {
	var b strings.Builder
	b.WriteString(d.File)
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
	b.WriteString(d.Message)
	return b.String()
}

// Long is String followed by the offending line and a caret under the column.
func (d Diagnostic) Long() string {
	s := d.String()
	if d.Source == "" {
		return s
	}
	s += "\n    " + d.Source
	if d.Col > 0 && d.Col <= len(d.Source)+1 {
		pad := strings.Map(func(r rune) rune {
			if r == '\t' {
				return '\t'
			}
			return ' '
		}, d.Source[:d.Col-1])
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
