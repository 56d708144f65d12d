package app

import (
	"runtime"
	"runtime/debug"
)

// Commit and Date are the commit and the time (RFC 3339) a release was built
// from, stamped like Version (-X mcptray/app.Commit=… -X mcptray/app.Date=…).
// A build from a checkout that stamps neither takes them from the Go
// toolchain's VCS stamp when there is one.
var Commit, Date string

// VersionInfo is what `mcptray version --json` prints.
type VersionInfo struct {
	Version string `json:"version"`
	Commit  string `json:"commit,omitempty"`
	Date    string `json:"date,omitempty"`
	// Build is "desktop" (Fyne, the tray) or "headless" (-tags nogui).
	Build string `json:"build"`
	Go    string `json:"go"`
	OS    string `json:"os"`
	Arch  string `json:"arch"`
}

// BuildVersion is this binary's version, commit, date and build.
func BuildVersion(env *Env) VersionInfo {
	v := VersionInfo{Version: Version, Commit: Commit, Date: Date, Build: "headless", Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if env.Desktop != nil {
		v.Build = "desktop"
	}
	if bi, ok := debug.ReadBuildInfo(); ok && (v.Commit == "" || v.Date == "") {
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && v.Commit == "":
				v.Commit = s.Value
			case s.Key == "vcs.time" && v.Date == "":
				v.Date = s.Value
			}
		}
	}
	return v
}
