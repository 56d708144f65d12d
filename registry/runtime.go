package registry

import (
	"errors"
	"os"
	"path/filepath"
)

// RuntimeDirName is the folder of mcptray's per-user runtime files (the
// daemon's control socket and lock, its log, process records) inside the
// base folder [RuntimeDir] picks.
const RuntimeDirName = "mcptray"

// RuntimeDir is the folder of this user's daemon: its control socket, the
// lock that makes one daemon per person, its log and the process records.
//
// Every process of the user must compute the same folder, whatever its
// environment: AI clients start `mcptray connect` with a stripped one
// (Codex passes only HOME, PATH, SHELL, LANG and TERM), while the tray and
// the service run with the desktop session's. So it is derived from the
// user id and the home folder alone, never from XDG_RUNTIME_DIR or
// XDG_CACHE_HOME, which a client may drop:
//
//   - Linux and the BSDs: /run/user/UID/mcptray when that folder exists and
//     is the user's and $HOME is the account's home (what a desktop
//     session's XDG_RUNTIME_DIR names), else $HOME/.cache/mcptray. A
//     process with another $HOME (a throwaway home, a test) is another
//     person and gets its own daemon.
//   - macOS: $HOME/Library/Caches/mcptray.
//   - Windows: %LOCALAPPDATA%\mcptray, else %USERPROFILE%\AppData\Local\mcptray.
func RuntimeDir() (string, error) {
	base, err := runtimeBase()
	if err != nil {
		return "", err
	}
	return filepath.Join(base, RuntimeDirName), nil
}

// errNoHome is RuntimeDir's error when no home folder can be found.
var errNoHome = errors.New("cannot find a folder for mcptray's runtime files: neither $HOME nor the account's home folder is known")

// userHome is $HOME, else the account's home folder.
func userHome() string {
	if h, err := os.UserHomeDir(); err == nil && filepath.IsAbs(h) {
		return filepath.Clean(h)
	}
	return accountHome()
}
