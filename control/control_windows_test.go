package control

import (
	"strings"
	"testing"

	"github.com/Microsoft/go-winio"
	"golang.org/x/sys/windows"

	"mcptray/internal/wine"
)

func alive(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	var code uint32
	return windows.GetExitCodeProcess(h, &code) == nil && code == 259 // STILL_ACTIVE
}

func TestPipeName(t *testing.T) {
	a := PipeName(`C:\Users\me\AppData\Local\mcptray\mcptray.sock`)
	if !strings.HasPrefix(a, `\\.\pipe\mcptray-`) {
		t.Errorf("pipe name %s", a)
	}
	if b := PipeName(`c:\users\ME\appdata\local\mcptray\mcptray.sock`); b != a {
		t.Errorf("paths that differ in case only (one file on Windows) got two pipes: %s %s", a, b)
	}
	if b := PipeName(`C:\Users\other\AppData\Local\mcptray\mcptray.sock`); b == a {
		t.Errorf("two users share the pipe %s", a)
	}
}

// TestPipeSecurity: the pipe is owned by the user and lists the user alone.
func TestPipeSecurity(t *testing.T) {
	sd, err := pipeSecurity()
	if err != nil {
		t.Fatal(err)
	}
	sid, _ := userSID()
	if want := "O:" + sid.String() + "D:P(A;;GA;;;" + sid.String() + ")"; sd != want {
		t.Errorf("security %s, want %s", sd, want)
	}
	if _, err := windows.SecurityDescriptorFromString(sd); err != nil {
		t.Errorf("not a valid descriptor: %v", err)
	}
}

// serveFirstPipe works around Wine, whose first instance of a go-winio
// pipe accepts a client but never serves it: a throwaway open takes that
// instance, and the clients after it are served. On Windows it does nothing.
func serveFirstPipe(t *testing.T, sock string) {
	t.Helper()
	if !wine.Running() {
		return
	}
	c, err := winio.DialPipe(PipeName(sock), nil)
	if err != nil {
		t.Fatalf("throwaway open of the pipe under Wine: %v", err)
	}
	c.Close()
}
