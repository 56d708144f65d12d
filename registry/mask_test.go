package registry

import (
	"strings"
	"testing"
)

func TestExpandDefault(t *testing.T) {
	env := map[string]string{"SET": "v", "EMPTY": ""}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	s := &Server{Name: "d", Command: "srv", Args: []string{"--level=${env:UNSET:-info}", "${env:SET:-x}", "${env:EMPTY:-fallback}", "${env:UNSET:-}"},
		Env: map[string]string{"URL": "${env:UNSET:-http://localhost:8080/a}"}}
	out, err := s.Expand(lookup)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"--level=info", "v", "fallback", ""}
	for i, w := range want {
		if out.Args[i] != w {
			t.Errorf("args[%d] = %q, want %q", i, out.Args[i], w)
		}
	}
	if out.Env["URL"] != "http://localhost:8080/a" {
		t.Errorf("env.URL = %q", out.Env["URL"])
	}
	r, ok := IsEnvRef("${env:A:-b c}")
	if !ok || r.Name != "A" || !r.HasDefault || r.Default != "b c" || r.String() != "${env:A:-b c}" {
		t.Errorf("IsEnvRef = %+v %v", r, ok)
	}
	if _, ok := IsEnvRef("x${env:A}"); ok {
		t.Error("IsEnvRef accepted text around a reference")
	}
	if got := EnvRefs("${env:A:-1}${env:B}"); strings.Join(got, ",") != "A,B" {
		t.Errorf("EnvRefs = %v", got)
	}
}

func TestMaskSecret(t *testing.T) {
	for in, want := range map[string]string{
		"":                    "",
		"abc":                 Masked,
		"${env:T}":            "${env:T}",
		"${env:T:-dflt}":      "${env:T:-dflt}",
		"Bearer ${env:T}":     "Bearer ${env:T}",
		"Bearer abc":          "Bearer " + Masked,
		"x-${env:T}-y":        Masked,
		"basic dXNlcjpwYXNz":  "basic " + Masked,
		"token ${env:T} junk": "token " + Masked,
		"tokenabc":            Masked,
	} {
		if got := MaskSecret(in); got != want {
			t.Errorf("MaskSecret(%q) = %q, want %q", in, got, want)
		}
	}
}

const testEndpointKey = "Vd3q9Xk2LmP0aZ7yR4tB8nC1eF6gH5jK_wQ-sU2iO3p"

func TestLocalEndpoint(t *testing.T) {
	for _, tt := range []struct {
		in        string
		name, key string
		ok        bool
	}{
		{"http://127.0.0.1:39427/mcp/files/" + testEndpointKey, "files", testEndpointKey, true},
		{"http://localhost:40000/mcp/my%20server/" + testEndpointKey + "/", "my server", testEndpointKey, true},
		{"http://127.0.0.1:39427/mcp/files/tooshort", "", "", false},
		{"https://127.0.0.1:39427/mcp/files/" + testEndpointKey, "", "", false},
		{"http://192.168.1.2:39427/mcp/files/" + testEndpointKey, "", "", false},
		{"http://127.0.0.1:39427/other/files/" + testEndpointKey, "", "", false},
	} {
		name, key, ok := LocalEndpoint(tt.in)
		if name != tt.name || key != tt.key || ok != tt.ok {
			t.Errorf("LocalEndpoint(%q) = %q, %q, %v; want %q, %q, %v", tt.in, name, key, ok, tt.name, tt.key, tt.ok)
		}
	}
	if got := URLSecrets("http://127.0.0.1:39427/mcp/files/" + testEndpointKey); len(got) != 1 || got[0] != testEndpointKey {
		t.Errorf("URLSecrets of a local endpoint URL = %q, want its key", got)
	}
}

func TestMaskURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://example.com/mcp":                          "https://example.com/mcp",
		"https://example.com/mcp?transport=sse":            "https://example.com/mcp?transport=sse",
		"https://example.com/mcp?api_key=sk-123&region=eu": "https://example.com/mcp?api_key=" + Masked + "&region=eu",
		"https://example.com/mcp?token=${env:T}":           "https://example.com/mcp?token=${env:T}",
		"https://user:hunter2@example.com/mcp":             "https://user:" + Masked + "@example.com/mcp",
		"https://ghp_abc@example.com/mcp":                  "https://" + Masked + "@example.com/mcp",
		"https://example.com/mcp?key=a#frag":               "https://example.com/mcp?key=" + Masked + "#frag",
		// mcptray's own local endpoint: the key is the last path segment.
		"http://127.0.0.1:39427/mcp/files/" + testEndpointKey: "http://127.0.0.1:39427/mcp/files/" + Masked,
		"http://127.0.0.1:39427/mcp/files/short":              "http://127.0.0.1:39427/mcp/files/short",
		"https://example.com/mcp/files/" + testEndpointKey:    "https://example.com/mcp/files/" + testEndpointKey,
		// A URL that does not parse may hold anything; an argument that is
		// no URL is shown as it is.
		"https://user:pa%zz@example.com/mcp": UnparsableURL,
		"--level=%zz":                        "--level=%zz",
	} {
		if got := MaskURL(in); got != want {
			t.Errorf("MaskURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSecretsAndMaskSecrets(t *testing.T) {
	s := &Server{Name: "a", URL: "https://u:pw-9@example.com/mcp?apiKey=k%2F1",
		Env:     map[string]string{"A": "sk-live-1", "B": "${env:B}", "C": "pre-${env:X}", "D": `q"uote`},
		Headers: map[string]string{"Authorization": "Bearer tok-42", "X-T": "ab"}}
	got := s.Secrets()
	for _, want := range []string{"sk-live-1", "pre-", `q"uote`, "tok-42", "ab", "pw-9", "k%2F1", "k/1"} {
		found := false
		for _, g := range got {
			found = found || g == want
		}
		if !found {
			t.Errorf("Secrets() = %q lacks %q", got, want)
		}
	}
	text := `"A": "sk-live-1", "D": "q\"uote", Authorization = "Bearer tok-42", "X-T": "ab", about: https://u:pw-9@example.com/mcp?apiKey=k%2F1`
	m := MaskSecrets(text, got)
	for _, leak := range []string{"sk-live-1", `q\"uote`, "tok-42", `"ab"`, "pw-9", "k%2F1"} {
		if strings.Contains(m, leak) {
			t.Errorf("MaskSecrets left %q in %s", leak, m)
		}
	}
	if !strings.Contains(m, "about") {
		t.Errorf("a short secret garbled other words: %s", m)
	}
	r := s.Redacted()
	if r.Env["A"] != Masked || r.Env["B"] != "${env:B}" || r.Headers["Authorization"] != "Bearer "+Masked || strings.Contains(r.URL, "pw-9") || s.Env["A"] != "sk-live-1" {
		t.Errorf("Redacted = %+v (original %+v)", r, s)
	}
}

// TestSecretArgs: the value after a flag named like a secret is one, in
// --flag=value and --flag value forms; a reference, a flag naming where a
// secret is (a file, a variable) and an ordinary flag are not. Listings
// (Redacted) mask them, and Secrets finds them for diffs and traces.
func TestSecretArgs(t *testing.T) {
	s := &Server{Name: "a", Command: "srv", Args: []string{
		"--token=tok-12345", "--api-key", "sk-live-abcdef", "-k", "plain", "--password", "${env:PW}",
		"--token-file", "/home/me/.token", "--verbose", "--port", "8080", "--access_token=${env:T}",
		"--client-secret", "cs-999999", "--name", "pub", "--flag", "--no-auth", "/data",
	}, Env: map[string]string{"GITHUB_TOKEN": "ghp_repeated123"}}
	s.Args = append(s.Args, "--org", "x-ghp_repeated123-y")
	want := []string{
		"--token=" + Masked, "--api-key", Masked, "-k", "plain", "--password", "${env:PW}",
		"--token-file", "/home/me/.token", "--verbose", "--port", "8080", "--access_token=${env:T}",
		"--client-secret", Masked, "--name", "pub", "--flag", "--no-auth", "/data",
		"--org", "x-" + Masked + "-y",
	}
	got := s.Redacted().Args
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Redacted args\n got %q\nwant %q", got, want)
	}
	secrets := strings.Join(s.Secrets(), " ")
	for _, v := range []string{"tok-12345", "sk-live-abcdef", "cs-999999"} {
		if !strings.Contains(secrets, v) {
			t.Errorf("Secrets() lacks %q: %s", v, secrets)
		}
	}
	for _, v := range []string{"/home/me/.token", "8080", "pub", "/data", "plain"} {
		if strings.Contains(secrets, v) {
			t.Errorf("Secrets() holds %q, which is no secret: %s", v, secrets)
		}
	}
	if s.Args[0] != "--token=tok-12345" {
		t.Error("Redacted changed the server")
	}
}
