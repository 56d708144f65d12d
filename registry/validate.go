package registry

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Validate reports why s cannot run, as a *ServerError naming the field, or
// nil. It is the one set of rules for a server, wherever it comes from: the
// config file (Load), the GUI's form, an import from a client's file.
func (s *Server) Validate() error {
	bad := func(field, format string, args ...any) error {
		return &ServerError{Server: s.Name, Field: field, Message: fmt.Sprintf(format, args...)}
	}
	if !ValidName(s.Name) {
		return bad("", "the name must be 1-64 letters, digits, '-' or '_'")
	}
	switch {
	case s.Command != "" && s.URL != "":
		return bad("", "set either command or url, not both")
	case s.Command == "" && s.URL == "":
		return bad("", "set command (a local stdio server) or url (a remote server)")
	case s.Command != "" && strings.TrimSpace(s.Command) == "":
		return bad("command", "must not be empty")
	case s.URL != "":
		if err := checkURL(s.URL); err != nil {
			return bad("url", "%v", err)
		}
	}
	switch s.TransportName {
	case "", TransportHTTP, TransportSSE:
		if s.Command != "" && s.TransportName != "" {
			return bad("transport", "%q applies to a url; a command always runs over stdio", s.TransportName)
		}
	case TransportStdio:
		if s.URL != "" {
			return bad("transport", `"stdio" needs a command, not a url`)
		}
	default:
		return bad("transport", `must be "http" (Streamable HTTP) or "sse" (deprecated HTTP+SSE), not %q`, s.TransportName)
	}
	switch s.Restart {
	case "", RestartOnFailure, RestartAlways, RestartNever:
	default:
		return bad("restart", `must be "on-failure", "always" or "never", not %q`, s.Restart)
	}
	switch s.Start {
	case "", StartAuto, StartLazy, StartManual:
	default:
		return bad("start", `must be "auto" (with mcptray), "lazy" (with its first client) or "manual" (when you start it), not %q`, s.Start)
	}
	if s.IdleStop < 0 {
		return bad("idle_stop", "must not be negative (0 means never)")
	}
	for _, f := range []struct {
		field string
		m     map[string]string
	}{{"env", s.Env}, {"headers", s.Headers}} {
		for k := range f.m {
			if k == "" {
				return bad(f.field, "has an empty name")
			}
		}
	}
	for k := range s.Env {
		if strings.ContainsAny(k, "=\x00") {
			return bad("env."+k, "a variable name cannot hold '=' or NUL")
		}
	}
	for k := range s.Headers {
		if strings.ContainsAny(k, ": \t\r\n") {
			return bad("headers."+k, "a header name cannot hold ':', spaces or line breaks")
		}
	}
	return nil
}

func checkURL(raw string) error {
	probe := ReplaceEnvRefs(raw, func(string) string { return "x" })
	u, err := url.Parse(probe)
	if err != nil {
		return fmt.Errorf("not a valid URL: %v", errors.Unwrap(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("must start with http:// or https://, got %q", raw)
	}
	if u.Host == "" {
		return fmt.Errorf("has no host: %q", raw)
	}
	return nil
}
