//go:build unix

package control

import (
	"context"
	"errors"
	"fmt"
	"mcptray/registry"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func alive(pid int) bool { return pid > 0 && syscall.Kill(pid, 0) == nil }

// serveFirstPipe: a Wine workaround (control_windows_test.go); nothing on Unix.
func serveFirstPipe(*testing.T, string) {}

// TestListenUnix: the socket's folder and file modes, and what Listen finds
// at the socket's path.
func TestListenUnix(t *testing.T) {
	t.Run("permissions", func(t *testing.T) {
		dir := filepath.Join(shortDir(t), "mcptray")
		os.Mkdir(dir, 0o755) // too wide: tightened
		ln, err := Listen(filepath.Join(dir, SocketName), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		for path, want := range map[string]os.FileMode{dir: 0o700, ln.Path(): 0o600} {
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != want {
				t.Errorf("%s: mode %v, want %v", path, fi.Mode().Perm(), want)
			}
		}
		if fi, _ := os.Lstat(ln.Path()); fi.Mode().Type() != os.ModeSocket {
			t.Errorf("not a socket: %v", fi.Mode())
		}
	})

	t.Run("stale socket replaced", func(t *testing.T) {
		sock := filepath.Join(shortDir(t), "mcptray", SocketName)
		os.MkdirAll(filepath.Dir(sock), 0o700)
		// A crashed daemon: its socket file stays, nobody listens.
		old, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
		if err != nil {
			t.Fatal(err)
		}
		old.SetUnlinkOnClose(false)
		old.Close()
		if _, err := Dial(context.Background(), &ClientOptions{Socket: sock}); !errors.Is(err, ErrNoDaemon) {
			t.Fatalf("stale socket: %v", err)
		}
		var logged []string
		ln, err := Listen(sock, &ListenOptions{Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }})
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		if len(logged) != 1 || !strings.Contains(logged[0], "stale") {
			t.Errorf("logged %q", logged)
		}
		srv := NewServer(NewLocal(&registry.Config{}, nil), nil)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- srv.Serve(ctx, ln) }()
		if _, err := Dial(context.Background(), &ClientOptions{Socket: sock}); err != nil {
			t.Errorf("dial the new daemon: %v", err)
		}
		cancel()
		<-done
	})

	t.Run("not a socket", func(t *testing.T) {
		sock := filepath.Join(shortDir(t), "mcptray", SocketName)
		os.MkdirAll(filepath.Dir(sock), 0o700)
		os.WriteFile(sock, []byte("mine"), 0o600)
		if _, err := Listen(sock, nil); err == nil || !strings.Contains(err.Error(), "not a socket") {
			t.Errorf("Listen over a file: %v", err)
		}
	})

}

// The socket's folder comes from the uid and home folder alone: a
// client's stripped environment (no XDG_RUNTIME_DIR, no XDG_CACHE_HOME)
// computes the one the desktop session's does.
func TestDefaultSocket(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_RUNTIME_DIR", "")
	t.Setenv("XDG_CACHE_HOME", "")
	stripped, err := DefaultSocket()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_RUNTIME_DIR", filepath.Join(home, "run"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	desktop, err := DefaultSocket()
	if err != nil {
		t.Fatal(err)
	}
	if stripped != desktop {
		t.Errorf("the stripped environment finds %s, the desktop session %s", stripped, desktop)
	}
	// HOME is not the account's home: another person, under that home.
	if want := filepath.Join(home, ".cache", "mcptray", SocketName); runtime.GOOS != "darwin" && desktop != want {
		t.Errorf("socket %s; want %s", desktop, want)
	}
}

// TestPeerCredentials checks that the listener reads the peer's uid and
// refuses a peer the policy does not allow.
func TestPeerCredentials(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("this system cannot tell a socket peer's uid; the folder's mode guards")
	}
	sock := filepath.Join(shortDir(t), "mcptray", SocketName)
	var mu sync.Mutex
	seen := []int{}
	allow := true
	ln, err := Listen(sock, &ListenOptions{Allow: func(uid int) bool {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, uid)
		return allow
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(NewLocal(&registry.Config{}, nil), nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	defer func() { cancel(); <-done }()

	if _, err := Dial(context.Background(), &ClientOptions{Socket: sock}); err != nil {
		t.Fatalf("allowed peer: %v", err)
	}
	mu.Lock()
	allow = false
	mu.Unlock()
	if _, err := Dial(context.Background(), &ClientOptions{Socket: sock, Timeout: 2 * time.Second}); err == nil {
		t.Fatal("a refused peer got an answer")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) < 2 || seen[0] != os.Getuid() {
		t.Errorf("uids seen %v, want ours (%d)", seen, os.Getuid())
	}
}
