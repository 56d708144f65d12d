//go:build unix

package clients

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"mcptray/registry"
)

// A named pipe at the client's path is refused at once; reading it would
// block until something writes to it.
func TestInstallRefusesNamedPipe(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp.json")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	for _, dry := range []bool{true, false} {
		_, err := lookup(t, "cursor").Install(testServers(), installOpts(), &FileOptions{Path: path, DryRun: dry})
		if !errors.Is(err, registry.ErrNotRegular) || !strings.Contains(err.Error(), "named pipe") || !strings.Contains(err.Error(), path) {
			t.Errorf("dry run %v: err = %v", dry, err)
		}
	}
	if fi, _ := os.Lstat(path); fi.Mode()&os.ModeNamedPipe == 0 {
		t.Error("the pipe was replaced")
	}
}
