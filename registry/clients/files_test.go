package clients

import (
	"errors"
	"fmt"
	"mcptray/internal/filemode"
	"mcptray/internal/wine"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"mcptray/registry"
)

// Install and Uninstall on files as people keep them: linked into a dotfiles
// repository, with Windows line endings, made read-only, and written by many
// processes at once.

func testNames() []string {
	var names []string
	for _, s := range testServers() {
		names = append(names, s.Name)
	}
	return names
}

func lookup(t *testing.T, id string) *Client {
	t.Helper()
	c, err := Lookup(id)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestInstallThroughSymlink(t *testing.T) {
	home := t.TempDir()
	real := filepath.Join(home, "dotfiles", "claude.json")
	os.MkdirAll(filepath.Dir(real), 0o755)
	orig := "{\n  \"theme\": \"dark\"\n}\n"
	os.WriteFile(real, []byte(orig), 0o644)
	os.Chmod(real, 0o644)
	link := filepath.Join(home, ".claude.json")
	wine.Symlink(t, "dotfiles/claude.json", link)
	c := lookup(t, "claude-code")
	ch, err := c.Install(testServers(), installOpts(), &FileOptions{Path: link})
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf(".claude.json is no longer a link: %v", err)
	}
	got, _ := os.ReadFile(real)
	if !strings.Contains(string(got), `"theme": "dark"`) || !strings.Contains(string(got), `"mcpServers"`) {
		t.Errorf("the linked file was not written:\n%s", got)
	}
	if fi, _ := os.Stat(real); !filemode.Matches(fi.Mode(), 0o644) {
		t.Errorf("mode %v, want 0644 kept", fi.Mode().Perm())
	}
	if b, _ := os.ReadFile(ch.Backup); string(b) != orig || filepath.Dir(ch.Backup) != home {
		t.Errorf("backup %s = %q", ch.Backup, b)
	}
	if _, err := c.Uninstall(testNames(), installOpts(), &FileOptions{Path: link}); err != nil {
		t.Fatal(err)
	}
	// (Claude Code's uninstall leaves an empty "mcpServers".)
	if got, _ := os.ReadFile(real); !strings.Contains(string(got), `"theme": "dark"`) || strings.Contains(string(got), `"command"`) {
		t.Errorf("uninstall through the link:\n%s", got)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("uninstall replaced the link")
	}
}

// A CRLF file keeps CRLF on every line, and uninstall restores it byte for
// byte.
func TestInstallKeepsCRLF(t *testing.T) {
	for _, id := range []string{"cursor", "codex", "continue"} {
		t.Run(id, func(t *testing.T) {
			c := lookup(t, id)
			fixture, ok := fixtures[id]
			if !ok {
				t.Fatalf("no fixture for %s", id)
			}
			orig := strings.ReplaceAll(fixture, "\n", "\r\n")
			path := filepath.Join(t.TempDir(), "config")
			os.WriteFile(path, []byte(orig), 0o600)
			ch, err := c.Install(testServers(), installOpts(), &FileOptions{Path: path})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(path)
			if lf, crlf := strings.Count(string(got), "\n"), strings.Count(string(got), "\r\n"); lf != crlf {
				t.Errorf("mixed line endings (%d LF, %d CRLF):\n%q", lf, crlf, got)
			}
			if string(ch.New) != string(got) {
				t.Error("the change (and its diff) is not what was written")
			}
			if _, err := c.Uninstall(testNames(), installOpts(), &FileOptions{Path: path}); err != nil {
				t.Fatal(err)
			}
			if back, _ := os.ReadFile(path); string(back) != orig && id != "continue" {
				t.Errorf("uninstall did not restore the file:\n%q\nwant\n%q", back, orig)
			}
		})
	}
}

func TestInstallRefusesReadOnlyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp.json")
	os.WriteFile(path, []byte("{}\n"), 0o444)
	os.Chmod(path, 0o444)
	_, err := lookup(t, "cursor").Install(testServers(), installOpts(), &FileOptions{Path: path})
	if !errors.Is(err, registry.ErrReadOnly) || !strings.Contains(err.Error(), path) {
		t.Fatalf("err = %v, want a read-only error naming the file", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "{}\n" {
		t.Errorf("file changed: %q", got)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("files left beside it: %v", entries)
	}
}

// Many installs of the same servers keep the oldest backup and the newest
// four, not one per install forever.
func TestInstallBackupsPruned(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp.json")
	os.WriteFile(path, []byte("{\"orig\": true}\n"), 0o600)
	c := lookup(t, "cursor")
	clock := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	for i := range 12 {
		clock = clock.Add(time.Second)
		var err error
		if i%2 == 0 {
			_, err = c.Install(testServers(), installOpts(), &FileOptions{Path: path, Now: now})
		} else {
			_, err = c.Uninstall(testNames(), installOpts(), &FileOptions{Path: path, Now: now})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	backups, _ := filepath.Glob(path + ".mcptray-backup-*")
	if len(backups) != 5 {
		t.Fatalf("%d backups: %v", len(backups), backups)
	}
	if b, _ := os.ReadFile(backups[0]); string(b) != "{\"orig\": true}\n" || backups[0] != BackupName(path, time.Date(2026, 3, 1, 0, 0, 1, 0, time.UTC)) {
		t.Errorf("the oldest backup %s = %q, want the original file", backups[0], b)
	}
}

// TestInstallHelperProcess is one mcptray install, run as its own process by
// TestConcurrentInstalls.
func TestInstallHelperProcess(t *testing.T) {
	path, name := os.Getenv("CLIENTS_TEST_INSTALL"), os.Getenv("CLIENTS_TEST_INSTALL_NAME")
	if path == "" {
		t.Skip("run by TestConcurrentInstalls")
	}
	s := &registry.Server{Name: name, Command: "srv-" + name, Args: []string{"--port", name}, Autostart: true}
	if _, err := lookup(t, os.Getenv("CLIENTS_TEST_INSTALL_CLIENT")).Install([]*registry.Server{s}, installOpts(), &FileOptions{Path: path}); err != nil {
		t.Fatal(err)
	}
}

// 20 installs of different servers into one file, each its own process, at
// once: all 20 are in the file afterwards.
func TestConcurrentInstalls(t *testing.T) {
	for _, id := range []string{"cursor", "codex"} {
		t.Run(id, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config")
			const n = 20
			var wg sync.WaitGroup
			errs := make([]error, n)
			for i := range n {
				wg.Go(func() {
					cmd := exec.Command(os.Args[0], "-test.run=^TestInstallHelperProcess$")
					cmd.Env = append(os.Environ(), "CLIENTS_TEST_INSTALL="+path, "CLIENTS_TEST_INSTALL_CLIENT="+id,
						fmt.Sprintf("CLIENTS_TEST_INSTALL_NAME=s%02d", i))
					if out, err := cmd.CombinedOutput(); err != nil {
						errs[i] = fmt.Errorf("install %d: %v\n%s", i, err, out)
					}
				})
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					t.Error(err)
				}
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			im, err := lookup(t, id).Import(path, data, installOpts())
			if err != nil {
				t.Fatal(err)
			}
			if len(im.Servers) != n {
				t.Fatalf("%d servers after %d concurrent installs:\n%s", len(im.Servers), n, data)
			}
			// 19 backups made, the oldest and the newest four kept, no lock file.
			if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1+5 {
				t.Errorf("%d files beside it, want 5 backups: %v", len(entries)-1, entries)
			}
		})
	}
}
