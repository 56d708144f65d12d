//go:build unix

package registry

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A named pipe where servers.toml or a client's file should be is refused
// before it is opened: opening it would block until something writes to it,
// past SIGINT and SIGTERM.
func TestRefusesNamedPipe(t *testing.T) {
	path := filepath.Join(t.TempDir(), "servers.toml")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	if _, err := Load(path); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "named pipe") || !strings.Contains(err.Error(), path) {
		t.Errorf("Load: %v", err)
	}
	if err := WriteFileAtomic(path, []byte("x"), nil); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), path) {
		t.Errorf("write: %v", err)
	}
	if fi, _ := os.Lstat(path); fi.Mode()&os.ModeNamedPipe == 0 {
		t.Error("the pipe was replaced")
	}
	if _, err := ReadFile(path); !errors.Is(err, ErrNotRegular) {
		t.Errorf("ReadFile: %v", err)
	}
}

// Written as root (sudo mcptray install), a person's file stays theirs.
func TestWriteKeepsOwner(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to own a file as someone else")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	writeFile(t, path, "{}\n", 0o640)
	if err := os.Chown(path, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(path, []byte("{\"a\": 1}\n"), &WriteOptions{Backup: path + ".bak"}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + ".bak"} {
		fi, _ := os.Stat(p)
		st := fi.Sys().(*syscall.Stat_t)
		if st.Uid != 65534 || st.Gid != 65534 || fi.Mode().Perm() != 0o640 {
			t.Errorf("%s: owner %d:%d mode %v, want 65534:65534 0640", filepath.Base(p), st.Uid, st.Gid, fi.Mode().Perm())
		}
	}
}

// smallDisk mounts a tmpfs of a few pages at a new folder (root only) and
// fills it so that at most room bytes can still be written.
func smallDisk(t *testing.T) (dir string, fill func(room int)) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root to mount a small tmpfs")
	}
	dir = t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("mount tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	return dir, func(room int) {
		f, err := os.Create(filepath.Join(dir, "filler"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		page := bytes.Repeat([]byte{'.'}, 4096)
		for {
			if _, err := f.Write(page); err != nil {
				break
			}
		}
		// Give back what is asked for, page by page.
		fi, _ := f.Stat()
		if room > 0 {
			f.Truncate(fi.Size() - int64((room+4095)/4096*4096))
		}
	}
}

// A save that fails on a full disk leaves the file and the previous backup
// as they were, and no temporary file.
func TestSaveFullDiskKeepsFileAndBackup(t *testing.T) {
	dir, fill := smallDisk(t)
	path := filepath.Join(dir, "servers.toml")
	orig := "[servers.x]\ncommand = \"x\"\n"
	writeFile(t, path, orig, 0o600)
	writeFile(t, path+".bak", "the previous backup\n", 0o600)
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	// Room for the backup (one page), not for the new file.
	cfg.Servers[0].Description = strings.Repeat("long ", 4000)
	fill(4096)
	err = Save(cfg)
	if err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("save on a full disk: %v", err)
	}
	if got := readString(t, path); got != orig {
		t.Errorf("file = %q", got)
	}
	if got := readString(t, path+".bak"); got != "the previous backup\n" {
		t.Errorf("previous backup overwritten: %q", got)
	}
	assertNoTemp(t, dir)
}

// A failed install leaves no backup behind (no 0-byte backups).
func TestFullDiskLeavesNoBackup(t *testing.T) {
	dir, fill := smallDisk(t)
	path := filepath.Join(dir, "settings.json")
	writeFile(t, path, "{}\n", 0o600)
	fill(0)
	err := WriteFileAtomic(path, bytes.Repeat([]byte("x"), 10000),
		&WriteOptions{Backup: path + ".mcptray-backup", Stamp: time.Now})
	if err == nil {
		t.Fatal("write on a full disk succeeded")
	}
	if got := readString(t, path); got != "{}\n" {
		t.Errorf("file = %q", got)
	}
	if b, _ := filepath.Glob(path + ".mcptray-backup*"); len(b) > 0 {
		t.Errorf("backups left by a failed write: %v", b)
	}
	assertNoTemp(t, dir)
}

func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}
