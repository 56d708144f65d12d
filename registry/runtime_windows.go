package registry

import (
	"os"
	"os/user"
	"path/filepath"
)

// A client may start its servers without LOCALAPPDATA; the profile folder
// it lies in by default is then the one every process finds.
func runtimeBase() (string, error) {
	if d := os.Getenv("LOCALAPPDATA"); d != "" && filepath.IsAbs(d) {
		return d, nil
	}
	home := userHome()
	if home == "" {
		return "", errNoHome
	}
	return filepath.Join(home, "AppData", "Local"), nil
}

func accountHome() string {
	u, err := user.Current()
	if err != nil || !filepath.IsAbs(u.HomeDir) {
		return ""
	}
	return filepath.Clean(u.HomeDir)
}
