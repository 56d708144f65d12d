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

	applied, unsettled, stalls := 0, 0, 0
	for range 40 {
		truncated := make(chan struct{})
		saved := make(chan error, 1)
		var stalled bool // the writer paused longer than the save it stands for
		go func() {
			// The file is empty from inside OpenFile: t0 is taken before
			// it, so a stall between the truncation and the first write
			// is counted too.
			t0 := time.Now()
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
			if err != nil {
				close(truncated)
				saved <- err
				return
			}
			close(truncated)
			time.Sleep(2 * time.Millisecond) // the editor is writing
			_, err = f.WriteString(full[:len(full)/2])
			t1 := time.Now() // half written from here
			time.Sleep(2 * time.Millisecond)
			if err == nil {
				_, err = f.WriteString(full[len(full)/2:])
			}
			// A loaded machine can leave this goroutine unscheduled for
			// longer than registry's settle gap (30 ms) while the file is
			// empty or half written: then it really did stand still for
			// that long, which is not the save this test is about (each
			// step takes about 2 ms).
			stalled = t1.Sub(t0) > 15*time.Millisecond || time.Since(t1) > 15*time.Millisecond
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			saved <- err
		}()
		<-truncated
		res, err := l.Reload(ctx)
		serr := <-saved
		if serr != nil {
			t.Fatal(serr)
		}
		if stalled {
			// The watcher may have applied what stood still, whatever
			// the reload by hand saw.
			stalls++
		}
		switch {
		case errors.Is(err, registry.ErrUnsettled):
			unsettled++
		case err != nil:
			t.Fatalf("reload during a save: %v", err)
		case res.Servers != n && stalled:
			t.Logf("the writer stalled past the settle gap; the reload applied what stood still (%d servers)", res.Servers)
			write(t, path, full)
			if _, err := l.Reload(ctx); err != nil {
				t.Fatal(err)
			}
		case res.Servers != n:
			t.Errorf("a reload during a save applied %d servers, want %d", res.Servers, n)
		default:
			applied++
		}
	}
	if applied == 0 {
		t.Fatalf("no reload applied (%d unsettled): nothing was tested", unsettled)
	}
	t.Logf("%d reloads applied, %d found the file still changing, %d met a stalled writer", applied, unsettled, stalls)
	if got := len(l.Snapshot().Servers); got != n {
		t.Errorf("%d servers after the saves, want %d", got, n)
	}
	if stalls > 0 {
		return // a stalled writer's half file was applied, as it should be
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
