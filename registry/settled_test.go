package registry

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestReadSettled: a file that stays put reads as it is; one rewritten
// faster than two reads can agree is ErrUnsettled, not one of its states;
// a missing file is the error ReadFile gives.
func TestReadSettled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "servers.toml")
	if err := os.WriteFile(path, []byte("[servers.a]\ncommand = \"x\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadSettled(path); err != nil || string(got) != "[servers.a]\ncommand = \"x\"\n" {
		t.Fatalf("ReadSettled = %q, %v", got, err)
	}
	// A save between every two reads (as a program that keeps rewriting
	// the file does): never settled.
	hookSettleRead = func(i int) { os.WriteFile(path, []byte("# save "+strconv.Itoa(i)+"\n"), 0o600) }
	_, err := ReadSettled(path)
	hookSettleRead = nil
	if !errors.Is(err, ErrUnsettled) {
		t.Errorf("a file rewritten between every two reads: err = %v, want ErrUnsettled", err)
	}
	if _, err := ReadSettled(filepath.Join(t.TempDir(), "none.toml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}
