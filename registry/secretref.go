package registry

import (
	"errors"
	"fmt"
	"strings"

	"mcptray/internal/lazyre"
)

// keyringRefRE matches a ${keyring:NAME} reference: a secret kept in the OS
// keyring (see mcptray secret set).
var keyringRefRE = lazyre.New(`\$\{keyring:([A-Za-z0-9_.-]+)\}`)

// SecretFunc reads the secret NAME for a ${keyring:NAME} reference; it
// returns an error wrapping [ErrSecretNotFound] when none is stored.
type SecretFunc func(name string) (string, error)

// ErrSecretNotFound means no secret is stored under the name.
var ErrSecretNotFound = errors.New("not stored")

// SecretRefError is a ${keyring:NAME} reference that could not be
// resolved. It is an error for that server only.
type SecretRefError struct {
	Server string
	Field  string
	Name   string
	Err    error // nil: no secret store at hand
}

func (e *SecretRefError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("servers.%s: %s refers to ${keyring:%s}, but no secret store is available here", e.Server, e.Field, e.Name)
	}
	return fmt.Sprintf("servers.%s: %s refers to ${keyring:%s}: %v (store it with `mcptray secret set %s`)", e.Server, e.Field, e.Name, e.Err, e.Name)
}

func (e *SecretRefError) Unwrap() error { return e.Err }

// SecretRefs returns the names of the secrets s refers to with
// ${keyring:NAME}, in order of appearance.
func SecretRefs(s string) []string {
	var names []string
	for _, m := range keyringRefRE().FindAllStringSubmatch(s, -1) {
		names = append(names, m[1])
	}
	return names
}

// HasSecretRef reports whether s holds a ${keyring:NAME} reference.
func HasSecretRef(s string) bool { return keyringRefRE().MatchString(s) }

func expandSecretRefs(v, server, field string, secret SecretFunc, firstErr *error) string {
	if !strings.Contains(v, "${keyring:") || !keyringRefRE().MatchString(v) {
		return v
	}
	return keyringRefRE().ReplaceAllStringFunc(v, func(m string) string {
		name := keyringRefRE().FindStringSubmatch(m)[1]
		if secret == nil {
			if *firstErr == nil {
				*firstErr = &SecretRefError{Server: server, Field: field, Name: name}
			}
			return ""
		}
		val, err := secret(name)
		if err != nil && *firstErr == nil {
			*firstErr = &SecretRefError{Server: server, Field: field, Name: name, Err: err}
		}
		return val
	})
}

// ReplaceSecretRefs replaces every ${keyring:NAME} in s with repl(NAME).
func ReplaceSecretRefs(s string, repl func(name string) string) string {
	return keyringRefRE().ReplaceAllStringFunc(s, func(m string) string {
		return repl(keyringRefRE().FindStringSubmatch(m)[1])
	})
}
