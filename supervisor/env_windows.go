//go:build windows

package supervisor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/windows/registry"
)

const pathSeparators = `/\:`

func envKeyEqual(a, b string) bool { return strings.EqualFold(a, b) }

// loginShellEnv is, on Windows, the environment the registry holds now:
// the system's variables (HKLM\SYSTEM\CurrentControlSet\Control\Session
// Manager\Environment), then the user's (HKCU\Environment), REG_EXPAND_SZ
// values expanded, Path the system's followed by the user's (what a new
// logon gets). A GUI app or a logon task inherits the environment of
// whoever started it, as it was when that started: node or uv installed
// since then is on the registry's Path, not on mcptray's.
func loginShellEnv(context.Context) ([]string, error) {
	sys, err := readRegistryEnv(registry.LOCAL_MACHINE, `SYSTEM\CurrentControlSet\Control\Session Manager\Environment`)
	if err != nil {
		return nil, err
	}
	user, err := readRegistryEnv(registry.CURRENT_USER, `Environment`)
	if err != nil {
		return nil, err
	}
	return mergeRegistryEnv(sys, user, registry.ExpandString), nil
}

// regVar is one value of an Environment key.
type regVar struct {
	name, value string
	expand      bool // REG_EXPAND_SZ
}

func readRegistryEnv(root registry.Key, path string) ([]regVar, error) {
	k, err := registry.OpenKey(root, path, registry.QUERY_VALUE|registry.ENUMERATE_SUB_KEYS)
	if err != nil {
		return nil, fmt.Errorf("registry %s: %w", path, err)
	}
	defer k.Close()
	names, err := k.ReadValueNames(-1)
	if err != nil {
		return nil, fmt.Errorf("registry %s: %w", path, err)
	}
	var vars []regVar
	for _, n := range names {
		v, typ, err := k.GetStringValue(n)
		if err != nil {
			continue // not a string (REG_DWORD …): not an environment variable
		}
		vars = append(vars, regVar{name: n, value: v, expand: typ == registry.EXPAND_SZ})
	}
	return vars, nil
}

// mergeRegistryEnv builds the environment from the system's and the user's
// variables as Windows does at logon: a user variable overrides a system one
// of the same name (names are case-insensitive), except Path, which is the
// system's followed by the user's. expand expands %VAR% references.
func mergeRegistryEnv(sys, user []regVar, expand func(string) (string, error)) []string {
	var env []string
	var paths []string
	val := func(v regVar) string {
		if !v.expand {
			return v.value
		}
		if x, err := expand(v.value); err == nil {
			return x
		}
		return v.value
	}
	for _, list := range [][]regVar{sys, user} {
		for _, v := range list {
			if strings.EqualFold(v.name, "Path") {
				if p := val(v); p != "" {
					paths = append(paths, p)
				}
				continue
			}
			env = setEnv(env, v.name, val(v))
		}
	}
	if len(paths) > 0 {
		env = setEnv(env, "PATH", strings.Join(paths, ";"))
	}
	return env
}

func wellKnownDirs(home string, getenv func(string) string) []string {
	var dirs []string
	if appData := getenv("APPDATA"); appData != "" {
		dirs = append(dirs, filepath.Join(appData, "npm"))
	}
	if pf := getenv("ProgramFiles"); pf != "" {
		dirs = append(dirs, filepath.Join(pf, "nodejs"))
	}
	if home != "" {
		dirs = append(dirs,
			filepath.Join(home, ".local", "bin"),
			filepath.Join(home, ".volta", "bin"),
			filepath.Join(home, ".cargo", "bin"),
			filepath.Join(home, "go", "bin"),
		)
	}
	if b := getenv("NVM_SYMLINK"); b != "" {
		dirs = append(dirs, b)
	}
	if p := getenv("FNM_MULTISHELL_PATH"); p != "" {
		dirs = append(dirs, p)
	}
	return dirs
}

// checkExecutable tries p as written and then with each PATHEXT extension,
// as cmd.exe does ("npx" is npx.cmd).
func checkExecutable(p string, env []string) (string, error) {
	exts := []string{""}
	pathext := envValue(env, "PATHEXT")
	if pathext == "" {
		pathext = ".COM;.EXE;.BAT;.CMD"
	}
	if filepath.Ext(p) == "" {
		exts = exts[:0]
	}
	for _, e := range strings.Split(pathext, ";") {
		if e != "" {
			exts = append(exts, strings.ToLower(e))
		}
	}
	for _, e := range exts {
		st, err := os.Stat(p + e)
		if err == nil && !st.IsDir() {
			abs, err := filepath.Abs(p + e)
			if err != nil {
				abs = p + e
			}
			return abs, nil
		}
	}
	return p, ErrCommandNotFound
}
