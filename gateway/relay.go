package gateway

// The relay: a client session's request sent to the upstream session
// (riding out restarts), its params and result adjusted per hop, and the
// requests in flight recorded.

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/healthcheck"
	"mcptray/supervisor"
)

var tokenSeq atomic.Uint64

// forward relays one request and records it.
func (h *hub) forward(ctx context.Context, cl *client, method string, params mcp.Params) (mcp.Result, error) {
	if modernCall(params) && (method == "tools/call" || method == "prompts/get" || method == "resources/read") {
		return h.forwardRoundTrip(ctx, cl, method, params)
	}
	c := &call{cl: cl, ctx: ctx, method: method, started: h.g.opts.Clock.Now()}
	if p, ok := params.(*mcp.CallToolParamsRaw); ok {
		c.tool = p.Name
	}
	return h.relayCall(ctx, c, method, params)
}

// relayCall sends call c upstream, riding out restarts, and records it.
func (h *hub) relayCall(ctx context.Context, c *call, method string, params mcp.Params) (mcp.Result, error) {
	h.begin(c)
	h.g.up.Touch(h.name)
	up := h.upstreamParams(c, params)
	var res mcp.Result
	var err error
	for {
		var stale bool
		err = h.use(ctx, func(ctx context.Context, sess supervisor.Session) error {
			u, err := upstreamOf(sess)
			if err != nil {
				return err
			}
			cs := u.Client()
			if isDone(h.doneOf(cs)) {
				// The process is gone and the supervisor has not
				// noticed yet: nothing was sent, wait for the next one.
				stale = true
				return nil
			}
			h.noteUpstream(ctx, u)
			res, err = h.sendAnswering(ctx, cs, c, method, up)
			if err == nil {
				res = downstreamResult(res)
			}
			if err != nil && ctx.Err() == nil && !answered(err) && endsSoon(h.doneOf(cs)) {
				return errUpstreamGone
			}
			return err
		})
		if !stale {
			break
		}
		if werr := h.awaitChange(ctx); werr != nil {
			err = werr
			break
		}
	}
	err = h.rpcError(ctx, err)
	if c.upToken != "" {
		// The server's progress before its answer goes out before it.
		h.flush(c.cl, flushWait)
	}
	h.end(c, res, err)
	return res, err
}

// use runs fn with the server's live session like [Upstreams.Use], and
// rides out a restart: while the server is being restarted (unhealthy,
// or waiting out its backoff), the request waits with it (bounded by the client's own
// deadline) instead of failing.
func (h *hub) use(ctx context.Context, fn func(ctx context.Context, sess supervisor.Session) error) error {
	for {
		ch := h.g.up.Watch()
		err := h.g.up.Use(ctx, h.name, fn)
		var nr *supervisor.NotReadyError
		if !errors.As(err, &nr) || (nr.State != supervisor.StateBackoff && nr.State != supervisor.StateUnhealthy) {
			return err
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return err
		}
	}
}

// awaitChange waits for the supervisor to publish a change.
func (h *hub) awaitChange(ctx context.Context) error {
	select {
	case <-h.g.up.Watch():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// doneOf returns a channel closed when cs ends. An ended session's entry
// stays until a newer session is relayed to (see [hub.resync]): the
// supervisor may hand out an ended session before it notices, and the
// closed channel is how a request knows not to use it.
func (h *hub) doneOf(cs *mcp.ClientSession) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done == nil {
		h.done = map[*mcp.ClientSession]chan struct{}{}
	}
	if ch, ok := h.done[cs]; ok {
		return ch
	}
	ch := make(chan struct{})
	h.done[cs] = ch
	go func() {
		_ = cs.Wait()
		close(ch)
	}()
	return ch
}

// answered reports whether err is the server's own answer.
func answered(err error) bool {
	var wire *jsonrpc.Error
	return errors.As(err, &wire)
}

func isDone(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// endsSoon reports whether a session whose request just failed ends: a
// failure of the connection ends it at once, a server's error does not.
func endsSoon(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	case <-time.After(100 * time.Millisecond):
		return false
	}
}

// send is one request on the upstream session.
func send(ctx context.Context, cs *mcp.ClientSession, method string, params mcp.Params) (mcp.Result, error) {
	switch p := params.(type) {
	case *mcp.CallToolParams:
		return cs.CallTool(ctx, p)
	case *mcp.ListToolsParams:
		return cs.ListTools(ctx, p)
	case *mcp.ListResourcesParams:
		return cs.ListResources(ctx, p)
	case *mcp.ListResourceTemplatesParams:
		return cs.ListResourceTemplates(ctx, p)
	case *mcp.ReadResourceParams:
		return cs.ReadResource(ctx, p)
	case *mcp.ListPromptsParams:
		return cs.ListPrompts(ctx, p)
	case *mcp.GetPromptParams:
		return cs.GetPrompt(ctx, p)
	case *mcp.CompleteParams:
		return cs.Complete(ctx, p)
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("mcptray cannot relay %s", method)}
}

// upstreamParams are a request's params as the server is sent them: the
// per-hop protocol fields of _meta left to the upstream session, and the
// progress token replaced by one of the gateway's.
func (h *hub) upstreamParams(c *call, params mcp.Params) mcp.Params {
	var meta mcp.Meta
	if params != nil && !isNil(params) {
		meta = upstreamMeta(params.GetMeta())
	}
	if tok, ok := meta["progressToken"]; ok && tok != nil {
		c.token = tok
		c.upToken = fmt.Sprintf("mcptray-gw-%d", tokenSeq.Add(1))
		meta["progressToken"] = c.upToken
		h.mu.Lock()
		h.progress[c.upToken] = c
		h.mu.Unlock()
	}
	if p, ok := params.(*mcp.CallToolParamsRaw); ok {
		out := &mcp.CallToolParams{Meta: meta, Name: p.Name}
		if len(p.Arguments) > 0 {
			out.Arguments = p.Arguments
		}
		return out
	}
	return replaceMeta(params, meta)
}

// replaceMeta is a copy of params, of a request the gateway relays (see
// send), with _meta replaced; other params as they are.
func replaceMeta(params mcp.Params, meta mcp.Meta) mcp.Params {
	switch p := params.(type) {
	case *mcp.CallToolParams:
		return withMeta(p, meta)
	case *mcp.ListToolsParams:
		return withMeta(p, meta)
	case *mcp.ListResourcesParams:
		return withMeta(p, meta)
	case *mcp.ListResourceTemplatesParams:
		return withMeta(p, meta)
	case *mcp.ListPromptsParams:
		return withMeta(p, meta)
	case *mcp.ReadResourceParams:
		return withMeta(p, meta)
	case *mcp.GetPromptParams:
		return withMeta(p, meta)
	case *mcp.CompleteParams:
		return withMeta(p, meta)
	}
	return params
}

// withMeta is a copy of *p (its zero value for no params) with _meta
// replaced.
func withMeta[T any, P interface {
	*T
	mcp.Params
}](p P, meta mcp.Meta) mcp.Params {
	var q T
	if p != nil {
		q = *p
	}
	P(&q).SetMeta(meta)
	return P(&q)
}

// isNil reports whether p is a typed nil (a list request without params).
func isNil(p mcp.Params) bool {
	v := reflect.ValueOf(p)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// upstreamMeta copies m without the fields each hop sets for itself
// (the 2026-07-28 revision's io.modelcontextprotocol/ keys).
func upstreamMeta(m mcp.Meta) mcp.Meta {
	out := mcp.Meta{}
	for k, v := range m {
		if len(k) > len(protocolMetaPrefix) && k[:len(protocolMetaPrefix)] == protocolMetaPrefix {
			continue
		}
		out[k] = v
	}
	return out
}

const protocolMetaPrefix = "io.modelcontextprotocol/"

// progressGrace is how long a call's progress token is still routed after
// the call ended.
const progressGrace = 5 * time.Second

// begin and end keep the requests in flight, for routing the server's
// own requests and progress, and the statistics.
func (h *hub) begin(c *call) {
	h.mu.Lock()
	h.inflight = append(h.inflight, c)
	h.mu.Unlock()
	c.cl.active(c.started)
}

func (h *hub) end(c *call, res mcp.Result, err error) {
	h.mu.Lock()
	if i := slices.Index(h.inflight, c); i >= 0 {
		h.inflight = slices.Delete(h.inflight, i, i+1)
	}
	h.mu.Unlock()
	if c.upToken != "" {
		// The upstream session may hand on the server's last progress
		// after its answer (the SDK reads answers ahead of notifications):
		// it still goes to the session for a moment.
		time.AfterFunc(progressGrace, func() {
			h.mu.Lock()
			delete(h.progress, c.upToken)
			h.mu.Unlock()
		})
	}
	failed := err != nil
	if r, ok := res.(*mcp.CallToolResult); ok && r != nil && r.IsError {
		failed = true
	}
	// A request its client cancelled (or left) is counted as cancelled,
	// not as an error of the server's; the SDK told the server with
	// notifications/cancelled, which passes no middleware: the trace
	// says it here.
	cancelled := c.ctx.Err() != nil
	if cancelled {
		failed = false
		h.trace.add(Frame{Time: h.g.opts.Clock.Now(), Dir: healthcheck.DirServerOut, Kind: "notification", Method: "notifications/cancelled",
			Body: fmt.Sprintf(`{"request":%q,"reason":"the client cancelled it or went away"}`, c.method)})
	}
	h.stats.record(c.method, c.tool, h.g.opts.Clock.Now().Sub(c.started), failed, cancelled)
	c.cl.done(failed)
}

// latest is the request in flight a server's own request goes to: the one
// sent last whose session can take it.
func (h *hub) latest(can func(*call) bool) *call {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := len(h.inflight) - 1; i >= 0; i-- {
		if c := h.inflight[i]; c.ctx.Err() == nil && (can == nil || can(c)) {
			return c
		}
	}
	return nil
}

// downstreamResult is a server's result as a client session is sent it:
// without what belongs to the upstream hop (the 2026-07-28 result type and
// io.modelcontextprotocol/ fields of _meta); the front adds its own for a
// session of that revision.
func downstreamResult(res mcp.Result) mcp.Result {
	switch r := res.(type) {
	case *mcp.CallToolResult:
		return &mcp.CallToolResult{Meta: stripMeta(r.Meta), Content: r.Content, StructuredContent: r.StructuredContent, IsError: r.IsError}
	case *mcp.ReadResourceResult:
		return &mcp.ReadResourceResult{Meta: stripMeta(r.Meta), Cacheable: cacheable(r.Cacheable), Contents: r.Contents}
	case *mcp.GetPromptResult:
		return &mcp.GetPromptResult{Meta: stripMeta(r.Meta), Description: r.Description, Messages: r.Messages}
	case *mcp.ListToolsResult:
		r.Meta, r.ResultType, r.Cacheable = stripMeta(r.Meta), "", cacheable(r.Cacheable)
	case *mcp.ListResourcesResult:
		r.Meta, r.ResultType, r.Cacheable = stripMeta(r.Meta), "", cacheable(r.Cacheable)
	case *mcp.ListResourceTemplatesResult:
		r.Meta, r.ResultType, r.Cacheable = stripMeta(r.Meta), "", cacheable(r.Cacheable)
	case *mcp.ListPromptsResult:
		r.Meta, r.ResultType, r.Cacheable = stripMeta(r.Meta), "", cacheable(r.Cacheable)
	case *mcp.CompleteResult:
		r.Meta, r.ResultType = stripMeta(r.Meta), ""
	}
	return res
}

// cacheable is a result's cache hints as the SDK sends them, which it
// always does: an unset scope is "public", its default (a server of the
// initialize era sets none; clients refuse an empty scope).
func cacheable(c mcp.Cacheable) mcp.Cacheable {
	if c.CacheScope == "" {
		c.CacheScope = "public"
	}
	return c
}

// stripMeta is m without the per-hop protocol fields (nil when nothing is
// left).
func stripMeta(m mcp.Meta) mcp.Meta {
	out := upstreamMeta(m)
	if len(out) == 0 {
		return nil
	}
	return out
}
