package registry

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

// TestLockWaitsForRemovedLockFile: a lock file its last holder is removing
// (delete-pending: the name stays until every handle is closed, and opens
// are refused with access denied) is waited for, not reported as an error.
func TestLockWaitsForRemovedLockFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "servers.toml")
	name := lockName(path)
	p, _ := windows.UTF16PtrFromString(name)
	// Another process's handle that allows the removal, held open: the
	// removal leaves the file delete-pending until it is closed.
	h, err := windows.CreateFile(p, windows.GENERIC_READ|windows.DELETE,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil, windows.CREATE_ALWAYS, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			windows.CloseHandle(h)
		}
	}()
	if err := windows.DeleteFile(p); err != nil {
		t.Fatal(err)
	}
	if f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644); err == nil {
		f.Close()
		t.Skip("this Windows removes a file's name at once (POSIX delete semantics): a lock file is never delete-pending")
	} else if !busy(err) {
		t.Fatalf("open of a delete-pending file: %v, want access denied", err)
	}
	hookLockBusy = func() {
		if !closed { // the holder's handle goes: the file with it
			closed = true
			windows.CloseHandle(h)
		}
	}
	defer func() { hookLockBusy = nil }()
	unlock, err := lockFile(path, 30*time.Second)
	if err != nil {
		t.Fatalf("lock while the lock file was being removed: %v", err)
	}
	unlock()
	if !closed {
		t.Error("the lock was taken without waiting for the removal")
	}
}
