package registry

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"mcptray/internal/lazyre"
)

// envRefRE matches a ${env:VAR} reference, or ${env:VAR:-default} (the
// default is used when VAR is unset or empty, as in a POSIX shell; it cannot
// hold '}'). VAR follows the shell's rule for variable names.
// It is compiled on first use: most mcptray processes (the demo server, a
// CLI call) never need it, and every process start counts.
var envRefRE = lazyre.New(`\$\{env:([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?\}`)

// EnvRef is one ${env:VAR} or ${env:VAR:-default} reference.
type EnvRef struct {
	Name string
	// Default is the text after ":-"; HasDefault says whether there was one
	// (an empty default is still a default).
	Default    string
	HasDefault bool
}

// String is the reference as written in servers.toml.
func (r EnvRef) String() string {
	if r.HasDefault {
		return "${env:" + r.Name + ":-" + r.Default + "}"
	}
	return "${env:" + r.Name + "}"
}

// Resolve is the reference's value through lookup: the default when the
// variable is unset or empty and there is one; ok is false when the
// variable is unset and there is no default.
func (r EnvRef) Resolve(lookup LookupFunc) (val string, ok bool) {
	val, ok = lookup(r.Name)
	if r.HasDefault && val == "" {
		return r.Default, true
	}
	return val, ok
}

func envRefOf(m []string) EnvRef {
	r := EnvRef{Name: m[1]}
	if m[2] != "" {
		r.Default, r.HasDefault = m[2][2:], true
	}
	return r
}

// UnsetVarError reports a ${env:VAR} reference to a variable that is not set
// in mcptray's environment. It is an error for that server only.
type UnsetVarError struct {
	Server string
	Field  string // e.g. "env.GITHUB_TOKEN", "args[2]", "url", "headers.Authorization"
	Var    string
}

func (e *UnsetVarError) Error() string {
	return fmt.Sprintf("servers.%s: %s refers to ${env:%s}, but %s is not set in mcptray's environment", e.Server, e.Field, e.Var, e.Var)
}

// EnvRefs returns the names of the variables s refers to with ${env:VAR}, in
// order of appearance.
func EnvRefs(s string) []string {
	var names []string
	for _, m := range envRefRE().FindAllStringSubmatch(s, -1) {
		names = append(names, m[1])
	}
	return names
}

// ReplaceEnvRefs replaces every ${env:VAR} (with or without a default) in s
// with repl(VAR).
func ReplaceEnvRefs(s string, repl func(name string) string) string {
	return ReplaceEnvRefsFunc(s, func(r EnvRef) string { return repl(r.Name) })
}

// ReplaceEnvRefsFunc replaces every reference in s with repl(ref). Export
// uses it to turn references into each AI client's own syntax.
func ReplaceEnvRefsFunc(s string, repl func(EnvRef) string) string {
	if !strings.Contains(s, "${env:") {
		return s // the pattern is compiled only for a text that may hold one
	}
	return envRefRE().ReplaceAllStringFunc(s, func(m string) string {
		return repl(envRefOf(envRefRE().FindStringSubmatch(m)))
	})
}

// HasEnvRef reports whether s holds a ${env:VAR} reference.
func HasEnvRef(s string) bool { return strings.Contains(s, "${env:") && envRefRE().MatchString(s) }

// IsEnvRef reports whether s is one reference and nothing else, and which.
func IsEnvRef(s string) (EnvRef, bool) {
	if !strings.HasPrefix(s, "${env:") {
		return EnvRef{}, false
	}
	m := envRefRE().FindStringSubmatch(s)
	if m == nil || m[0] != s {
		return EnvRef{}, false
	}
	return envRefOf(m), true
}

// LookupFunc looks up an environment variable, like [os.LookupEnv].
type LookupFunc func(name string) (string, bool)

// Expand returns a copy of s with every ${env:VAR} resolved through lookup
// (${env:VAR:-default} gives default when VAR is unset or empty)
// (nil means os.LookupEnv) in env values, args, url and headers, and a
// leading ~ expanded to the home folder in command, args and cwd. A reference
// to an unset variable is an *UnsetVarError naming it: never a silent empty
// string.
func (s *Server) Expand(lookup LookupFunc) (*Server, error) {
	return s.ExpandWith(lookup, nil)
}

// ExpandWith is [Server.Expand] that also resolves ${keyring:NAME}
// references through secret (nil: such a reference is an error saying
// that no secret store is at hand).
func (s *Server) ExpandWith(lookup LookupFunc, secret SecretFunc) (*Server, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	out := s.Clone()
	var firstErr error
	sub := func(field, v string) string {
		v = ReplaceEnvRefsFunc(v, func(r EnvRef) string {
			val, ok := r.Resolve(lookup)
			if !ok && firstErr == nil {
				firstErr = &UnsetVarError{Server: s.Name, Field: field, Var: r.Name}
			}
			return val
		})
		return expandSecretRefs(v, s.Name, field, secret, &firstErr)
	}
	home, _ := os.UserHomeDir()
	out.Command = ExpandHome(out.Command, home)
	out.Cwd = ExpandHome(out.Cwd, home)
	for i, a := range out.Args {
		out.Args[i] = ExpandHome(sub(fmt.Sprintf("args[%d]", i), a), home)
	}
	for _, k := range sortedKeys(out.Env) {
		out.Env[k] = sub("env."+k, out.Env[k])
	}
	out.URL = sub("url", out.URL)
	for _, k := range sortedKeys(out.Headers) {
		out.Headers[k] = sub("headers."+k, out.Headers[k])
	}
	if firstErr != nil {
		return nil, firstErr
	}
	return out, nil
}

// ExpandHome replaces a leading "~" or "~/" in p with home. Other uses of ~
// (like ~user) are left alone.
func ExpandHome(p, home string) string {
	if home == "" {
		return p
	}
	if p == "~" {
		return home
	}
	if strings.HasPrefix(p, "~/") || strings.HasPrefix(p, `~\`) {
		return filepath.Join(home, p[2:])
	}
	return p
}
