//go:build !windows

// Not on Windows: a file open for reading there cannot be replaced, and
// this test reads while others write.

package supervisor

import (
	"encoding/json"
	"log/slog"
	"os"
	"sync"
	"testing"
)

// TestRecordsConcurrentChanges: servers that start and stop at once each
// find the file holding their change when add or remove returns, though
// the changes share writes, and the file is gone once nothing runs.
func TestRecordsConcurrentChanges(t *testing.T) {
	if self().Start == 0 {
		t.Skip("no process start times here: nothing is recorded")
	}
	r := newProcRecords(t.TempDir(), slog.New(slog.DiscardHandler))
	read := func() map[string]bool {
		b, err := os.ReadFile(r.path)
		if os.IsNotExist(err) {
			return nil
		}
		if err != nil {
			t.Fatal(err)
		}
		var rf recordFile
		if err := json.Unmarshal(b, &rf); err != nil {
			t.Fatalf("the record does not parse: %v\n%s", err, b)
		}
		out := map[string]bool{}
		for _, p := range rf.Procs {
			out[p.Token] = true
		}
		return out
	}
	const n = 50
	recs := make([]*procRecord, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var missing []string
	for i := range n {
		wg.Go(func() {
			token := newToken()
			recs[i] = r.add("s", os.Getpid(), token, "")
			if got := read(); !got[token] {
				mu.Lock()
				missing = append(missing, token)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(missing) > 0 {
		t.Fatalf("add returned before the file held %d of the records: %v", len(missing), missing)
	}
	if got := read(); len(got) != n {
		t.Fatalf("the file holds %d records, want %d", len(got), n)
	}
	for i := range n {
		wg.Go(func() {
			token := recs[i].Token
			r.remove(recs[i])
			if got := read(); got[token] {
				mu.Lock()
				missing = append(missing, token)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(missing) > 0 {
		t.Fatalf("remove returned before the file lost %d of the records", len(missing))
	}
	if _, err := os.Stat(r.path); !os.IsNotExist(err) {
		t.Fatalf("the record file is left once nothing runs: %v", err)
	}
}
