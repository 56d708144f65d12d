package app

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDaemonStopWords: a daemon's last words are read from its own lines
// of the shared log, between its start line and the next daemon's; one
// killed says nothing.
func TestDaemonStopWords(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "control.sock")
	log := "mcptray daemon: v1, pid 100, 3 servers from /x/servers.toml, listening on " + sock + "\n" +
		"mcptray daemon: stopped by signal SIGTERM (from the system, the service manager or a kill); every server it started is stopped\n" +
		"\x00\x00mcptray daemon: v1, pid 200, 3 servers from /x/servers.toml, listening on " + sock + "\n" +
		"mcptray daemon: ended 3 processes left running by mcptray pid 100\n" +
		"mcptray daemon: v1, pid 300, 3 servers from /x/servers.toml, listening on " + sock + "\n"
	if err := os.WriteFile(filepath.Join(dir, DaemonLogName), []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := DaemonStopWords(sock, 100); got != "stopped by signal SIGTERM (from the system, the service manager or a kill); every server it started is stopped" {
		t.Errorf("pid 100: %q", got)
	}
	if got := DaemonStopWords(sock, 200); got != "" {
		t.Errorf("pid 200, killed: %q", got)
	}
	if got := DaemonStopWords(sock, 999); got != "" {
		t.Errorf("a pid not in the log: %q", got)
	}
}
