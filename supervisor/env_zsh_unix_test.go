//go:build unix

package supervisor

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoginShellEnvZsh reads the environment of zsh, the login shell of
// every Mac since Catalina: PATH as .zprofile sets it (where Homebrew's
// `brew shellenv` goes), variables from .zshrc (an interactive shell reads
// it), a banner on stdout ignored, and a value with a newline intact.
func TestLoginShellEnvZsh(t *testing.T) {
	zsh, err := exec.LookPath("zsh")
	if err != nil {
		t.Skip("zsh is not installed (make test installs it)")
	}
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, ".zprofile"), []byte(`export PATH="/opt/homebrew/bin:/opt/homebrew/sbin:$PATH"
echo "Last login: from the profile"
`), 0o600)
	os.WriteFile(filepath.Join(home, ".zshrc"), []byte(`export FROM_ZSHRC=yes
export MULTI=$'one\ntwo'
print -P "%F{green}welcome%f"
`), 0o600)
	t.Setenv("SHELL", zsh)
	t.Setenv("HOME", home)
	t.Setenv("ZDOTDIR", home) // where zsh reads its dot files (default: HOME)
	env, err := loginShellEnv(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if p := envValue(env, "PATH"); !strings.HasPrefix(p, "/opt/homebrew/bin:/opt/homebrew/sbin:") {
		t.Errorf("PATH %q does not start with .zprofile's", p)
	}
	if envValue(env, "FROM_ZSHRC") != "yes" {
		t.Errorf(".zshrc's variable missing")
	}
	if v := envValue(env, "MULTI"); v != "one\ntwo" {
		t.Errorf("MULTI = %q", v)
	}
	for _, kv := range env {
		if strings.Contains(kv, "welcome") || strings.Contains(kv, "Last login") {
			t.Errorf("banner in the environment: %q", kv)
		}
	}
}
