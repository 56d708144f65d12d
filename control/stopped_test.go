package control

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestStoppedSinceTheBridgesStart: a stop marked just after a bridge took
// its start time is seen as after it, every time: the mark's file time
// comes from the kernel's coarse clock, which reads up to a tick early.
// A mark made before the bridge started is not.
func TestStoppedSinceTheBridgesStart(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "mcptray.sock")
	for i := range 50 {
		started := time.Now()
		if err := MarkStopped(sock); err != nil {
			t.Fatal(err)
		}
		if !StoppedSince(sock, started) {
			t.Fatalf("try %d: a stop marked after the start is not seen as after it", i)
		}
		ClearStopped(sock)
	}
	if err := MarkStopped(sock); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if StoppedSince(sock, time.Now()) {
		t.Error("a stop marked before the start is seen as after it")
	}
	// A mark without a time (written by an older daemon) is read by its
	// file's time.
	path := filepath.Join(filepath.Dir(sock), stoppedName)
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if !StoppedSince(sock, time.Now().Add(-time.Minute)) || StoppedSince(sock, time.Now().Add(time.Minute)) {
		t.Error("a mark without a time is not read by its file's time")
	}
	ClearStopped(sock)
	if StoppedSince(sock, time.Time{}) {
		t.Error("no mark, yet stopped")
	}
}
