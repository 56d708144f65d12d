package supervisor

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"mcptray/internal/clock"

	"golang.org/x/sys/windows"
)

// TestMain lets the test binary play the servers on Windows (main_test.go's
// is for Unix): SUPERVISOR_WIN_CHILD=spawner starts a grandchild at once and
// waits on stdin; =sleeper writes its pid and waits for ever.
func TestMain(m *testing.M) {
	switch os.Getenv("SUPERVISOR_WIN_CHILD") {
	case "spawner":
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "SUPERVISOR_WIN_CHILD=sleeper")
		if err := cmd.Start(); err != nil {
			os.Exit(2)
		}
		bufio.NewScanner(os.Stdin).Scan() // until stdin closes
		os.Exit(0)
	case "sleeper":
		f := os.Getenv("SUPERVISOR_WIN_PIDFILE")
		os.WriteFile(f+".tmp", []byte(strconv.Itoa(os.Getpid())), 0o600)
		os.Rename(f+".tmp", f)
		select {}
	}
	os.Exit(m.Run())
}

// TestJobHoldsWhatCmdStarts: a server run through a .cmd file (cmd /c, as
// npx.cmd is) starts a grandchild at once; the grandchild is in the job, and
// stopping the server ends it.
func TestJobHoldsWhatCmdStarts(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "grand.pid")
	script := filepath.Join(dir, "server.cmd")
	os.WriteFile(script, []byte("@\""+os.Args[0]+"\" -test.run=^$\r\n"), 0o600)
	env := append(os.Environ(), "SUPERVISOR_WIN_CHILD=spawner", "SUPERVISOR_WIN_PIDFILE="+pidFile)
	p, err := spawn(spawnSpec{Path: script, Env: env, Dir: dir}, newRing(100, 1<<16), nil, 4096, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	var grand int
	for deadline := time.Now().Add(20 * time.Second); grand == 0; time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(pidFile); err == nil {
			grand, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		if time.Now().After(deadline) {
			t.Fatal("the grandchild never started")
		}
	}
	// PROCESS_QUERY_INFORMATION, not the limited right: Windows' IsProcessInJob
	// takes either, Wine's only this one.
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_INFORMATION|windows.SYNCHRONIZE, false, uint32(grand))
	if err != nil {
		t.Fatal(err)
	}
	defer windows.CloseHandle(h)
	var in int32
	if r, _, err := windows.NewLazySystemDLL("kernel32.dll").NewProc("IsProcessInJob").Call(uintptr(h), uintptr(p.group.job), uintptr(unsafe.Pointer(&in))); r == 0 {
		t.Fatalf("IsProcessInJob: %v", err)
	}
	if in == 0 {
		t.Error("the grandchild escaped the job")
	}
	p.stopping()
	p.stop(clock.Real, 2*time.Second, 2*time.Second)
	if ev, _ := windows.WaitForSingleObject(h, 10_000); ev != windows.WAIT_OBJECT_0 {
		t.Error("the grandchild outlived the stop")
	}
}

func TestCreationFlags(t *testing.T) {
	for _, console := range []bool{true, false} {
		f := creationFlags(console)
		if f&windows.CREATE_SUSPENDED == 0 || f&windows.CREATE_NEW_PROCESS_GROUP == 0 {
			t.Errorf("console=%v: flags %#x lack suspended or new group", console, f)
		}
		if got := f&windows.CREATE_NO_WINDOW != 0; got == console {
			t.Errorf("console=%v: CREATE_NO_WINDOW=%v", console, got)
		}
	}
}
