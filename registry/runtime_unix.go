//go:build unix && !darwin

package registry

import (
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

func runtimeBase() (string, error) {
	home := userHome()
	if run := loginRuntimeDir(); run != "" && (home == "" || home == accountHome()) {
		return run, nil
	}
	if home == "" {
		return "", errNoHome
	}
	return filepath.Join(home, ".cache"), nil
}

// loginRuntimeDir is /run/user/UID, the folder systemd-logind (and
// elogind) make for the user's sessions, when it exists and is the user's
// own; "" otherwise.
func loginRuntimeDir() string {
	uid := os.Getuid()
	dir := filepath.Join("/run/user", strconv.Itoa(uid))
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return ""
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != uid {
		return ""
	}
	return dir
}

// accountHome is the home folder of the account (the password database),
// whatever $HOME says; "" when unknown.
func accountHome() string {
	u, err := user.LookupId(strconv.Itoa(os.Getuid()))
	if err != nil || !filepath.IsAbs(u.HomeDir) {
		return ""
	}
	return filepath.Clean(u.HomeDir)
}
