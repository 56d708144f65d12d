//go:build unix

package control

import (
	"os"
	"path/filepath"
	"testing"
)

// retarget points the link at path to target by renaming a new link over
// it, as home-manager and `ln -sfn` through a temporary name do.
func retarget(t *testing.T, path, target string) {
	t.Helper()
	tmp := path + ".new"
	if err := os.Symlink(target, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestFollowSymlinkChainMiddle: servers.toml is a chain of links, as
// home-manager makes them (the file → a profile's folder → a generation);
// pointing a link in the middle of the chain at a new generation is
// applied without a manual reload: a file link, and a folder link on the
// way to a link's target.
func TestFollowSymlinkChainMiddle(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"config", "store/gen1", "store/gen2", "store/gen3", "profiles"} {
		os.MkdirAll(filepath.Join(root, d), 0o700)
	}
	write(t, filepath.Join(root, "store/gen1/servers.toml"), entry("one"))
	write(t, filepath.Join(root, "store/gen2/servers.toml"), entry("two"))
	write(t, filepath.Join(root, "store/gen3/servers.toml"), entry("three"))
	// config/servers.toml → hm/servers.toml → profiles/current/servers.toml,
	// where profiles/current is a folder link to a generation's folder
	// (through one more link, as a profile's generations are).
	os.MkdirAll(filepath.Join(root, "hm"), 0o700)
	gen1 := filepath.Join(root, "profiles", "gen-1-link")
	if err := os.Symlink(filepath.Join(root, "store/gen1"), gen1); err != nil {
		t.Fatal(err)
	}
	current := filepath.Join(root, "profiles", "current")
	if err := os.Symlink("gen-1-link", current); err != nil {
		t.Fatal(err)
	}
	mid := filepath.Join(root, "hm", "servers.toml")
	if err := os.Symlink(filepath.Join(current, "servers.toml"), mid); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "config", "servers.toml")
	if err := os.Symlink("../hm/servers.toml", link); err != nil {
		t.Fatal(err)
	}
	l := followed(t, link)
	if !hasServers(l, "one")() {
		t.Fatalf("servers %v", serverNames(l))
	}
	gen2 := filepath.Join(root, "profiles", "gen-2-link")
	if err := os.Symlink(filepath.Join(root, "store/gen2"), gen2); err != nil {
		t.Fatal(err)
	}
	retarget(t, current, "gen-2-link")
	waitEngine(t, l, "the folder link in the middle pointed at generation 2", hasServers(l, "two"))
	retarget(t, mid, filepath.Join(root, "store/gen3/servers.toml"))
	waitEngine(t, l, "the file link in the middle pointed at generation 3", hasServers(l, "three"))
	appendTo(t, filepath.Join(root, "store/gen3/servers.toml"), entry("more"))
	waitEngine(t, l, "the new target edited", hasServers(l, "three", "more"))
}
