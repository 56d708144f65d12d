//go:build windows

package supervisor

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
)

const pathSeparators = `/\:`

func envKeyEqual(a, b string) bool { return strings.EqualFold(a, b) }

// loginShellEnv: Windows programs inherit the user's environment from the
// registry whether or not a console started them, so there is no login shell
// to ask.
func loginShellEnv(context.Context) ([]string, error) {
	return nil, errors.New("no login shell on Windows")
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
