//go:build unix

package supervisor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mcptray/registry"
)

// TestStderrMasksSecrets: a server that prints the secrets it was given
// (an env value resolved from the environment, one from the keyring, a
// --api-key argument) has them masked in the stderr mcptray keeps (status's
// stderrTail, the diagnosis, the log file), while a setting it prints stays
// readable.
func TestStderrMasksSecrets(t *testing.T) {
	opts := testOptions(t)
	opts.NoLogFiles = false
	opts.Environ = func(context.Context) []string {
		return append(os.Environ(), "SUP_TEST_TOKEN=tok-from-env-4242", "SUP_TEST_SETTING=visible-setting-1")
	}
	opts.Secret = func(name string) (string, error) { return "key-from-keyring-77", nil }
	srv := childServer(t, "leaky", "print-secrets", "MY_TOKEN=${env:SUP_TEST_TOKEN}", "PLAIN_SETTING=${env:SUP_TEST_SETTING}")
	srv.Args = []string{"--api-key", "${keyring:leaky-key}", "--port", "8080"}
	srv.Restart = registry.RestartNever
	s := New([]*registry.Server{srv}, opts)
	runSup(t, s)
	st := waitState(t, s, "leaky", "stopped after its exit", func(st *ServerState) bool { return st.LastExit != nil && len(st.StderrTail) > 0 })
	var tail []string
	for _, l := range st.StderrTail {
		tail = append(tail, l.Text)
	}
	shown := strings.Join(tail, "\n")
	if st.Diagnosis != nil {
		shown += "\n" + strings.Join(st.Diagnosis.Evidence, "\n")
	}
	logs, _ := filepath.Glob(filepath.Join(opts.LogDir, "*"))
	for _, f := range logs {
		if b, err := os.ReadFile(f); err == nil {
			shown += "\n" + string(b)
		}
	}
	for _, secret := range []string{"tok-from-env-4242", "key-from-keyring-77"} {
		if strings.Contains(shown, secret) {
			t.Errorf("the server's stderr as mcptray keeps it shows %q:\n%s", secret, shown)
		}
	}
	if !strings.Contains(strings.Join(tail, "\n"), "visible-setting-1") || !strings.Contains(strings.Join(tail, "\n"), "8080") || !strings.Contains(strings.Join(tail, "\n"), registry.Masked) {
		t.Errorf("want the secrets masked and the rest readable:\n%s", strings.Join(tail, "\n"))
	}
	if len(logs) == 0 {
		t.Error("no log file written")
	}
}
