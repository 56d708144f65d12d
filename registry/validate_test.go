package registry

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

// Validate is the one rule set: what it refuses, the loader refuses with the
// same message, and what it accepts loads without a diagnostic.
func TestServerValidate(t *testing.T) {
	tests := []struct {
		name  string
		s     Server
		field string // "" and want "" = valid
		want  string
	}{
		{"stdio", Server{Name: "a", Command: "npx", Env: map[string]string{"K": "v"}}, "", ""},
		{"remote", Server{Name: "a", URL: "https://e.com/${env:P}", TransportName: TransportSSE, Headers: map[string]string{"Authorization": "x"}}, "", ""},
		{"bad name", Server{Name: "a b", Command: "x"}, "", "the name must be 1-64"},
		{"both", Server{Name: "a", Command: "x", URL: "https://e.com"}, "", "not both"},
		{"neither", Server{Name: "a"}, "", "set command"},
		{"blank command", Server{Name: "a", Command: " "}, "command", "must not be empty"},
		{"url", Server{Name: "a", URL: "e.com/mcp"}, "url", "must start with http://"},
		{"transport", Server{Name: "a", URL: "https://e.com", TransportName: "ws"}, "transport", `not "ws"`},
		{"transport on command", Server{Name: "a", Command: "x", TransportName: TransportSSE}, "transport", "always runs over stdio"},
		{"restart", Server{Name: "a", Command: "x", Restart: "later"}, "restart", `not "later"`},
		{"lazy", Server{Name: "a", Command: "x", Start: StartLazy, IdleStop: time.Minute, Unshared: true}, "", ""},
		{"start", Server{Name: "a", Command: "x", Start: "sometimes"}, "start", `"manual" (when you start it), not "sometimes"`},
		{"idle_stop", Server{Name: "a", Command: "x", IdleStop: -time.Minute}, "idle_stop", "must not be negative"},
		{"env name", Server{Name: "a", Command: "x", Env: map[string]string{"A=B": "1"}}, "env.A=B", "cannot hold '='"},
		{"header name", Server{Name: "a", URL: "https://e.com", Headers: map[string]string{"Authorization: Bearer": "x"}}, "headers.Authorization: Bearer", "header name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.s
			s.Autostart = true
			err := s.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate = %v", err)
				}
			} else {
				var se *ServerError
				if !errors.As(err, &se) || se.Field != tt.field || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("Validate = %v (field %q), want field %q and %q", err, fieldOf(err), tt.field, tt.want)
				}
			}
			// The loader says the same of the same entry.
			var b bytes.Buffer
			EncodeServer(&b, &s)
			cfg, perr := Parse("servers.toml", b.Bytes())
			if perr != nil {
				t.Fatal(perr)
			}
			if got := cfg.Servers[0].Invalid; errString(got) != errString(err) {
				t.Errorf("loader: %v, Validate: %v", got, err)
			}
		})
	}
}

func fieldOf(err error) string {
	var se *ServerError
	if errors.As(err, &se) {
		return se.Field
	}
	return ""
}

// A diagnostic about env or headers shows its line with the strings masked:
// the line may hold a token.
func TestDiagnosticMasksSecretLines(t *testing.T) {
	cfg := parse(t, "[servers.r]\nurl = \"https://e.com/mcp\"\nheaders = \"Authorization: Bearer sk-live-123\"\n")
	if len(cfg.Diagnostics) != 1 {
		t.Fatalf("diagnostics: %v", cfg.Diagnostics)
	}
	d := cfg.Diagnostics[0]
	if strings.Contains(d.Long(), "sk-live-123") || d.Source != `headers = "`+strings.Repeat("*", 33)+`"` || d.Line != 3 {
		t.Errorf("diagnostic shows the secret: %s", d.Long())
	}
}
