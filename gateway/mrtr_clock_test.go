//go:build unix

package gateway_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/gateway"
	"mcptray/internal/clock/fakeclock"
	"mcptray/internal/testenv"
)

// The gateway's round-trip timers, on its clock: a 2026-07-28 client's
// call waits abandonAfter (5 minutes) for each retry, counted from the
// latest input request; a call nobody retried is cancelled at the server
// and says why; an ended call still answers a retry for keepEnded (a
// minute), then its requestState is unknown.
func TestRoundTripTimersOnTheGatewaysClock(t *testing.T) {
	const abandonAfter, keepEnded = 5 * time.Minute, time.Minute
	fc := fakeclock.New()
	e := newEnvAll(t, nil, nil, &gateway.Options{Clock: fc})
	e.session = &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"}
	// The client samples (so the server may ask it to) and its retries
	// are the test's: no SDK retry loop.
	c := mcp.NewClient(&mcp.Implementation{Name: "modern"}, &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return nil, errors.New("the test answers through its retries")
		},
	})
	cs, _ := e.connectClient(c)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	answer := func(res *mcp.CallToolResult, text string) mcp.InputResponseMap {
		t.Helper()
		if len(res.InputRequests) != 1 || res.RequestState == "" {
			t.Fatalf("answer %+v; want one input request and a requestState", res)
		}
		out := mcp.InputResponseMap{}
		for k := range res.InputRequests {
			out[k] = &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: text}}
		}
		return out
	}
	call := func(name string, state string, responses mcp.InputResponseMap) (*mcp.CallToolResult, error) {
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"message": "x"}, RequestState: state, InputResponses: responses})
	}

	// Two asks, each retried 4 minutes later: 8 minutes in all, and the
	// call goes through.
	res, err := call("sample_twice", "", nil)
	if err != nil || len(res.InputRequests) == 0 {
		t.Fatalf("sample_twice: %+v, %v; want an input request", res, err)
	}
	state := res.RequestState
	fc.WaitTimer(t, abandonAfter)
	fc.Advance(4 * time.Minute)
	if res, err = call("sample_twice", state, answer(res, "one")); err != nil {
		t.Fatalf("the first retry: %v", err)
	}
	fc.Advance(4 * time.Minute) // past the first ask's five minutes
	if res, err = call("sample_twice", state, answer(res, "two")); err != nil {
		t.Fatalf("the second retry, 8 minutes after the first ask: %v", err)
	}
	if got := resultText(res); got != "sampled: one, two" {
		t.Fatalf("the call's result %q (%+v)", got, res)
	}

	// The ended call answers a retry for a minute, then not.
	fc.WaitTimer(t, keepEnded)
	if again, err := call("sample_twice", state, nil); err != nil || resultText(again) != "sampled: one, two" {
		t.Fatalf("a retry within the minute: %+v, %v; want the call's result", again, err)
	}
	fc.Advance(keepEnded)
	testenv.Eventually(t, 30*time.Second, func() bool {
		_, err := call("sample_twice", state, nil)
		return err != nil && strings.Contains(err.Error(), "unknown or expired requestState")
	}, "the requestState still answers a minute after its call ended")

	// No retry: five minutes later the call is cancelled at the server,
	// and a late retry says so.
	res, err = call("sample", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	fc.WaitTimer(t, abandonAfter)
	fc.Advance(abandonAfter)
	waitFor(t, "the abandoned call to end at the server", func() bool { return e.gw.Servers()[0].Usage.Tools["sample"].Calls == 1 })
	_, err = call("sample", res.RequestState, answer(res, "late"))
	if err == nil || !strings.Contains(err.Error(), "no retry came within 5m0s") {
		t.Fatalf("a retry after the call was abandoned: %v; want the reason", err)
	}
}

func resultText(res *mcp.CallToolResult) string {
	if res == nil || len(res.Content) == 0 {
		return ""
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}
