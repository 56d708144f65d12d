package gateway

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/supervisor"
)

// The hub of one server, and its fronts: the servers client sessions see.
// Its other concerns have their own files: relay.go (client requests to
// the upstream), fromserver.go (the server's own messages to sessions),
// fanout.go (the sessions' queues), upstream.go (what the upstream is
// told, and following its restarts), client.go (the sessions), mrtr.go
// (2026-07-28 clients' round trips).

// hub is the gateway's side of one server: its fronts, the client
// sessions connected to them, the requests in flight, and what the
// upstream has been told on their behalf.
//
// Lock order: Gateway.mu, then hub.mu, then a client's or a round trip's
// mu; the trace ring's and stats' locks are leaves. The supervisor
// (Upstreams: Use, Acquire, Release, Snapshot) and SDK sessions are never
// called with hub.mu held: they take their own locks and call back into
// the hub (handlers, middleware).
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
	// recorded counts the records made in sessions: clients() forgets
	// only a record made before it looked at the fronts' sessions.
	recorded uint64
	inflight []*call          // in the order they were sent
	progress map[string]*call // by the token sent upstream
	elicits  map[string]*client
	subs     map[string]int                       // resource URI -> subscribed sessions
	resub    map[string]bool                      // URIs the upstream failed to be re-subscribed to
	level    mcp.LoggingLevel                     // what upstream was last told ("" never)
	upstream Upstream                             // the session last relayed to
	tools    []string                             // the upstream's tool names, as last seen
	held     []string                             // its tools held back, as sessions were last told (trust.go)
	syncing  bool                                 // a followUpstream is running
	done     map[*mcp.ClientSession]chan struct{} // closed when the session ends
	trips    map[string]*roundTrip                // by requestState

	trustOnce sync.Once
	trustAs   string // the server its tools are trusted under (trust.go)

	wg     sync.WaitGroup // followUpstream goroutines
	tripWG sync.WaitGroup // round trips' upstream calls (mrtr.go)
	drains sync.WaitGroup // goroutines writing the sessions' queues
	all    serial         // what goes to every front, in order
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

func newHub(g *Gateway, name string) *hub {
	h := &hub{
		g: g, name: name, trace: newTraceRing(g.opts.TraceFrames),
		sessions: map[*mcp.ServerSession]*client{}, progress: map[string]*call{},
		elicits: map[string]*client{}, subs: map[string]int{}, trips: map[string]*roundTrip{},
	}
	if g.opts.Trust != nil {
		h.held = g.opts.Trust.HeldTools(name) // what its first sessions are offered
	}
	return h
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
		case method == "tools/call":
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok {
				if err := h.g.HeldError(h.trustName(), p.Name); err != nil {
					return nil, err
				}
			}
			return h.forward(ctx, cl, method, req.GetParams())
		case method == "tools/list":
			res, err := h.forward(ctx, cl, method, req.GetParams())
			if lr, ok := res.(*mcp.ListToolsResult); ok && err == nil {
				lr.Tools = h.g.OfferedTools(h.trustName(), lr.Tools)
			}
			return res, err
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
