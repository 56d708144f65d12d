// Package handoff lets the desktop build run a command-line command in the
// headless build beside it (mcptray-headless, as every package installs
// it): it starts in a fraction of the desktop build's time and memory (no
// Fyne, no GUI libraries), which counts for every bridge an AI client
// starts and every `mcptray check`.
//
// On Unix it acts in its init function, before Fyne's packages are
// initialised (their init costs more than a small command's whole run):
// Go initialises packages in import-path order among those whose imports
// are ready, and this one imports only the standard library's early
// packages, ready before fyne.io/fyne/v2/lang, github.com/kardianos/service
// and the rest, which wait for text/template. Only the desktop build imports
// it. On Windows the desktop build first attaches to its terminal's
// console (in package main's init), so main calls Run.
package handoff

import (
	"debug/buildinfo"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime/debug"
	"strings"
)

// headlessName is the headless build's file name beside the desktop one, as
// every package installs them.
const headlessName = "mcptray-headless"

// tried says Run has run (it acts once: in init on Unix, from main on
// Windows).
var tried bool

// Run runs a command-line command (anything but the desktop app) in the
// headless build when it sits beside this binary and is of the same
// version: it starts in a fraction of the desktop build's time and memory
// (no Fyne, no GUI libraries), which counts for every bridge an AI client
// starts and every `mcptray check`. Same arguments, environment, streams and
// exit code; on Unix the headless build replaces this process. It returns
// false when the command is to run here: the desktop app, no headless build
// beside this one (a build from source), or one that does not match (then it
// says why, once, on stderr).
//
// It acts once per process: a second call returns false.
func Run(args []string, stderr io.Writer) (code int, handed bool) {
	if tried {
		return 0, false
	}
	tried = true
	if wantsDesktop(args) || os.Getenv("MCPTRAY_NO_HANDOFF") == "1" {
		return 0, false
	}
	self, err := os.Executable()
	if err != nil {
		return 0, false
	}
	dir := self[:strings.LastIndexAny(self, `/\`)+1]
	headless := dir + headlessName + exeSuffix
	if why := mismatch(headless); why != "" {
		if why != "absent" {
			fmt.Fprintf(stderr, "mcptray: not handing this command to %s (%s); running it in the desktop build, which starts slower\n", headless, why)
		}
		return 0, false
	}
	code, err = execHeadless(headless, args)
	if err != nil {
		fmt.Fprintf(stderr, "mcptray: could not run %s (%v); running the command in the desktop build\n", headless, err)
		return 0, false
	}
	return code, true
}

// wantsDesktop says whether args start the desktop app: no command (after
// the global --config), or gui.
func wantsDesktop(args []string) bool {
	for len(args) > 0 && (args[0] == "--config" || args[0] == "-config") {
		args = args[min(2, len(args)):]
	}
	for len(args) > 0 && (strings.HasPrefix(args[0], "--config=") || strings.HasPrefix(args[0], "-config=")) {
		args = args[1:]
	}
	return len(args) == 0 || args[0] == "gui"
}

// mismatch says why the file at path is not the headless build of this
// binary's version ("absent" when there is no file), or "" when it is.
func mismatch(path string) string {
	info, err := buildinfo.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "absent"
	}
	if err != nil {
		return fmt.Sprintf("not a Go program mcptray can read: %v", err)
	}
	own, ok := debug.ReadBuildInfo()
	if !ok {
		return "this binary has no build information"
	}
	if !strings.Contains(","+setting(info, "-tags")+",", ",nogui,") {
		return "it is not the headless build (-tags nogui)"
	}
	if theirs, ours := buildStamp(info), buildStamp(own); theirs != ours {
		return fmt.Sprintf("it is %s, this binary %s", theirs, ours)
	}
	return ""
}

func setting(info *debug.BuildInfo, key string) string {
	for _, s := range info.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}

// buildStamp is what a build says it is: the version and commit stamped
// with -X (make build, make dist), else the toolchain's VCS stamp.
func buildStamp(info *debug.BuildInfo) string {
	var version, commit string
	for _, f := range strings.Fields(setting(info, "-ldflags")) {
		f = strings.Trim(strings.TrimPrefix(f, "-X="), `"'`)
		if v, ok := strings.CutPrefix(f, "mcptray/app.Version="); ok {
			version = v
		}
		if v, ok := strings.CutPrefix(f, "mcptray/app.Commit="); ok {
			commit = v
		}
	}
	if commit == "" {
		commit = setting(info, "vcs.revision")
		if setting(info, "vcs.modified") == "true" {
			commit += "-dirty"
		}
	}
	s := "version " + version
	if version == "" {
		s = "an unversioned build"
	}
	if commit != "" {
		s += " (commit " + commit + ")"
	}
	return s
}
