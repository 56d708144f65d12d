//go:build unix

package gateway_test

import (
	"context"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/gateway"
	"mcptray/internal/testenv"
)

// gate is a client's end of a session's stream that can stop reading, as
// a suspended terminal client does: what the gateway writes then waits.
type gate struct {
	r    io.Reader
	mu   sync.Mutex
	shut chan struct{} // closed while reading goes on; nil: frozen
}

func newGate(r io.Reader) *gate {
	g := &gate{r: r, shut: make(chan struct{})}
	close(g.shut)
	return g
}

func (g *gate) freeze() {
	g.mu.Lock()
	g.shut = make(chan struct{})
	g.mu.Unlock()
}

func (g *gate) Read(p []byte) (int, error) {
	g.mu.Lock()
	ch := g.shut
	g.mu.Unlock()
	<-ch
	return g.r.Read(p)
}

// connectGated is a session whose client can stop reading.
func (e *env) connectGated(c *mcp.Client) (*mcp.ClientSession, *gate) {
	e.t.Helper()
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	e.t.Cleanup(func() { cw.Close(); cr.Close(); sw.Close() })
	go func() {
		_ = e.gw.Serve(e.ctx, "t", gateway.LineTransport(sr, sw, sw), gateway.Peer{Via: "stdio", PID: 2})
	}()
	g := newGate(cr)
	ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: io.NopCloser(g), Writer: cw}, e.session)
	if err != nil {
		e.t.Fatalf("connecting through the gateway: %v", err)
	}
	return cs, g
}

// A server flooding log messages to 50 sessions while one more session's
// client reads nothing: the 50 get every message, the frozen one loses
// what does not fit its bounded queue (counted, and said in the trace),
// and the server's call ends.
func TestFrozenClientHoldsUpNoOne(t *testing.T) {
	e := newEnv(t)
	const sessions, messages = 50, 300
	counts := make([]atomic.Int64, sessions)
	var all []*mcp.ClientSession
	for i := range sessions {
		cs := e.connect(&mcp.ClientOptions{LoggingMessageHandler: func(context.Context, *mcp.LoggingMessageRequest) {
			counts[i].Add(1)
		}}, "reader")
		if err := cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
			t.Fatal(err)
		}
		all = append(all, cs)
	}
	frozen, g := e.connectGated(mcp.NewClient(&mcp.Implementation{Name: "frozen", Version: "1"}, nil))
	if err := frozen.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	g.freeze()

	// The trace is followed as it goes: the flood's own frames soon push
	// any one frame out of its ring.
	var said atomic.Bool
	go func() {
		var next uint64
		for e.ctx.Err() == nil {
			frames, n, wake := e.gw.TraceSince("t", next)
			next = n
			for _, f := range frames {
				if f.Kind == "dropped" && strings.Contains(f.Body, "reads too slowly") {
					said.Store(true)
					return
				}
			}
			select {
			case <-wake:
			case <-e.ctx.Done():
			}
		}
	}()

	start := time.Now()
	if got := callText(t, all[0], "flood", map[string]any{"count": messages, "every": 1000}); got != "flooded" {
		t.Fatalf("flood = %q", got)
	}
	// Many deliveries on a loaded machine: minutes, not seconds.
	testenv.Eventually(t, 3*time.Minute, func() bool {
		for i := range counts {
			if counts[i].Load() < messages {
				return false
			}
		}
		return true
	}, "timed out waiting for every reading session to get every message (%d each)", messages)
	took := time.Since(start)
	t.Logf("%d messages to %d sessions beside a frozen one: %s (%.0f deliveries/s)", messages, sessions, took.Round(time.Millisecond), float64(messages*sessions)/took.Seconds())

	for _, s := range e.gw.Servers()[0].Sessions {
		if s.Dropped != 0 {
			t.Errorf("session %s (%s) dropped %d notifications; its queue holds more", s.ID, s.ClientName, s.Dropped)
		}
	}

	// The readers stop listening to info; the frozen session alone is
	// flooded, past its bounded queues: the gateway's (1024 messages),
	// its connection's (256), what its writer took before it stuck (up
	// to 256) and the message its client read. Everything else is dropped, and the server's call ends.
	for _, cs := range all {
		if err := cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "error"}); err != nil {
			t.Fatal(err)
		}
	}
	const more = 3000
	if got := callText(t, all[0], "flood", map[string]any{"count": more}); got != "flooded" {
		t.Fatalf("flood = %q", got)
	}
	var dropped int64
	testenv.Eventually(t, 3*time.Minute, func() bool {
		for _, s := range e.gw.Servers()[0].Sessions {
			if s.ClientName == "frozen" {
				dropped = s.Dropped
			}
		}
		return dropped >= messages+more-1024-2*256-2
	}, "timed out waiting for the frozen session to drop what does not fit (at least %d)", messages+more-1024-2*256-2)
	if dropped > messages+more {
		t.Fatalf("the frozen session dropped %d of %d", dropped, messages+more)
	}
	if !said.Load() {
		waitFor(t, "the trace to say the frozen session lost notifications", said.Load)
	}
}
