package control

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"mcptray/registry"
	"mcptray/supervisor"
)

// TestShutdown: POST /v1/shutdown is answered, then the daemon's run ends
// (as `mcptray daemon` wires OnShutdown) and every server it ran is
// stopped; a server without OnShutdown refuses.
func TestShutdown(t *testing.T) {
	sock := filepath.Join(shortDir(t), "mcptray", SocketName)
	ln, err := Listen(sock, nil)
	if err != nil {
		t.Fatal(err)
	}
	serveFirstPipe(t, sock)
	eng := NewLocal(&registry.Config{Servers: []*registry.Server{demoServer(t, "demo")}}, &LocalOptions{
		Supervisor: &supervisor.Options{
			NoLogFiles: true, StopGrace: 200 * time.Millisecond, KillGrace: 300 * time.Millisecond,
			Environ: func(context.Context) []string { return os.Environ() },
		},
		NoWatch: true,
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	asked := make(chan struct{})
	srv := NewServer(eng, &ServerOptions{Socket: sock, OnShutdown: sync.OnceFunc(func() { close(asked) })})
	var wg sync.WaitGroup
	wg.Go(func() { eng.Run(ctx) })
	wg.Go(func() {
		if err := srv.Serve(ctx, ln); err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	// The daemon's run: a shutdown request ends it like a signal does.
	wg.Go(func() {
		select {
		case <-asked:
			cancel()
		case <-ctx.Done():
		}
	})
	stopped := make(chan struct{})
	go func() { wg.Wait(); close(stopped) }()

	c, err := Dial(bg, &ClientOptions{Socket: sock})
	if err != nil {
		t.Fatal(err)
	}
	pid := waitFor(t, c, "demo running", stateIs("demo", supervisor.StateRunning)).Server("demo").PID
	if err := c.Shutdown(bg); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	select {
	case <-stopped:
	case <-time.After(30 * time.Second):
		t.Fatal("the daemon did not stop after /v1/shutdown")
	}
	if alive(pid) {
		t.Errorf("server pid %d outlived the daemon's shutdown", pid)
	}
	if _, err := Dial(bg, &ClientOptions{Socket: sock}); !errors.Is(err, ErrNoDaemon) {
		t.Errorf("after shutdown, dialling gives %v, want no daemon", err)
	}

	// Without OnShutdown (an engine not meant to stop over the API).
	other := startDaemon(t, "")
	err = other.client.Shutdown(bg)
	var api *APIError
	if !errors.As(err, &api) || api.Status != http.StatusNotFound {
		t.Errorf("Shutdown of a server without OnShutdown: %v", err)
	}
}
