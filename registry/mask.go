package registry

import (
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"mcptray/internal/lazyre"
)

// Masked is what a hidden secret shows as wherever a person reads it (a
// diff, `config list`, a log line). It is never written where a value is
// used: output meant to be pasted or run carries a placeholder instead.
const Masked = "••••••"

// Hidden stands for a secret in output meant to be pasted or run (an
// exported snippet or add command) when secrets are not revealed: clearly
// not a value. It is not a secret itself, so it is never masked.
const Hidden = "<hidden>"

// authSchemes are the Authorization schemes kept visible when masking.
var authSchemes = []string{"bearer", "basic", "token"}

// MaskSecret hides a literal secret (an env or header value) but keeps
// ${env:VAR} references visible: "Bearer ${env:TOKEN}" stays, "Bearer
// abc123" becomes "Bearer ••••••", anything else with a literal part becomes
// "••••••".
func MaskSecret(v string) string {
	if v == "" {
		return v
	}
	if HasEnvRef(v) || HasSecretRef(v) {
		rest := withoutRefs(v, "")
		if strings.TrimSpace(trimScheme(strings.TrimSpace(rest))) == "" {
			return v
		}
	}
	if scheme, _, ok := strings.Cut(v, " "); ok && slices.Contains(authSchemes, strings.ToLower(scheme)) {
		return scheme + " " + Masked
	}
	return Masked
}

// trimScheme removes a leading "Bearer " (or another auth scheme and its
// space), or a scheme alone.
func trimScheme(s string) string {
	for _, sc := range authSchemes {
		if len(s) >= len(sc) && strings.EqualFold(s[:len(sc)], sc) && (len(s) == len(sc) || s[len(sc)] == ' ') {
			return s[len(sc):]
		}
	}
	return s
}

// secretParam is a URL query parameter (or a client's field) whose value
// is a credential.
var secretParam = lazyre.New(`(?i)token|secret|key|passw|pwd|auth|credential|signature|^sig$|session|cookie|bearer|^code$|pat$`)

// SecretName reports whether a query parameter or field name holds a
// credential (api_key, token, password, ...).
func SecretName(name string) bool { return secretParam().MatchString(name) }

// notSecretFlag are flag names that match [SecretName] but name where a
// secret is, not the secret: --token-file PATH, --auth-url URL,
// --api-key-env VAR.
var notSecretFlag = lazyre.New(`(?i)(file|path|dir|url|uri|env|var|header)$|^no-`)

// SecretArg reports whether args[i] holds a secret given on the command
// line: the value of --NAME=VALUE where NAME is a secret's name
// (--token=abc, --api-key=abc), or the word after such a flag
// (--api-key abc). prefix is the part shown as is ("--token=", or "" for
// the word after a flag); value is the secret. A value that is only
// references is no secret.
func SecretArg(args []string, i int) (prefix, value string, ok bool) {
	a := args[i]
	secretFlag := func(flag string) bool {
		name := strings.TrimLeft(flag, "-")
		return name != "" && len(name) < len(flag) && SecretName(name) && !notSecretFlag().MatchString(name)
	}
	if flag, v, has := strings.Cut(a, "="); has && strings.HasPrefix(flag, "-") {
		if secretFlag(flag) && v != "" && !onlyRefs(v) {
			return flag + "=", v, true
		}
		return "", "", false
	}
	if i == 0 || strings.HasPrefix(a, "-") || a == "" || onlyRefs(a) {
		return "", "", false
	}
	if p := args[i-1]; strings.HasPrefix(p, "-") && !strings.Contains(p, "=") && secretFlag(p) {
		return "", a, true
	}
	return "", "", false
}

// localEndpoint is a server's address on mcptray's own local endpoint, the
// form gateway.URL makes: http://127.0.0.1:PORT/mcp/NAME/KEY, where KEY is
// the per-install credential (at least 32 characters of base64url).
var localEndpoint = lazyre.New(`^http://(?:127\.0\.0\.1|localhost|\[::1\]):[0-9]+/mcp/([^/?#]+)/([A-Za-z0-9_-]{32,})/?(?:[?#].*)?$`)

// LocalEndpoint reports whether raw is a server's URL on mcptray's local
// endpoint, and which server and key it holds.
func LocalEndpoint(raw string) (name, key string, ok bool) {
	if !strings.HasPrefix(raw, "http://") {
		return "", "", false // the pattern is compiled only for a URL it may match
	}
	m := localEndpoint().FindStringSubmatch(raw)
	if m == nil {
		return "", "", false
	}
	name, err := url.PathUnescape(m[1])
	if err != nil {
		return "", "", false
	}
	return name, m[2], true
}

// URLSecrets are the credentials in a URL: the userinfo password (or a user
// alone, which is a token in URLs like https://TOKEN@host), the values of
// query parameters whose names are secret, and the key of a URL on
// mcptray's local endpoint. References are not secrets.
func URLSecrets(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	var out []string
	if _, key, ok := LocalEndpoint(raw); ok {
		out = append(out, key)
	}
	add := func(v string) {
		if v != "" && !onlyRefs(v) {
			out = append(out, v)
		}
	}
	if u.User != nil {
		if p, ok := u.User.Password(); ok {
			add(p)
		} else {
			add(u.User.Username())
		}
	}
	for _, part := range strings.Split(u.RawQuery, "&") {
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			continue
		}
		if name, err := url.QueryUnescape(k); err == nil && SecretName(name) {
			add(v)
			if dv, err := url.QueryUnescape(v); err == nil && dv != v {
				add(dv)
			}
		}
	}
	return out
}

func onlyRefs(v string) bool {
	return (HasEnvRef(v) || HasSecretRef(v)) && withoutRefs(v, "") == ""
}

// withoutRefs replaces the ${env:} and ${keyring:} references in v, which
// are not secrets themselves, with repl.
func withoutRefs(v, repl string) string {
	v = ReplaceEnvRefs(v, func(string) string { return repl })
	return ReplaceSecretRefs(v, func(string) string { return repl })
}

// UnparsableURL stands for a URL that does not parse, in what is shown.
const UnparsableURL = "(a URL that does not parse)"

// MaskURL hides the credentials in a URL (see [URLSecrets]) and leaves the
// rest readable.
func MaskURL(raw string) string {
	if _, key, ok := LocalEndpoint(raw); ok {
		raw = strings.Replace(raw, "/"+key, "/"+Masked, 1)
	}
	u, err := url.Parse(raw)
	if err != nil && strings.Contains(raw, "://") {
		// What it holds cannot be told apart: show none of it.
		return UnparsableURL
	}
	if err != nil || (u.User == nil && u.RawQuery == "") {
		return raw // not a URL (a command's argument), or nothing to hide
	}
	out := raw
	if u.User != nil {
		ui := u.User.String()
		if p, ok := u.User.Password(); ok && !onlyRefs(p) {
			out = strings.Replace(out, ui+"@", u.User.Username()+":"+Masked+"@", 1)
		} else if !ok && !onlyRefs(u.User.Username()) {
			out = strings.Replace(out, ui+"@", Masked+"@", 1)
		}
	}
	if i := strings.IndexByte(out, '?'); i >= 0 {
		q, frag, hasFrag := strings.Cut(out[i+1:], "#")
		parts := strings.Split(q, "&")
		for j, part := range parts {
			k, v, ok := strings.Cut(part, "=")
			if !ok || v == "" || onlyRefs(v) {
				continue
			}
			if name, err := url.QueryUnescape(k); err == nil && SecretName(name) {
				parts[j] = k + "=" + Masked
			}
		}
		out = out[:i+1] + strings.Join(parts, "&")
		if hasFrag {
			out += "#" + frag
		}
	}
	return out
}

// Secrets are the literal secret values of s: env and header values (all of
// them: mcptray cannot tell a token from a setting) and the credentials in
// its URL, with ${env:VAR} references taken out (they are not secrets). An
// mcp-remote bridge's --header arguments count as header values.
func (s *Server) Secrets() []string {
	var out []string
	add := func(v string) {
		if v == "" {
			return
		}
		// A value mixing text and references: the literal parts are the
		// secret ("Bearer abc-${env:X}" hides "abc-").
		for _, part := range strings.Split(withoutRefs(v, "\x00"), "\x00") {
			part = strings.TrimSpace(trimScheme(strings.TrimSpace(part)))
			if part != "" && part != Hidden {
				out = append(out, part)
			}
		}
	}
	for _, k := range sortedKeys(s.Env) {
		add(s.Env[k])
	}
	for _, k := range sortedKeys(s.Headers) {
		add(s.Headers[k])
	}
	out = append(out, URLSecrets(s.URL)...)
	for i, a := range s.Args {
		if i > 0 && s.Args[i-1] == "--header" {
			if _, v, ok := strings.Cut(a, ":"); ok {
				add(strings.TrimSpace(v))
			}
		}
		if strings.HasPrefix(a, "http://") || strings.HasPrefix(a, "https://") {
			out = append(out, URLSecrets(a)...)
		}
		if _, v, ok := SecretArg(s.Args, i); ok {
			add(v)
		}
	}
	return out
}

// MaskSecrets replaces every secret in text with [Masked], also where it is
// written with JSON or TOML escapes. Longer secrets go first, so one that
// holds another is masked whole. A secret shorter than 4 characters is
// masked only where it stands quoted, so "ab" does not garble every word
// that holds it.
func MaskSecrets(text string, secrets []string) string {
	secrets = slices.Clone(secrets)
	sort.SliceStable(secrets, func(i, j int) bool { return len(secrets[i]) > len(secrets[j]) })
	secrets = slices.Compact(secrets)
	for _, s := range secrets {
		if s == "" || s == Masked {
			continue
		}
		forms := []string{s}
		if q := strconv.Quote(s); q[1:len(q)-1] != s {
			forms = append(forms, q[1:len(q)-1])
		}
		if t := TOMLString(s); t[1:len(t)-1] != s {
			forms = append(forms, t[1:len(t)-1])
		}
		for _, f := range forms {
			if len(s) < 4 {
				text = strings.ReplaceAll(text, `"`+f+`"`, `"`+Masked+`"`)
				text = strings.ReplaceAll(text, `'`+f+`'`, `'`+Masked+`'`)
				continue
			}
			text = strings.ReplaceAll(text, f, Masked)
		}
	}
	return text
}

// Redacted returns a copy of s for display: env and header values
// masked with [MaskSecret], credentials in the URL with [MaskURL], the
// values of secret flags in args ([SecretArg]), and any of the server's
// secrets that an argument repeats.
func (s *Server) Redacted() *Server {
	c := s.Clone()
	// The values of env and header keys named like secrets, and URL
	// credentials, wherever an argument repeats them (long enough not to
	// garble other words).
	var long []string
	for _, m := range []map[string]string{s.Env, s.Headers} {
		for k, v := range m {
			if SecretName(k) {
				for _, v := range (&Server{Env: map[string]string{k: v}}).Secrets() {
					if len(v) >= 8 {
						long = append(long, v)
					}
				}
			}
		}
	}
	long = append(long, URLSecrets(s.URL)...)
	for i, a := range s.Args {
		if prefix, v, ok := SecretArg(s.Args, i); ok {
			c.Args[i] = prefix + MaskSecret(v)
		} else {
			c.Args[i] = MaskSecrets(a, long)
		}
	}
	for k, v := range c.Env {
		c.Env[k] = MaskSecret(v)
	}
	for k, v := range c.Headers {
		c.Headers[k] = MaskSecret(v)
	}
	c.URL = MaskURL(c.URL)
	for i, a := range c.Args {
		if i > 0 && s.Args[i-1] == "--header" {
			if k, v, ok := strings.Cut(a, ":"); ok {
				c.Args[i] = k + ": " + MaskSecret(strings.TrimSpace(v))
			}
		} else if strings.HasPrefix(a, "http://") || strings.HasPrefix(a, "https://") {
			c.Args[i] = MaskURL(a)
		}
	}
	return c
}

// ExpandedSecrets are the secret values exp (src expanded: references
// resolved) hands its server: the values of env and header keys named
// like secrets ([SecretName]) or configured from the keyring, the values
// of secret flags ([SecretArg]) and URL credentials. Settings that merely
// came from the environment are left out, so a server's output stays
// readable where it echoes them.
func ExpandedSecrets(src, exp *Server) []string {
	var out []string
	for _, f := range []struct{ src, exp map[string]string }{{src.Env, exp.Env}, {src.Headers, exp.Headers}} {
		for _, k := range sortedKeys(f.exp) {
			if SecretName(k) || HasSecretRef(f.src[k]) {
				out = append(out, (&Server{Env: map[string]string{k: f.exp[k]}}).Secrets()...)
			}
		}
	}
	for i := range exp.Args {
		if _, v, ok := SecretArg(exp.Args, i); ok {
			out = append(out, v)
		}
	}
	return append(out, URLSecrets(exp.URL)...)
}
