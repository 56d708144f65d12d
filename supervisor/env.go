// Package supervisor is mcptray's engine: one unit per configured server. It
// owns the processes of stdio servers (spawn with the login-shell
// environment, own process group, stderr ring and log file, stop without
// orphans, restart with backoff and crash-loop detection), drives the health
// check of every server through a small Checker interface, keeps one state
// per server, publishes immutable snapshots with a coalescing change signal,
// and takes commands (start, stop, restart, reload, check now).
package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// loginEnvTimeout bounds the login shell: a slow or interactive rc file must
// not hold up the first start.
const loginEnvTimeout = 3 * time.Second

var (
	loginEnvOnce sync.Once
	loginEnv     []string
)

// LoginEnvironment returns the environment servers should start with:
// mcptray's own, completed by what the person's login shell sets (above all
// its PATH). A GUI app (or a service) does not inherit the shell's
// environment, which is why `npx` is "not found" for so many MCP servers.
// It is resolved once per process: later calls return a copy of the first
// result. PATH is also extended by the existing folders where node, uv,
// cargo and go tools usually live, which is all there is when the shell
// cannot be run (no $SHELL, timeout, Windows).
func LoginEnvironment(ctx context.Context) []string {
	loginEnvOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), loginEnvTimeout)
		defer cancel()
		env := os.Environ()
		if shell, err := loginShellEnv(ctx); err == nil && envValue(shell, "PATH") != "" {
			env = mergeLoginEnv(env, shell)
		}
		loginEnv = withWellKnownPath(env)
	})
	return slices.Clone(loginEnv)
}

// ProcessEnvironment is mcptray's own environment with PATH extended by the
// well-known tool folders. Commands run from a terminal (check, up) start
// servers with it: their environment already is the login shell's, and
// running the shell again would only cost time.
func ProcessEnvironment() []string {
	return withWellKnownPath(os.Environ())
}

// mergeLoginEnv completes mcptray's own environment with the login shell's:
// a variable set for mcptray wins (GITHUB_TOKEN=… mcptray up), a variable
// only the shell sets is added, and PATH is the shell's, followed by the
// folders of mcptray's own PATH that the shell does not list (the shell's
// order matters more: it is what the person sees in a terminal).
func mergeLoginEnv(own, shell []string) []string {
	out := slices.Clone(own)
	for _, kv := range shell {
		k, v, _ := strings.Cut(kv, "=")
		if k == "PATH" || envValue(own, k) != "" {
			continue
		}
		// Shell bookkeeping describes the shell process, not ours.
		if k == "_" || k == "SHLVL" || k == "PWD" || k == "OLDPWD" {
			continue
		}
		out = append(out, k+"="+v)
	}
	parts := filepath.SplitList(envValue(shell, "PATH"))
	have := map[string]bool{}
	for _, p := range parts {
		have[filepath.Clean(p)] = true
	}
	for _, p := range filepath.SplitList(envValue(own, "PATH")) {
		if p != "" && !have[filepath.Clean(p)] {
			have[filepath.Clean(p)] = true
			parts = append(parts, p)
		}
	}
	return setEnv(out, "PATH", strings.Join(parts, string(os.PathListSeparator)))
}

// withWellKnownPath appends the existing well-known tool folders missing from
// PATH. They go last so that whatever the shell chose wins.
func withWellKnownPath(env []string) []string {
	home, _ := os.UserHomeDir()
	path := envValue(env, "PATH")
	have := map[string]bool{}
	parts := filepath.SplitList(path)
	for _, p := range parts {
		have[filepath.Clean(p)] = true
	}
	for _, d := range wellKnownDirs(home, func(k string) string { return envValue(env, k) }) {
		if d == "" || have[filepath.Clean(d)] {
			continue
		}
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			continue
		}
		have[filepath.Clean(d)] = true
		parts = append(parts, d)
	}
	return setEnv(env, "PATH", strings.Join(parts, string(os.PathListSeparator)))
}

// envValue returns the last value of key in env ("" when absent). Windows
// variable names are case-insensitive, hence envKeyEqual.
func envValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		k, v, ok := strings.Cut(env[i], "=")
		if ok && envKeyEqual(k, key) {
			return v
		}
	}
	return ""
}

// setEnv returns env with key set to value, replacing every earlier entry.
func setEnv(env []string, key, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !envKeyEqual(k, key) {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+value)
}

// mergeEnv lays the server's own env over base.
func mergeEnv(base []string, own map[string]string) []string {
	out := slices.Clone(base)
	keys := make([]string, 0, len(own))
	for k := range own {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		out = setEnv(out, k, own[k])
	}
	return out
}

// Sentinel errors for [ResolveCommand]; a *CommandError wraps one of them.
var (
	ErrCommandNotFound = errors.New("command not found")
	ErrNotExecutable   = errors.New("not executable")
)

// CommandError says why a server's command cannot be run. It matches
// ErrCommandNotFound or ErrNotExecutable with errors.Is, and also
// fs.ErrNotExist / fs.ErrPermission respectively.
type CommandError struct {
	Command string // as written
	Path    string // the file found, when there is one
	// Searched is the PATH looked through (for a bare command name).
	Searched string
	Err      error
}

func (e *CommandError) Error() string {
	switch {
	case errors.Is(e.Err, ErrNotExecutable) && e.Path != "":
		return fmt.Sprintf("%s: %s is not executable", e.Command, e.Path)
	case e.Searched != "":
		return fmt.Sprintf("%s: not found in PATH (%s)", e.Command, e.Searched)
	default:
		return fmt.Sprintf("%s: %v", e.Command, e.Err)
	}
}

func (e *CommandError) Unwrap() error { return e.Err }

// Is lets callers test with the fs errors they already know.
func (e *CommandError) Is(target error) bool {
	switch target {
	case fs.ErrNotExist:
		return errors.Is(e.Err, ErrCommandNotFound)
	case fs.ErrPermission:
		return errors.Is(e.Err, ErrNotExecutable)
	}
	return false
}

// ResolveCommand finds the file cmd runs, the way a shell with environment
// env would: a name without a path separator is looked up in env's PATH; a
// path (absolute or relative to the working folder) is checked for existence
// and, on Unix, the execute bit. Errors are *CommandError.
func ResolveCommand(cmd string, env []string) (string, error) {
	if cmd == "" {
		return "", &CommandError{Command: cmd, Err: ErrCommandNotFound}
	}
	if strings.ContainsAny(cmd, pathSeparators) {
		p, err := checkExecutable(cmd, env)
		if err != nil {
			return "", &CommandError{Command: cmd, Path: p, Err: err}
		}
		return p, nil
	}
	path := envValue(env, "PATH")
	var denied string
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			// An empty PATH entry means the working folder in a shell; a
			// supervisor must not run whatever file happens to sit there.
			continue
		}
		p, err := checkExecutable(filepath.Join(dir, cmd), env)
		if err == nil {
			return p, nil
		}
		if errors.Is(err, ErrNotExecutable) && denied == "" {
			denied = p
		}
	}
	if denied != "" {
		return "", &CommandError{Command: cmd, Path: denied, Err: ErrNotExecutable}
	}
	return "", &CommandError{Command: cmd, Searched: path, Err: ErrCommandNotFound}
}
