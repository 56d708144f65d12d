package gateway

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/healthcheck"
	"mcptray/supervisor"
)

// hub is the gateway's side of one server: its fronts, the client
// sessions connected to them, the requests in flight, and what the
// upstream has been told on their behalf.
type hub struct {
	g     *Gateway
	name  string
	trace *traceRing
	stats stats

	mu       sync.Mutex // protects the fields below
	front    *mcp.Server
	frontID  string             // identity key front was made for
	frontCS  *mcp.ClientSession // the upstream session front was last checked against
	fronts   []*mcp.Server      // every front that may still have sessions
	sessions map[*mcp.ServerSession]*client
	inflight []*call          // in the order they were sent
	progress map[string]*call // by the token sent upstream
	elicits  map[string]*client
	subs     map[string]int                       // resource URI -> subscribed sessions
	level    mcp.LoggingLevel                     // what upstream was last told ("" never)
	upstream Upstream                             // the session last relayed to
	tools    []string                             // the upstream's tool names, as last seen
	syncing  bool                                 // a followUpstream is running
	done     map[*mcp.ClientSession]chan struct{} // closed when the session ends
	trips    map[string]*roundTrip                // by requestState

	wg sync.WaitGroup // followUpstream goroutines
}

// call is one request of a client session in flight upstream.
type call struct {
	cl      *client
	ctx     context.Context // the request's handler context downstream
	method  string
	tool    string // tools/call's
	token   any    // the client's progress token (nil: none)
	upToken string // the token sent upstream in its place
	started time.Time
	// trip is set for a 2026-07-28 client's request, with what that
	// request declared it can answer.
	trip                         *roundTrip
	sampling, elicitation, roots bool
}

// can reports whether the call's client can answer a server's request.
func (c *call) canSample() bool {
	if c.trip != nil {
		return c.sampling
	}
	return c.cl.canSample()
}

func (c *call) canElicit() bool {
	if c.trip != nil {
		return c.elicitation
	}
	return c.cl.canElicit()
}

func (c *call) hasRoots() bool {
	if c.trip != nil {
		return c.roots
	}
	return c.cl.hasRoots()
}

var tokenSeq atomic.Uint64

func newHub(g *Gateway, name string) *hub {
	return &hub{
		g: g, name: name, trace: newTraceRing(g.opts.TraceFrames),
		sessions: map[*mcp.ServerSession]*client{}, progress: map[string]*call{},
		elicits: map[string]*client{}, subs: map[string]int{}, trips: map[string]*roundTrip{},
	}
}

// frontFor returns the front for the upstream as it is now, waiting for
// the server to be ready.
func (h *hub) frontFor(ctx context.Context) (*mcp.Server, error) {
	var front *mcp.Server
	err := h.use(ctx, func(_ context.Context, sess supervisor.Session) error {
		up, err := upstreamOf(sess)
		if err != nil {
			return err
		}
		front = h.frontFor1(up.Client())
		return nil
	})
	if err != nil {
		return nil, h.rpcError(ctx, err)
	}
	return front, nil
}

// frontFor1 is the front for upstream session cs (its identity is read
// once per session: the HTTP endpoint asks on every request).
func (h *hub) frontFor1(cs *mcp.ClientSession) *mcp.Server {
	h.mu.Lock()
	if h.front != nil && h.frontCS == cs {
		f := h.front
		h.mu.Unlock()
		return f
	}
	h.mu.Unlock()
	f := h.frontOf(identityOf(cs))
	h.mu.Lock()
	if h.front == f {
		h.frontCS = cs
	}
	h.mu.Unlock()
	return f
}

// frontOf returns the front for id, making it when the upstream's
// identity changed (a new version after a restart): sessions made before
// keep their front and go on being relayed.
func (h *hub) frontOf(id identity) *mcp.Server {
	key := id.key()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.front != nil && h.frontID == key {
		return h.front
	}
	h.front, h.frontID = h.newFront(id), key
	h.fronts = append(h.fronts, h.front)
	return h.front
}

// newFront makes the server the client sessions see: the upstream's
// identity and capabilities, every request relayed.
func (h *hub) newFront(id identity) *mcp.Server {
	impl := id.Info
	if impl == nil {
		impl = &mcp.Implementation{Name: h.name}
	}
	caps := &mcp.ServerCapabilities{}
	if id.Capabilities != nil {
		c := *id.Capabilities
		caps = &c
	}
	// The gateway tells sessions when a restarted server's lists differ,
	// whatever the server itself promises.
	if caps.Tools != nil {
		t := *caps.Tools
		t.ListChanged = true
		caps.Tools = &t
	}
	if caps.Prompts != nil {
		p := *caps.Prompts
		p.ListChanged = true
		caps.Prompts = &p
	}
	if caps.Resources != nil {
		r := *caps.Resources
		r.ListChanged = true
		caps.Resources = &r
	}
	opts := &mcp.ServerOptions{
		Instructions:            id.Instructions,
		Capabilities:            caps,
		Logger:                  h.g.opts.Logger,
		InitializedHandler:      h.initialized,
		RootsListChangedHandler: h.rootsChanged,
	}
	if caps.Resources != nil && caps.Resources.Subscribe {
		opts.SubscribeHandler = h.subscribe
		opts.UnsubscribeHandler = h.unsubscribe
	}
	s := mcp.NewServer(impl, opts)
	s.AddReceivingMiddleware(h.traceIn, h.relay)
	s.AddSendingMiddleware(h.traceOut)
	return s
}

// errorFront answers every request of a session with err: the server it
// asked for is not there.
func errorFront(name string, err error) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: name}, &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{}})
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "notifications/initialized" || method == "notifications/cancelled" {
				return next(ctx, method, req)
			}
			return nil, err
		}
	})
	return s
}

// relayed are the methods passed on to the server as they are; the
// handshake, ping and the rest are the front's.
var relayed = map[string]bool{
	"tools/list": true, "tools/call": true,
	"resources/list": true, "resources/templates/list": true, "resources/read": true,
	"prompts/list": true, "prompts/get": true,
	"completion/complete": true,
}

// relay is the front's receiving middleware: a relayed method goes to the
// upstream; logging/setLevel is the front's and the upstream's.
func (h *hub) relay(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		ss, _ := req.GetSession().(*mcp.ServerSession)
		cl := h.client(ss)
		switch {
		case relayed[method]:
			return h.forward(ctx, cl, method, req.GetParams())
		case method == "logging/setLevel":
			res, err := next(ctx, method, req)
			if err == nil {
				if p, ok := req.GetParams().(*mcp.SetLoggingLevelParams); ok {
					err = h.setLevel(ctx, cl, p.Level)
				}
			}
			return res, err
		}
		return next(ctx, method, req)
	}
}

// forward relays one request and records it.
func (h *hub) forward(ctx context.Context, cl *client, method string, params mcp.Params) (mcp.Result, error) {
	if modernCall(params) && (method == "tools/call" || method == "prompts/get" || method == "resources/read") {
		return h.forwardRoundTrip(ctx, cl, method, params)
	}
	c := &call{cl: cl, ctx: ctx, method: method, started: h.g.opts.Now()}
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
			h.noteUpstream(u)
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

// doneOf returns a channel closed when cs ends.
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
	switch p := params.(type) {
	case *mcp.CallToolParamsRaw:
		out := &mcp.CallToolParams{Meta: meta, Name: p.Name}
		if len(p.Arguments) > 0 {
			out.Arguments = p.Arguments
		}
		return out
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
	if c.upToken != "" {
		delete(h.progress, c.upToken)
	}
	h.mu.Unlock()
	failed := err != nil
	if r, ok := res.(*mcp.CallToolResult); ok && r != nil && r.IsError {
		failed = true
	}
	h.stats.record(c.method, c.tool, h.g.opts.Now().Sub(c.started), failed, c.ctx.Err() != nil)
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

// handlers are the upstream session's client handlers.
func (h *hub) handlers() *healthcheck.ClientHandlers {
	return &healthcheck.ClientHandlers{
		Progress:            h.onProgress,
		Log:                 h.onLog,
		Elicit:              h.onElicit,
		RelayElicit:         true,
		ElicitationComplete: h.onElicitationComplete,
		Sample:              h.onSample,
		ListRoots:           h.onListRoots,
		ListChanged:         h.onListChanged,
		ResourceUpdated:     h.onResourceUpdated,
		KeepInputRequests:   true, // answered from the caller's session: inputs.go
	}
}

func (h *hub) onProgress(p *mcp.ProgressNotificationParams) {
	tok, _ := p.ProgressToken.(string)
	h.mu.Lock()
	c := h.progress[tok]
	h.mu.Unlock()
	if c == nil || c.ctx.Err() != nil {
		return
	}
	q := *p
	q.ProgressToken = c.token
	_ = c.cl.ss.NotifyProgress(c.ctx, &q)
}

// onLog sends a log message to every session, each at its own level; the
// session whose request is in flight gets it with that request (on its
// HTTP stream).
func (h *hub) onLog(p *mcp.LoggingMessageParams) {
	c := h.latest(nil)
	for _, cl := range h.clients() {
		ctx := context.Background()
		if c != nil && c.cl == cl {
			ctx = c.ctx
		}
		_ = cl.ss.Log(ctx, p)
	}
}

// ask is how a server's own request reaches a client: with the context of
// the request in flight (so an HTTP session gets it on that request's
// stream), ended when the server gives up on it.
func ask[R any](h *hub, ctx context.Context, method string, can func(*call) bool, do func(context.Context, *call) (R, error)) (R, error) {
	var zero R
	c := h.latest(can)
	if c == nil {
		return zero, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf(
			"mcptray: no client session of %s can answer %s now (none has a request in flight that declared it)", h.name, method)}
	}
	rctx, cancel := context.WithCancel(c.ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	return do(rctx, c)
}

func (h *hub) onSample(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	return ask(h, ctx, "sampling/createMessage", (*call).canSample, func(ctx context.Context, c *call) (*mcp.CreateMessageResult, error) {
		if c.trip != nil {
			return sampleVia(ctx, c.trip, p)
		}
		return c.cl.ss.CreateMessage(ctx, p)
	})
}

func (h *hub) onElicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return ask(h, ctx, "elicitation/create", (*call).canElicit, func(ctx context.Context, c *call) (*mcp.ElicitResult, error) {
		if c.trip != nil {
			return elicitVia(ctx, c.trip, p)
		}
		cl := c.cl
		if p.ElicitationID != "" {
			h.mu.Lock()
			h.elicits[p.ElicitationID] = cl
			h.mu.Unlock()
		}
		q := *p
		q.RequestedSchema = elicitSchema(p.RequestedSchema)
		return cl.ss.Elicit(ctx, &q)
	})
}

// elicitSchema is a requested schema the SDK sends on: a titled
// multi-select's items lose a "type" beside their anyOf (the
// specification's form has none, and the SDK refuses it), nothing else
// changes.
func elicitSchema(schema any) any {
	m, ok := schema.(map[string]any)
	if !ok {
		return schema
	}
	props, ok := m["properties"].(map[string]any)
	if !ok {
		return schema
	}
	out := maps.Clone(m)
	np := maps.Clone(props)
	for name, p := range props {
		pm, ok := p.(map[string]any)
		if !ok {
			continue
		}
		items, ok := pm["items"].(map[string]any)
		if _, has := items["anyOf"]; !ok || !has || items["type"] == nil {
			continue
		}
		ni := maps.Clone(items)
		delete(ni, "type")
		npm := maps.Clone(pm)
		npm["items"] = ni
		np[name] = npm
	}
	out["properties"] = np
	return out
}

func (h *hub) onElicitationComplete(id string) {
	h.mu.Lock()
	cl := h.elicits[id]
	delete(h.elicits, id)
	h.mu.Unlock()
	if cl != nil {
		_ = cl.ss.NotifyElicitationComplete(context.Background(), &mcp.ElicitationCompleteParams{ElicitationID: id})
	}
}

func (h *hub) onListRoots(ctx context.Context) (*mcp.ListRootsResult, error) {
	if h.latest((*call).hasRoots) == nil {
		// Roots belong to a session, not to a request: without a request
		// in flight, the session active last answers.
		if cl := h.lastActive((*client).hasRoots); cl != nil {
			return cl.ss.ListRoots(ctx, nil)
		}
	}
	return ask(h, ctx, "roots/list", (*call).hasRoots, func(ctx context.Context, c *call) (*mcp.ListRootsResult, error) {
		if c.trip != nil {
			return rootsVia(ctx, c.trip)
		}
		return c.cl.ss.ListRoots(ctx, nil)
	})
}

// onListChanged tells every session that a list of the server's changed.
func (h *hub) onListChanged(method string) {
	h.mu.Lock()
	fronts := slices.Clone(h.fronts)
	h.mu.Unlock()
	for _, f := range fronts {
		notifyListChanged(f, method)
	}
}

// notifyListChanged makes front send method to its sessions. The SDK
// sends list_changed when a server's own lists change, and has no other
// way to send it: adding and removing a marker (within its debounce, so
// sessions get one notification) does it. Lists are relayed, so no
// session ever sees the marker.
func notifyListChanged(front *mcp.Server, method string) {
	const marker = "mcptray-list-changed"
	switch method {
	case "notifications/tools/list_changed":
		front.AddTool(&mcp.Tool{Name: marker, InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, nil
		})
		front.RemoveTools(marker)
	case "notifications/prompts/list_changed":
		front.AddPrompt(&mcp.Prompt{Name: marker}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) { return nil, nil })
		front.RemovePrompts(marker)
	case "notifications/resources/list_changed":
		uri := "mcptray:" + marker
		front.AddResource(&mcp.Resource{URI: uri, Name: marker}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return nil, nil
		})
		front.RemoveResources(uri)
	}
}

func (h *hub) onResourceUpdated(p *mcp.ResourceUpdatedNotificationParams) {
	h.mu.Lock()
	fronts := slices.Clone(h.fronts)
	h.mu.Unlock()
	for _, f := range fronts {
		_ = f.ResourceUpdated(context.Background(), p)
	}
}

// subscribe and unsubscribe keep the upstream subscribed to a resource
// while any session is.
func (h *hub) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	uri := req.Params.URI
	h.mu.Lock()
	h.subs[uri]++
	first := h.subs[uri] == 1
	h.mu.Unlock()
	if !first {
		return nil
	}
	err := h.useClient(ctx, func(cs *mcp.ClientSession) error {
		if modernUpstream(cs) {
			return nil // the revision has no resources/subscribe
		}
		return cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
	})
	if err != nil {
		h.mu.Lock()
		h.subs[uri]--
		h.mu.Unlock()
	}
	return err
}

func (h *hub) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	uri := req.Params.URI
	h.mu.Lock()
	n := h.subs[uri]
	if n > 0 {
		h.subs[uri] = n - 1
	}
	last := n == 1
	if n <= 1 {
		delete(h.subs, uri)
	}
	h.mu.Unlock()
	if !last {
		return nil
	}
	return h.useClient(ctx, func(cs *mcp.ClientSession) error {
		if modernUpstream(cs) {
			return nil
		}
		return cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
	})
}

// useClient runs fn with the upstream's MCP session.
func (h *hub) useClient(ctx context.Context, fn func(*mcp.ClientSession) error) error {
	err := h.use(ctx, func(_ context.Context, sess supervisor.Session) error {
		up, err := upstreamOf(sess)
		if err != nil {
			return err
		}
		h.noteUpstream(up)
		return fn(up.Client())
	})
	return h.rpcError(ctx, err)
}

// setLevel records a session's logging level and tells the upstream the
// most verbose level any session asked for.
func (h *hub) setLevel(ctx context.Context, cl *client, level mcp.LoggingLevel) error {
	cl.setLevel(level)
	want := h.wantLevel()
	h.mu.Lock()
	same := want == h.level
	h.mu.Unlock()
	if same || want == "" {
		return nil
	}
	return h.useClient(ctx, func(cs *mcp.ClientSession) error {
		if modernUpstream(cs) {
			return nil // the revision has no logging/setLevel
		}
		if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: want}); err != nil {
			return err
		}
		h.mu.Lock()
		h.level = want
		h.mu.Unlock()
		return nil
	})
}

var levelOrder = []mcp.LoggingLevel{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

func (h *hub) wantLevel() mcp.LoggingLevel {
	best := -1
	for _, cl := range h.clients() {
		if i := slices.Index(levelOrder, cl.logLevel()); i >= 0 && (best < 0 || i < best) {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	return levelOrder[best]
}

func (h *hub) rootsChanged(ctx context.Context, _ *mcp.RootsListChangedRequest) {
	_ = h.g.up.Use(ctx, h.name, func(_ context.Context, sess supervisor.Session) error {
		if up, err := upstreamOf(sess); err == nil {
			up.RootsChanged()
		}
		return nil
	})
}

func (h *hub) initialized(_ context.Context, req *mcp.InitializedRequest) {
	if ss := req.Session; ss != nil {
		h.client(ss).identify()
	}
}

// noteUpstream records the session relayed to; a new one is a restarted
// server, which [hub.followUpstream] brings up to date.
func (h *hub) noteUpstream(up Upstream) {
	h.mu.Lock()
	changed := h.upstream != up
	h.mu.Unlock()
	if changed {
		h.resync(context.Background(), up)
	}
}

// followUpstream looks, without waiting, for a new upstream session of a
// server that has client sessions, and brings it up to date.
func (h *hub) followUpstream(ctx context.Context) {
	h.mu.Lock()
	if h.syncing || len(h.sessions) == 0 {
		h.mu.Unlock()
		return
	}
	h.syncing = true
	h.mu.Unlock()
	h.wg.Go(func() {
		defer func() {
			h.mu.Lock()
			h.syncing = false
			h.mu.Unlock()
		}()
		st := h.state()
		if st == nil || (st.State != supervisor.StateReady && st.State != supervisor.StateDegraded) {
			return
		}
		tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_ = h.g.up.Use(tctx, h.name, func(_ context.Context, sess supervisor.Session) error {
			if up, err := upstreamOf(sess); err == nil {
				h.noteUpstream(up)
			}
			return nil
		})
	})
}

func (h *hub) wait() { h.wg.Wait() }

// resync brings a new upstream session up to date: it has none of the
// subscriptions and no logging level, and its tools may differ.
func (h *hub) resync(ctx context.Context, up Upstream) {
	h.mu.Lock()
	if h.upstream == up {
		h.mu.Unlock()
		return
	}
	first := h.upstream == nil
	h.upstream = up
	h.level = ""
	uris := make([]string, 0, len(h.subs))
	for uri := range h.subs {
		uris = append(uris, uri)
	}
	old := h.tools
	h.mu.Unlock()

	cs := up.Client()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if modernUpstream(cs) {
		uris = nil // no resources/subscribe, no logging/setLevel
	}
	for _, uri := range uris {
		_ = cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
	}
	if want := h.wantLevel(); want != "" && !modernUpstream(cs) {
		if cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: want}) == nil {
			h.mu.Lock()
			h.level = want
			h.mu.Unlock()
		}
	}
	var names []string
	if rep := up.Report(); rep != nil {
		for _, t := range rep.Tools {
			names = append(names, t.Name)
		}
	}
	slices.Sort(names)
	h.mu.Lock()
	h.tools = names
	h.mu.Unlock()
	if !first && !slices.Equal(old, names) {
		h.onListChanged("notifications/tools/list_changed")
	}
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
