package gui

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"fyne.io/fyne/v2"

	"mcptray/registry/clients"
)

// clientCommands are the programs whose presence on PATH says a client is
// installed, for clients that have one.
var clientCommands = map[string][]string{
	"claude-code": {"claude"},
	"cursor":      {"cursor"},
	"vscode":      {"code", "code-insiders", "codium"},
	"windsurf":    {"windsurf"},
	"zed":         {"zed", "zeditor"},
	"codex":       {"codex"},
	"gemini":      {"gemini"},
	"goose":       {"goose"},
	"opencode":    {"opencode"},
	"kiro":        {"kiro"},
	"lmstudio":    {"lms"},
}

// clientInstalled says whether a client seems installed here: its config
// file exists, or the folder the client keeps it in (not the home folder
// itself), or its program is on PATH.
func clientInstalled(cl *clients.Client, opts *clients.Options) bool {
	if p, err := cl.Path(opts); err == nil && p != "" {
		if _, err := os.Stat(p); err == nil {
			return true
		}
		home := opts.Home
		if home == "" {
			home, _ = os.UserHomeDir()
		}
		if dir := filepath.Dir(p); dir != home && dir != "." {
			if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
				return true
			}
		}
	}
	for _, name := range clientCommands[cl.ID] {
		if _, err := exec.LookPath(name); err == nil {
			return true
		}
	}
	return false
}

// prefExportClient remembers the client last exported to.
const prefExportClient = "export.client"

const installedSuffix = " (installed)"

// clientChoices lists the clients for the export dialog, installed ones
// first and marked, and the one to preselect: the last choice, else the
// first installed, else the first.
func clientChoices(prefs fyne.Preferences, opts *clients.Options) (labels []string, byLabel map[string]*clients.Client, pick string) {
	byLabel = map[string]*clients.Client{}
	var installed, others []string
	last := prefs.String(prefExportClient)
	for _, cl := range clients.All() {
		label := cl.Name
		if clientInstalled(cl, opts) {
			label += installedSuffix
			installed = append(installed, label)
		} else {
			others = append(others, label)
		}
		byLabel[label] = cl
		if cl.ID == last {
			pick = label
		}
	}
	labels = slices.Concat(installed, others)
	if pick == "" && len(labels) > 0 {
		pick = labels[0]
	}
	return labels, byLabel, pick
}

// tildePath writes a path under the home folder as ~/…, as people read it.
func tildePath(p string) string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return p
	}
	if rel, err := filepath.Rel(home, p); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
		return filepath.Join("~", rel)
	}
	return p
}
