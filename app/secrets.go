package app

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"mcptray/registry"
	"mcptray/registry/secrets"
)

// LiteralSecrets names the env and header values of servers that hold a
// literal secret ("github env.GITHUB_TOKEN").
func LiteralSecrets(servers []*registry.Server) []string {
	var out []string
	for _, s := range servers {
		for _, k := range slices.Sorted(maps.Keys(s.Env)) {
			if registry.SecretName(k) && isLiteralSecret(s.Env[k]) {
				out = append(out, s.Name+" env."+k)
			}
		}
		for _, k := range slices.Sorted(maps.Keys(s.Headers)) {
			if registry.SecretName(k) && isLiteralSecret(s.Headers[k]) {
				out = append(out, s.Name+" headers."+k)
			}
		}
	}
	return out
}

func isLiteralSecret(v string) bool {
	return len((&registry.Server{Env: map[string]string{"v": v}}).Secrets()) > 0
}

// KeepSecrets moves s's literal secrets (env and header values under
// credential names) into the secret store at once, and returns a copy of s
// that refers to them as ${keyring:SERVER.KEY}, the names stored and where.
// The app's server form uses it.
func KeepSecrets(env *Env, s *registry.Server) (*registry.Server, []string, string, error) {
	st, err := OpenSecrets(env)
	if err != nil {
		return nil, nil, "", err
	}
	c := s.Clone()
	m := MoveToKeyring([]*registry.Server{c}, st)
	if err := m.Persist(); err != nil {
		return nil, nil, "", err
	}
	return c, m.Names(), st.Where(), nil
}

// MovedSecrets are literal secrets taken out of servers, to be stored.
type MovedSecrets struct {
	store  secrets.Store
	values map[string]string // secret name → value
	stored []string
}

// Names are the names the secrets are stored under, sorted.
func (m *MovedSecrets) Names() []string { return slices.Sorted(maps.Keys(m.values)) }

// Len is how many secrets there are.
func (m *MovedSecrets) Len() int { return len(m.values) }

// Where says where they are stored.
func (m *MovedSecrets) Where() string { return m.store.Where() }

// MoveToKeyring replaces each literal env and header value of servers by a
// ${keyring:SERVER.KEY} reference ("Bearer abc" keeps its scheme: "Bearer
// ${keyring:…}") and returns the values to store.
func MoveToKeyring(servers []*registry.Server, st secrets.Store) *MovedSecrets {
	m := &MovedSecrets{store: st, values: map[string]string{}}
	name := func(server, key string) string {
		n := secretNameFor(server + "." + key)
		for i := 2; ; i++ {
			if _, taken := m.values[n]; !taken {
				return n
			}
			n = fmt.Sprintf("%s-%d", secretNameFor(server+"."+key), i)
		}
	}
	for _, s := range servers {
		for _, k := range slices.Sorted(maps.Keys(s.Env)) {
			if v := s.Env[k]; registry.SecretName(k) && isLiteralSecret(v) {
				n := name(s.Name, k)
				m.values[n] = v
				s.Env[k] = "${keyring:" + n + "}"
			}
		}
		for _, k := range slices.Sorted(maps.Keys(s.Headers)) {
			v := s.Headers[k]
			if !registry.SecretName(k) || !isLiteralSecret(v) {
				continue
			}
			n := name(s.Name, k)
			scheme, rest, ok := strings.Cut(v, " ")
			if ok && slices.Contains([]string{"bearer", "basic", "token"}, strings.ToLower(scheme)) && !strings.Contains(rest, " ") {
				m.values[n] = rest
				s.Headers[k] = scheme + " ${keyring:" + n + "}"
			} else {
				m.values[n] = v
				s.Headers[k] = "${keyring:" + n + "}"
			}
		}
	}
	return m
}

// secretNameFor makes a valid secret name of s.
func secretNameFor(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-.", r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

// Persist writes the secrets; on a failure the ones written are removed.
func (m *MovedSecrets) Persist() error {
	for _, n := range m.Names() {
		if err := m.store.Set(secrets.SecretKey(n), m.values[n]); err != nil {
			m.Undo()
			return fmt.Errorf("keep %s in %s: %w (nothing imported)", n, m.store.Where(), err)
		}
		m.stored = append(m.stored, n)
	}
	return nil
}

func (m *MovedSecrets) Undo() {
	for _, n := range m.stored {
		_ = m.store.Delete(secrets.SecretKey(n))
	}
	m.stored = nil
}
