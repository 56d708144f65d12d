//go:build unix

package supervisor

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

const pathSeparators = "/"

func envKeyEqual(a, b string) bool { return a == b }

// loginShellEnv runs the user's shell as an interactive login shell and reads
// the environment it prints. Interactive, because many people set PATH in
// .bashrc/.zshrc rather than in the profile. rc files may print banners,
// so the environment is framed by random markers, and NUL-separated so values
// with newlines survive.
func loginShellEnv(ctx context.Context) ([]string, error) {
	shell := os.Getenv("SHELL")
	if shell == "" {
		return nil, errors.New("SHELL is not set")
	}
	var nonce [8]byte
	_, _ = rand.Read(nonce[:])
	tag := hex.EncodeToString(nonce[:])
	begin, end := "__MCPTRAY_ENV_BEGIN_"+tag+"__", "__MCPTRAY_ENV_END_"+tag+"__"
	// The markers are printed in two halves so an echo of the command line
	// (set -x, a verbose rc file) cannot be mistaken for them.
	script := fmt.Sprintf(`printf '\n%%s%%s\n' '%s' '%s'; env -0; printf '\n%%s%%s\n' '%s' '%s'`,
		begin[:10], begin[10:], end[:10], end[10:])
	cmd := exec.CommandContext(ctx, shell, "-l", "-i", "-c", script)
	cmd.Stdin = nil // /dev/null: an rc file that reads input gets EOF
	cmd.Stderr = nil
	// Setsid: an interactive shell would otherwise take over mcptray's
	// terminal (when there is one) and could stop it with SIGTTIN.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 500 * time.Millisecond
	var out bytes.Buffer
	cmd.Stdout = &out
	runErr := cmd.Run()
	data := out.Bytes()
	i := bytes.Index(data, []byte("\n"+begin+"\n"))
	if i < 0 {
		if runErr != nil {
			return nil, fmt.Errorf("login shell %s: %w", shell, runErr)
		}
		return nil, fmt.Errorf("login shell %s: no environment printed", shell)
	}
	data = data[i+len(begin)+2:]
	j := bytes.Index(data, []byte("\n"+end+"\n"))
	if j < 0 {
		return nil, fmt.Errorf("login shell %s: environment cut short", shell)
	}
	var env []string
	for _, kv := range bytes.Split(data[:j], []byte{0}) {
		if k, _, ok := strings.Cut(string(kv), "="); ok && k != "" {
			env = append(env, string(kv))
		}
	}
	if len(env) == 0 {
		return nil, fmt.Errorf("login shell %s: empty environment", shell)
	}
	return env, nil
}

// wellKnownDirs are the folders where package managers put the commands MCP
// servers are started with (npx, uvx, node, docker, cargo and go tools).
func wellKnownDirs(home string, getenv func(string) string) []string {
	dirs := []string{"/usr/local/bin", "/opt/homebrew/bin", "/usr/bin", "/bin"}
	if home != "" {
		dirs = append(dirs,
			filepath.Join(home, ".local", "bin"),
			filepath.Join(home, ".volta", "bin"),
			filepath.Join(home, ".cargo", "bin"),
			filepath.Join(home, "go", "bin"),
		)
	}
	return append(dirs, activeNodeDirs(home, getenv)...)
}

// activeNodeDirs finds the node version an nvm or fnm user has chosen.
func activeNodeDirs(home string, getenv func(string) string) []string {
	var dirs []string
	if b := getenv("NVM_BIN"); b != "" {
		dirs = append(dirs, b)
	}
	if p := getenv("FNM_MULTISHELL_PATH"); p != "" {
		dirs = append(dirs, filepath.Join(p, "bin"))
	}
	if home == "" {
		return dirs
	}
	nvmDir := getenv("NVM_DIR")
	if nvmDir == "" {
		nvmDir = filepath.Join(home, ".nvm")
	}
	if d := nvmDefault(nvmDir); d != "" {
		dirs = append(dirs, d)
	}
	for _, fnm := range []string{
		filepath.Join(home, ".local", "share", "fnm"),
		filepath.Join(home, "Library", "Application Support", "fnm"),
		filepath.Join(home, ".fnm"),
	} {
		dirs = append(dirs, filepath.Join(fnm, "aliases", "default", "bin"))
	}
	return dirs
}

// nvmDefault resolves nvm's "default" alias (a version prefix such as "20"
// or "v20.11.0") to the newest installed matching version's bin folder.
func nvmDefault(nvmDir string) string {
	alias, err := os.ReadFile(filepath.Join(nvmDir, "alias", "default"))
	if err != nil {
		return ""
	}
	want := strings.TrimPrefix(strings.TrimSpace(string(alias)), "v")
	entries, err := os.ReadDir(filepath.Join(nvmDir, "versions", "node"))
	if err != nil {
		return ""
	}
	var match []string
	for _, e := range entries {
		v := strings.TrimPrefix(e.Name(), "v")
		if v == want || strings.HasPrefix(v, want+".") {
			match = append(match, e.Name())
		}
	}
	if len(match) == 0 {
		return ""
	}
	slices.SortFunc(match, compareVersions)
	return filepath.Join(nvmDir, "versions", "node", match[len(match)-1], "bin")
}

// compareVersions orders "v20.9.0" before "v20.11.0".
func compareVersions(a, b string) int {
	pa := strings.Split(strings.TrimPrefix(a, "v"), ".")
	pb := strings.Split(strings.TrimPrefix(b, "v"), ".")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		var x, y int
		fmt.Sscan(pa[i], &x)
		fmt.Sscan(pb[i], &y)
		if x != y {
			return x - y
		}
	}
	return len(pa) - len(pb)
}

// checkExecutable reports whether p names a file mcptray may execute.
func checkExecutable(p string, _ []string) (string, error) {
	st, err := os.Stat(p)
	if err != nil {
		if errors.Is(err, os.ErrPermission) {
			return p, ErrNotExecutable
		}
		return p, ErrCommandNotFound
	}
	if st.IsDir() || st.Mode().Perm()&0o111 == 0 {
		return p, ErrNotExecutable
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	return p, nil
}
