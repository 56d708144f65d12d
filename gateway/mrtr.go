package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"mcptray/internal/clock"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A client of the 2026-07-28 revision cannot be sent requests: a server
// that needs input answers input_required, naming what it needs, and the
// client retries its request with the answers. A server of the initialize
// era asks with requests of its own while it works. The gateway bridges
// the two: the server's request (sampling, elicitation, roots) becomes an
// input_required result for the client; the client's retry carries the
// answer back to the server, whose call has gone on waiting upstream.

// abandonAfter is how long a call waits for the client's retry before it
// is cancelled upstream.
const abandonAfter = 5 * time.Minute

// keepEnded is how long an ended round trip still answers a retry.
const keepEnded = time.Minute

// roundTrip is one upstream request of a 2026-07-28 client, across the
// client's retries.
type roundTrip struct {
	state  string
	call   *call
	cancel context.CancelCauseFunc // ends the upstream request

	done chan struct{} // the upstream request ended
	res  mcp.Result
	err  error

	asks chan *pendingAsk // the server's requests, as they come

	mu      sync.Mutex             // protects waiting and abandon
	waiting map[string]*pendingAsk // sent to the client, by key
	abandon func()                 // stops the wait for the client's retry
}

// errAbandoned ends an upstream request whose client did not retry within
// abandonAfter.
var errAbandoned = fmt.Errorf("no retry came within %v of the input request", abandonAfter)

// pendingAsk is one request of the server's waiting for the client.
type pendingAsk struct {
	key   string
	req   mcp.InputRequest
	reply chan mcp.InputResponse
}

// modernCall reports whether a request's session speaks 2026-07-28 (its
// requests carry the revision's _meta).
func modernCall(params mcp.Params) bool {
	if params == nil || isNil(params) {
		return false
	}
	v, _ := params.GetMeta()[protocolMetaPrefix+"protocolVersion"].(string)
	return v >= "2026-07-28"
}

// callerCaps are the capabilities a 2026-07-28 request declares.
func callerCaps(params mcp.Params) (sampling, elicitation, roots bool) {
	m, _ := params.GetMeta()[protocolMetaPrefix+"clientCapabilities"].(map[string]any)
	_, sampling = m["sampling"]
	_, elicitation = m["elicitation"]
	_, roots = m["roots"]
	return
}

// forwardRoundTrip relays a 2026-07-28 client's tools/call, prompts/get or
// resources/read: a new one starts upstream, a retry (requestState set)
// answers the server's requests and goes on waiting.
func (h *hub) forwardRoundTrip(ctx context.Context, cl *client, method string, params mcp.Params) (mcp.Result, error) {
	state, responses := retryOf(params)
	if state != "" {
		h.mu.Lock()
		rt := h.trips[state]
		h.mu.Unlock()
		if rt == nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "mcptray: unknown or expired requestState (the request ended; send it again without it)"}
		}
		rt.stopAbandon()
		rt.answer(responses)
		return h.awaitTrip(ctx, rt, method)
	}
	rt := &roundTrip{state: newState(), done: make(chan struct{}), asks: make(chan *pendingAsk, 8), waiting: map[string]*pendingAsk{}}
	// The upstream request outlives the client's first request: the answer
	// to it may be input_required.
	upCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	unlink := context.AfterFunc(h.g.life, func() { cancel(context.Canceled) }) // Gateway.Run ended
	rt.cancel = cancel
	c := &call{cl: cl, ctx: upCtx, method: method, started: h.g.opts.Clock.Now(), trip: rt}
	c.sampling, c.elicitation, c.roots = callerCaps(params)
	rt.call = c
	if p, ok := params.(*mcp.CallToolParamsRaw); ok {
		c.tool = p.Name
	}
	h.mu.Lock()
	h.trips[rt.state] = rt
	h.mu.Unlock()
	h.tripWG.Go(func() {
		defer unlink()
		defer cancel(context.Canceled)
		rt.res, rt.err = h.relayCall(upCtx, c, method, params)
		if rt.err != nil && errors.Is(context.Cause(upCtx), errAbandoned) {
			rt.res, rt.err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
				Message: "mcptray: the request was cancelled at the server: " + errAbandoned.Error() + " (send it again without requestState)"}
		}
		close(rt.done)
		// A retry may still come: the server's request that made the
		// result input_required can be one it made on its own, not for
		// this call, and the call may have ended meanwhile. The retry then
		// gets the call's result.
		clock.AfterFunc(h.g.opts.Clock, keepEnded, func() {
			h.mu.Lock()
			delete(h.trips, rt.state)
			h.mu.Unlock()
		})
	})
	return h.awaitTrip(ctx, rt, method)
}

// awaitTrip waits for the upstream answer or the server's next request,
// which becomes an input_required result.
func (h *hub) awaitTrip(ctx context.Context, rt *roundTrip, method string) (mcp.Result, error) {
	select {
	case <-rt.done:
		return rt.res, rt.err
	case a := <-rt.asks:
		reqs := mcp.InputRequestMap{a.key: a.req}
		rt.hold(a)
		// The server may ask several things at once.
		for more := true; more; {
			select {
			case b := <-rt.asks:
				reqs[b.key] = b.req
				rt.hold(b)
			default:
				more = false
			}
		}
		stop := clock.AfterFunc(h.g.opts.Clock, abandonAfter, func() { rt.cancel(errAbandoned) })
		rt.mu.Lock()
		rt.abandon = stop
		rt.mu.Unlock()
		go func() { <-rt.done; stop() }()
		return inputRequired(method, reqs, rt.state), nil
	case <-ctx.Done():
		rt.cancel(context.Canceled)
		return nil, ctx.Err()
	}
}

// stopAbandon stops the wait for a retry that has come: the next input
// request starts its own.
func (rt *roundTrip) stopAbandon() {
	rt.mu.Lock()
	stop := rt.abandon
	rt.abandon = nil
	rt.mu.Unlock()
	if stop != nil {
		stop()
	}
}

func (rt *roundTrip) hold(a *pendingAsk) {
	rt.mu.Lock()
	rt.waiting[a.key] = a
	rt.mu.Unlock()
}

// answer hands the client's answers to the server's waiting requests.
func (rt *roundTrip) answer(responses mcp.InputResponseMap) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for key, r := range responses {
		if a := rt.waiting[key]; a != nil {
			delete(rt.waiting, key)
			a.reply <- r
		}
	}
}

// ask sends the server's request to the round trip's client and waits for
// its answer (in the client's retry).
func (rt *roundTrip) ask(ctx context.Context, req mcp.InputRequest) (mcp.InputResponse, error) {
	a := &pendingAsk{key: newState()[:12], req: req, reply: make(chan mcp.InputResponse, 1)}
	select {
	case rt.asks <- a:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case r := <-a.reply:
		return r, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func retryOf(params mcp.Params) (string, mcp.InputResponseMap) {
	switch p := params.(type) {
	case *mcp.CallToolParamsRaw:
		return p.RequestState, p.InputResponses
	case *mcp.GetPromptParams:
		return p.RequestState, p.InputResponses
	case *mcp.ReadResourceParams:
		return p.RequestState, p.InputResponses
	}
	return "", nil
}

func inputRequired(method string, reqs mcp.InputRequestMap, state string) mcp.Result {
	switch method {
	case "prompts/get":
		return &mcp.GetPromptResult{InputRequests: reqs, RequestState: state}
	case "resources/read":
		return &mcp.ReadResourceResult{InputRequests: reqs, RequestState: state}
	}
	return &mcp.CallToolResult{InputRequests: reqs, RequestState: state}
}

func newState() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// sampleVia, elicitVia and rootsVia are the server's requests as a round
// trip's client answers them.
func sampleVia(ctx context.Context, rt *roundTrip, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	r, err := rt.ask(ctx, p)
	if err != nil {
		return nil, err
	}
	switch v := r.(type) {
	case *mcp.CreateMessageResult:
		return v, nil
	case *mcp.CreateMessageWithToolsResult:
		out := &mcp.CreateMessageResult{Meta: v.Meta, Model: v.Model, Role: v.Role, StopReason: v.StopReason}
		if len(v.Content) > 0 {
			out.Content = v.Content[0]
		}
		return out, nil
	}
	return nil, fmt.Errorf("the client answered sampling with %T", r)
}

func elicitVia(ctx context.Context, rt *roundTrip, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	r, err := rt.ask(ctx, p)
	if err != nil {
		return nil, err
	}
	if v, ok := r.(*mcp.ElicitResult); ok {
		return v, nil
	}
	return nil, fmt.Errorf("the client answered elicitation with %T", r)
}

func rootsVia(ctx context.Context, rt *roundTrip) (*mcp.ListRootsResult, error) {
	r, err := rt.ask(ctx, &mcp.ListRootsParams{})
	if err != nil {
		return nil, err
	}
	if v, ok := r.(*mcp.ListRootsResult); ok {
		return v, nil
	}
	return nil, fmt.Errorf("the client answered roots/list with %T", r)
}
