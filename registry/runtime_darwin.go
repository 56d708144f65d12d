package registry

import (
	"os"
	"os/user"
	"path/filepath"
	"strconv"
)

// On macOS launchd gives every process HOME; the user's cache folder under
// it is what both the app and a client's bridge find.
func runtimeBase() (string, error) {
	home := userHome()
	if home == "" {
		return "", errNoHome
	}
	return filepath.Join(home, "Library", "Caches"), nil
}

func accountHome() string {
	u, err := user.LookupId(strconv.Itoa(os.Getuid()))
	if err != nil || !filepath.IsAbs(u.HomeDir) {
		return ""
	}
	return filepath.Clean(u.HomeDir)
}
