package registry

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// envRef matches a ${env:VAR} reference. VAR follows the shell's rule for
// variable names.
// It is compiled on first use: most mcptray processes (the demo server, a
// CLI call) never need it, and every process start counts.
var envRefRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}`)
})

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

// ReplaceEnvRefs replaces every ${env:VAR} in s with repl(VAR). Export uses it
// to turn references into each AI client's own syntax.
func ReplaceEnvRefs(s string, repl func(name string) string) string {
	return envRefRE().ReplaceAllStringFunc(s, func(m string) string {
		return repl(envRefRE().FindStringSubmatch(m)[1])
	})
}

// HasEnvRef reports whether s holds a ${env:VAR} reference.
func HasEnvRef(s string) bool { return envRefRE().MatchString(s) }

// LookupFunc looks up an environment variable, like [os.LookupEnv].
type LookupFunc func(name string) (string, bool)

// Expand returns a copy of s with every ${env:VAR} resolved through lookup
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
		v = envRefRE().ReplaceAllStringFunc(v, func(m string) string {
			name := envRefRE().FindStringSubmatch(m)[1]
			val, ok := lookup(name)
			if !ok && firstErr == nil {
				firstErr = &UnsetVarError{Server: s.Name, Field: field, Var: name}
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
