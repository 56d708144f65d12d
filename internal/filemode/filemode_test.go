package filemode

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestMatches(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(p)
	if !Matches(fi.Mode(), 0o600) {
		t.Errorf("a file written 0600 has mode %v", fi.Mode())
	}
	if Matches(fi.Mode(), 0o400) {
		t.Errorf("a writable file (%v) matches read-only 0400", fi.Mode())
	}
	os.Chmod(p, 0o400)
	fi, _ = os.Stat(p)
	if !Matches(fi.Mode(), 0o400) || Matches(fi.Mode(), 0o600) {
		t.Errorf("a file made read-only has mode %v", fi.Mode())
	}
	if runtime.GOOS != "windows" && Matches(0o644, 0o600) {
		t.Error("0644 matches 0600 on", runtime.GOOS)
	}
}
