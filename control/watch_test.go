//go:build unix

package control

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"mcptray/registry"
)

// followed runs a Local engine on the config at path, following the file.
func followed(t *testing.T, path string) *Local {
	t.Helper()
	cfg, err := registry.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	l := NewLocal(cfg, &LocalOptions{Debounce: 20 * time.Millisecond})
	following := make(chan struct{})
	l.following = func() { close(following) }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { l.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-following:
	case <-time.After(20 * time.Second):
		t.Fatal("the engine never watched its file")
	}
	return l
}

func serverNames(l *Local) []string {
	var out []string
	for _, s := range l.Snapshot().Servers {
		out = append(out, s.Name)
	}
	return out
}

// waitEngine waits for cond on l, on each change it signals.
func waitEngine(t *testing.T, l *Local, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for !cond() {
		select {
		case <-l.Changes():
		case <-deadline:
			t.Fatalf("timed out waiting for %s; servers %v, status %+v", what, serverNames(l), l.Status())
		}
	}
}

func hasServers(l *Local, names ...string) func() bool {
	return func() bool { return slices.Equal(serverNames(l), names) }
}

func entry(name string) string {
	return fmt.Sprintf("\n[servers.%s]\ncommand = \"true\"\nautostart = false\n", name)
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func appendTo(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// replace writes text beside path and renames it over path, as editors do.
func replace(t *testing.T, path, text string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), ".tmp-"+filepath.Base(path))
	write(t, tmp, text)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestFollowSymlinkedConfig: servers.toml is a link into a dotfiles folder;
// every way of changing what it reads is applied.
func TestFollowSymlinkedConfig(t *testing.T) {
	root := t.TempDir()
	cfgDir := filepath.Join(root, "config", "mcptray")
	dots := filepath.Join(root, "dotfiles")
	os.MkdirAll(cfgDir, 0o700)
	os.MkdirAll(dots, 0o700)
	target := filepath.Join(dots, "servers.toml")
	write(t, target, entry("a"))
	link := filepath.Join(cfgDir, "servers.toml")
	if err := os.Symlink("../../dotfiles/servers.toml", link); err != nil {
		t.Fatal(err)
	}
	l := followed(t, link)

	appendTo(t, target, entry("b"))
	waitEngine(t, l, "the target appended", hasServers(l, "a", "b"))

	replace(t, target, entry("a")+entry("c"))
	waitEngine(t, l, "the target replaced by rename", hasServers(l, "a", "c"))

	// Edits after the rename still count (the new file is followed).
	appendTo(t, target, entry("d"))
	waitEngine(t, l, "the new target appended", hasServers(l, "a", "c", "d"))

	// The link pointed elsewhere, then that file edited.
	other := filepath.Join(root, "other.toml")
	write(t, other, entry("x"))
	tmpLink := filepath.Join(cfgDir, ".new-link")
	os.Symlink(other, tmpLink)
	if err := os.Rename(tmpLink, link); err != nil {
		t.Fatal(err)
	}
	waitEngine(t, l, "the link retargeted", hasServers(l, "x"))
	appendTo(t, other, entry("y"))
	waitEngine(t, l, "the new target edited", hasServers(l, "x", "y"))
	// The old target no longer matters.
	appendTo(t, target, entry("old"))
	appendTo(t, other, entry("z"))
	waitEngine(t, l, "the new target edited again", hasServers(l, "x", "y", "z"))
}

// TestFollowFolderRecreated: the config's folder deleted and made again
// (a dotfiles checkout, a restore) is followed again.
func TestFollowFolderRecreated(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "mcptray")
	os.Mkdir(dir, 0o700)
	path := filepath.Join(dir, "servers.toml")
	write(t, path, entry("a"))
	l := followed(t, path)

	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	waitEngine(t, l, "the missing file reported", func() bool {
		p := l.Status().ConfigProblem
		return p != nil && p.File == path && strings.Contains(p.Message, "not there")
	})
	if !slices.Equal(serverNames(l), []string{"a"}) {
		t.Errorf("servers changed with the file gone: %v", serverNames(l))
	}
	os.Mkdir(dir, 0o700)
	write(t, path, entry("b"))
	waitEngine(t, l, "the file back", func() bool { return hasServers(l, "b")() && l.Status().ConfigProblem == nil })
	appendTo(t, path, entry("c"))
	waitEngine(t, l, "an edit after the folder came back", hasServers(l, "b", "c"))

	// Twice, and deeper: the parent goes too.
	os.RemoveAll(root)
	waitEngine(t, l, "the missing file reported", func() bool { return l.Status().ConfigProblem != nil })
	os.MkdirAll(dir, 0o700)
	write(t, path, entry("d"))
	waitEngine(t, l, "the file back again", hasServers(l, "d"))
}

// TestConfigProblemInStatus: a file that does not load is in Status, with
// its position, until it is fixed; what runs is left alone.
func TestConfigProblemInStatus(t *testing.T) {
	path := filepath.Join(t.TempDir(), "servers.toml")
	write(t, path, entry("a"))
	l := followed(t, path)
	replace(t, path, entry("a")+"\n[servers.b\ncommand = \"x\"\n")
	waitEngine(t, l, "the problem", func() bool { return l.Status().ConfigProblem != nil })
	p := l.Status().ConfigProblem
	if p.File != path || p.Line < 6 || p.Col == 0 || p.Message == "" {
		t.Errorf("problem %+v, want %s, a line and a column", p, path)
	}
	if !slices.Equal(serverNames(l), []string{"a"}) {
		t.Errorf("servers %v", serverNames(l))
	}
	if _, err := l.Reload(context.Background()); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%s:%d:%d: ", path, p.Line, p.Col)) {
		t.Errorf("Reload: %v", err)
	}
	replace(t, path, entry("a")+entry("b"))
	waitEngine(t, l, "the fix", func() bool { return l.Status().ConfigProblem == nil && hasServers(l, "a", "b")() })
}

// TestFollowSymlinkedFolder: the config's folder is a link into a dotfiles
// checkout; the link pointed at another checkout is followed.
func TestFollowSymlinkedFolder(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"one", "two", "config"} {
		os.Mkdir(filepath.Join(root, d), 0o700)
	}
	write(t, filepath.Join(root, "one", "servers.toml"), entry("a"))
	write(t, filepath.Join(root, "two", "servers.toml"), entry("b"))
	link := filepath.Join(root, "config", "mcptray")
	os.Symlink(filepath.Join(root, "one"), link)
	l := followed(t, filepath.Join(link, "servers.toml"))

	appendTo(t, filepath.Join(root, "one", "servers.toml"), entry("c"))
	waitEngine(t, l, "an edit through the folder link", hasServers(l, "a", "c"))
	tmp := filepath.Join(root, "config", ".new")
	os.Symlink(filepath.Join(root, "two"), tmp)
	if err := os.Rename(tmp, link); err != nil {
		t.Fatal(err)
	}
	waitEngine(t, l, "the folder link pointed elsewhere", hasServers(l, "b"))
	appendTo(t, filepath.Join(root, "two", "servers.toml"), entry("d"))
	waitEngine(t, l, "an edit in the new folder", hasServers(l, "b", "d"))
}
