package cli

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// testExe is the absolute path of the mcptray the tests' entries name: an
// installed one, in each OS's own form (a Unix path is not absolute on
// Windows; there, where a per-user install puts it).
var testExe = func() string {
	if runtime.GOOS == "windows" {
		return `C:\Users\me\AppData\Local\Programs\mcptray\mcptray.exe`
	}
	return "/usr/local/bin/mcptray"
}()

// exeName is a program's file name on this OS: name.exe on Windows.
func exeName(name string) string {
	if runtime.GOOS == "windows" {
		return name + ".exe"
	}
	return name
}

// viaCmd is how a direct entry's line starts npx: through "cmd /c" on
// Windows, where npx is a batch script that only cmd runs.
var viaCmd = func() string {
	if runtime.GOOS == "windows" {
		return "cmd /c "
	}
	return ""
}()

// directProgram is the program a direct entry runs, seen through the
// "cmd /c" Windows entries start npx with.
func directProgram(e map[string]any) string {
	words := commandOf(e)
	if len(words) > 2 && words[0] == "cmd" && words[1] == "/c" {
		return words[2]
	}
	if len(words) == 0 {
		return ""
	}
	return words[0]
}

// homeEnv is the environment that puts a person's home at dir on every OS:
// HOME for Unix, and on Windows the variables the code reads there instead
// (os.UserHomeDir reads USERPROFILE, os.UserConfigDir APPDATA, the runtime
// folder LOCALAPPDATA), pointed at the folders Windows gives them in a
// profile.
func homeEnv(dir string) []string {
	return []string{
		"HOME=" + dir,
		"USERPROFILE=" + dir,
		"APPDATA=" + filepath.Join(dir, "AppData", "Roaming"),
		"LOCALAPPDATA=" + filepath.Join(dir, "AppData", "Local"),
	}
}

// setHome puts this process's home at dir (see homeEnv) for t.
func setHome(t *testing.T, dir string) {
	t.Helper()
	for _, kv := range homeEnv(dir) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}

// userConfigDir is where os.UserConfigDir puts the config folders of a
// home made by homeEnv with $XDG_CONFIG_HOME unset: ~/.config on Linux,
// %APPDATA% on Windows, ~/Library/Application Support on macOS.
func userConfigDir(home string) string {
	switch runtime.GOOS {
	case "windows":
		return filepath.Join(home, "AppData", "Roaming")
	case "darwin":
		return filepath.Join(home, "Library", "Application Support")
	}
	return filepath.Join(home, ".config")
}
