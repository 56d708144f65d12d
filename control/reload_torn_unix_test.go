//go:build unix

package control

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"mcptray/registry"
)

// TestReloadDuringInPlaceSave: a writer saves servers.toml in place over
// and over (truncate, then the text in two pieces, as editors without
// atomic saves do) while reloads run, by hand and from the watcher. No
// reload applies a half-written file: every one that applies sees all the
// servers, and no server is ever removed (so none is restarted).
func TestReloadDuringInPlaceSave(t *testing.T) {
	const n = 6
	var text strings.Builder
	for i := range n {
		text.WriteString(entry(fmt.Sprintf("s%d", i)))
	}
	full := text.String()
	path := t.TempDir() + "/servers.toml"
	write(t, path, full)
	cfg, err := registry.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var logMu sync.Mutex
	var logs []string
	l := NewLocal(cfg, &LocalOptions{Debounce: 5 * time.Millisecond, Logf: func(f string, a ...any) {
		logMu.Lock()
		logs = append(logs, fmt.Sprintf(f, a...))
		logMu.Unlock()
	}})
	following := make(chan struct{})
	l.following = func() { close(following) }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { l.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	<-following

	applied, unsettled := 0, 0
	for range 40 {
		truncated := make(chan struct{})
		saved := make(chan error, 1)
		go func() {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
			if err != nil {
				close(truncated)
				saved <- err
				return
			}
			close(truncated)
			time.Sleep(2 * time.Millisecond) // the editor is writing
			_, err = f.WriteString(full[:len(full)/2])
			time.Sleep(2 * time.Millisecond)
			if err == nil {
				_, err = f.WriteString(full[len(full)/2:])
			}
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			saved <- err
		}()
		<-truncated
		res, err := l.Reload(ctx)
		switch {
		case errors.Is(err, registry.ErrUnsettled):
			unsettled++
		case err != nil:
			t.Fatalf("reload during a save: %v", err)
		case res.Servers != n:
			t.Errorf("a reload during a save applied %d servers, want %d", res.Servers, n)
		default:
			applied++
		}
		if err := <-saved; err != nil {
			t.Fatal(err)
		}
	}
	if applied == 0 {
		t.Fatalf("no reload applied (%d unsettled): nothing was tested", unsettled)
	}
	t.Logf("%d reloads applied, %d found the file still changing", applied, unsettled)
	if got := len(l.Snapshot().Servers); got != n {
		t.Errorf("%d servers after the saves, want %d", got, n)
	}
	trs, _ := l.Transitions(0)
	for _, tr := range trs {
		if strings.Contains(tr.Reason, "removed") {
			t.Errorf("a server was removed by a reload: %+v", tr)
		}
	}
	logMu.Lock()
	defer logMu.Unlock()
	for _, line := range logs {
		if strings.HasPrefix(line, "applied") && !strings.HasSuffix(line, fmt.Sprintf(": %d servers", n)) {
			t.Errorf("the watcher applied a half-written file: %s", line)
		}
	}
}
