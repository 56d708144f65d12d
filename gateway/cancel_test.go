//go:build unix

package gateway_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/healthcheck"
)

// A call its client cancels is traced as cancelled, with the
// notifications/cancelled frames both ways, and counted as cancelled, not
// as an error of the server's.
func TestCancellationIsNoServerError(t *testing.T) {
	e := newEnv(t)
	cs := e.connect(nil, "c")
	mark := filepath.Join(t.TempDir(), "cancelled")
	began := filepath.Join(filepath.Dir(mark), "began")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"steps": -1, "mark": mark, "began": began}})
		done <- err
	}()
	// The server has the call (the gateway counting it in flight is
	// not enough: it may not have sent it yet).
	waitFor(t, "the call to reach the server", func() bool { _, err := os.Stat(began); return err == nil })
	cancel()
	<-done
	waitFor(t, "the server to see the cancellation", func() bool { _, err := os.Stat(mark); return err == nil })
	waitFor(t, "the call to end", func() bool { return e.gw.Servers()[0].Sessions[0].InFlight == 0 })

	u := e.gw.Servers()[0].Usage.Methods["tools/call"]
	if u.Cancelled != 1 || u.Errors != 0 {
		t.Fatalf("tools/call counted %+v; want one cancelled and no error", u)
	}
	if s := e.gw.Servers()[0].Sessions[0]; s.Errors != 0 {
		t.Fatalf("the session counts %d errors", s.Errors)
	}
	frames, _, _ := e.gw.TraceSince("t", 0)
	var in, out, cancelled bool
	for _, f := range frames {
		switch {
		case f.Kind == "error" && strings.Contains(f.Body, "context canceled"):
			t.Errorf("the trace shows the cancellation as an error: %+v", f)
		case f.Kind == "cancelled":
			cancelled = true
		case f.Method == "notifications/cancelled" && f.Dir == healthcheck.DirClientIn:
			in = true
		case f.Method == "notifications/cancelled" && f.Dir == healthcheck.DirServerOut:
			out = true
		}
	}
	if !in || !out || !cancelled {
		t.Fatalf("trace: client's notifications/cancelled %v, mcptray's to the server %v, a cancelled frame %v; want all", in, out, cancelled)
	}
}
