package gateway

// The aggregate session: one MCP server to the client over every server
// of a profile. Its lists come from the offer (offer.go), answered by the
// front itself; a request for one server's tool, prompt, resource or
// completion goes to that server's hub as a request of the aggregate
// session's record there (joined at its first use: listing starts
// nothing), so progress, cancellation, logs, resource updates and the
// server's own requests (sampling, elicitation, roots) reach the session
// exactly as they reach a per-server session.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/gateway/toolsearch"
	"mcptray/healthcheck"
	"mcptray/registry"
)

// aggSession is one client session of an aggregate.
type aggSession struct {
	g       *Gateway
	profile string
	id      string
	peer    Peer
	since   time.Time
	front   *mcp.Server
	failed  bool // the profile could not be served: front answers errors
	trace   *traceRing

	mu       sync.Mutex // protects the fields below
	ss       *mcp.ServerSession
	members  map[string]*client // the session's record in each hub it used
	level    mcp.LoggingLevel
	told     [3]string // the tools, prompts and resources keys last told
	closed   bool
	last     time.Time
	calls    int
	errors   int
	inflight int
}

// ServeProfile runs one aggregate session of profile over t (a `mcptray
// connect --profile` bridge's stream) until the client or ctx ends it. A
// profile that cannot be served answers every request with why.
func (g *Gateway) ServeProfile(ctx context.Context, profile string, t mcp.Transport, peer Peer) error {
	a := g.newAggregate(profile, peer)
	ss, err := a.front.Connect(ctx, t, nil)
	if err != nil {
		a.end()
		return err
	}
	a.setSession(ss)
	if lt, ok := t.(*lineTransport); ok {
		if c := lt.connection(); c != nil {
			c.watch(func(why string) {
				g.opts.Logger.Warn("an aggregate session was closed", "session", a.id, "why", why)
			}, func(json.RawMessage) {})
		}
	}
	stop := context.AfterFunc(ctx, func() { _ = ss.Close() })
	defer stop()
	err = ss.Wait()
	a.end()
	if ctx.Err() != nil || err == mcp.ErrConnectionClosed {
		return nil
	}
	return err
}

// newAggregate makes an aggregate session of profile with its front, and
// counts it.
func (g *Gateway) newAggregate(profile string, peer Peer) *aggSession {
	a := &aggSession{g: g, profile: profile, peer: peer, since: g.opts.Clock.Now(), members: map[string]*client{},
		id: fmt.Sprintf("@%s#%d", profile, g.seq.next())}
	o := g.offerOf(profile)
	if o.err != nil {
		a.failed = true
		a.front = errorFront("mcptray", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "mcptray: " + o.err.Error()})
	} else {
		a.trace = g.profileTrace(profile) // before the front: its middlewares add to it
		a.front = a.newFront(o)
		a.told = [3]string{o.toolsKey, o.promptsKey, o.resourcesKey}
	}
	g.aggMu.Lock()
	if g.aggs == nil {
		g.aggs = map[*aggSession]struct{}{}
	}
	g.aggs[a] = struct{}{}
	g.aggMu.Unlock()
	return a
}

func (a *aggSession) newFront(o *offer) *mcp.Server {
	caps := *o.caps
	opts := &mcp.ServerOptions{
		Instructions:            o.instructions,
		Capabilities:            &caps,
		Logger:                  a.g.opts.Logger,
		RootsListChangedHandler: a.rootsChanged,
	}
	if caps.Resources != nil && caps.Resources.Subscribe {
		opts.SubscribeHandler = a.subscribe
		opts.UnsubscribeHandler = a.unsubscribe
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "mcptray", Title: "mcptray profile " + a.profile, Version: "profile-" + a.profile}, opts)
	s.AddReceivingMiddleware(a.traceIn, a.dispatch)
	s.AddSendingMiddleware(a.traceOut)
	return s
}

func (a *aggSession) setSession(ss *mcp.ServerSession) {
	a.mu.Lock()
	if a.ss == nil {
		a.ss = ss
	}
	a.mu.Unlock()
}

func (a *aggSession) isClosed() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.closed
}

// end forgets the session: its record in every hub it used goes, with
// the supervisor's count of it.
func (a *aggSession) end() {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return
	}
	a.closed = true
	members := a.members
	a.members = map[string]*client{}
	a.mu.Unlock()
	a.g.aggMu.Lock()
	delete(a.g.aggs, a)
	a.g.aggMu.Unlock()
	for server, cl := range members {
		a.g.hub(server).detach(cl.ss)
	}
}

// alive reports whether the session is still there: an HTTP session ends
// without saying so, and is gone once its front has no session.
func (a *aggSession) alive() bool {
	if a.isClosed() {
		return false
	}
	if a.peer.Via != "http" {
		return true
	}
	for range a.front.Sessions() {
		return true
	}
	a.mu.Lock()
	seen := a.ss != nil
	a.mu.Unlock()
	return !seen && a.g.opts.Clock.Now().Sub(a.since) < time.Minute
}

// join is the session's record in hub h, made at its first use there:
// the supervisor counts it from then on (and starts a lazy server).
func (a *aggSession) join(ctx context.Context, h *hub, ss *mcp.ServerSession) *client {
	a.mu.Lock()
	if cl := a.members[h.name]; cl != nil && cl.ss == ss {
		a.mu.Unlock()
		return cl
	}
	level := a.level
	a.mu.Unlock()
	cl := h.joinAggregate(a, ss)
	a.mu.Lock()
	closed := a.closed
	if !closed {
		a.members[h.name] = cl
	}
	a.mu.Unlock()
	if closed {
		h.detach(ss)
		return cl
	}
	if level != "" {
		_ = h.setLevel(ctx, cl, level)
	}
	return cl
}

// joinAggregate records aggregate session a's session ss in the hub.
func (h *hub) joinAggregate(a *aggSession, ss *mcp.ServerSession) *client {
	h.mu.Lock()
	if cl := h.sessions[ss]; cl != nil {
		h.mu.Unlock()
		return cl
	}
	h.recorded++
	cl := &client{ss: ss, id: a.id, peer: a.peer, since: a.since, agg: a, nth: h.recorded}
	h.sessions[ss] = cl
	h.mu.Unlock()
	if err := h.g.up.Acquire(h.name); err != nil {
		h.g.opts.Logger.Warn("an aggregate session is not counted by the supervisor", "server", h.name, "session", cl.id, "error", err)
	} else {
		cl.leased.Store(true)
	}
	cl.identify()
	return cl
}

func (a *aggSession) sep() string {
	_, sep, _ := a.g.profile(a.profile)
	return sep
}

// dispatch is the front's receiving middleware: the lists are the
// offer's, a request for one server's part goes to that server.
func (a *aggSession) dispatch(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		ss, _ := req.GetSession().(*mcp.ServerSession)
		if ss != nil {
			a.setSession(ss)
		}
		switch method {
		case "tools/list", "prompts/list", "resources/list", "resources/templates/list":
			o := a.g.offerOf(a.profile)
			if lt, ok := ctx.Value(listTraceKey{}).(*listTrace); ok {
				lt.o = o
			}
			return a.list(o, method), nil
		case "tools/call", "prompts/get", "resources/read", "completion/complete":
			a.begin()
			res, err := a.route(ctx, ss, method, req)
			a.done(err != nil || isToolError(res))
			return res, err
		case "logging/setLevel":
			res, err := next(ctx, method, req)
			if err == nil {
				if p, ok := req.GetParams().(*mcp.SetLoggingLevelParams); ok {
					a.setLevel(ctx, p.Level)
				}
			}
			return res, err
		}
		return next(ctx, method, req)
	}
}

func isToolError(res mcp.Result) bool {
	r, ok := res.(*mcp.CallToolResult)
	return ok && r != nil && r.IsError
}

func (a *aggSession) begin() {
	a.mu.Lock()
	a.last = a.g.opts.Clock.Now()
	a.inflight++
	a.mu.Unlock()
}

func (a *aggSession) done(failed bool) {
	a.mu.Lock()
	a.inflight--
	a.calls++
	if failed {
		a.errors++
	}
	a.mu.Unlock()
}

// list answers a list from the offer: the supervised catalogues, with no
// round trip to any server.
func (a *aggSession) list(o *offer, method string) mcp.Result {
	a.mu.Lock()
	defer a.mu.Unlock()
	cache := cacheable(mcp.Cacheable{})
	switch method {
	case "tools/list":
		a.told[0] = o.toolsKey
		return &mcp.ListToolsResult{Tools: nonNil(o.tools), Cacheable: cache}
	case "prompts/list":
		a.told[1] = o.promptsKey
		return &mcp.ListPromptsResult{Prompts: nonNil(o.prompts), Cacheable: cache}
	case "resources/list":
		a.told[2] = o.resourcesKey
		return &mcp.ListResourcesResult{Resources: nonNil(o.resources), Cacheable: cache}
	}
	a.told[2] = o.resourcesKey
	return &mcp.ListResourceTemplatesResult{ResourceTemplates: nonNil(o.templates), Cacheable: cache}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// route sends a request for one server's tool, prompt, resource or
// completion to that server, under its own name.
func (a *aggSession) route(ctx context.Context, ss *mcp.ServerSession, method string, req mcp.Request) (mcp.Result, error) {
	o := a.g.offerOf(a.profile)
	sep := a.sep()
	var server string
	var params mcp.Params
	switch p := req.GetParams().(type) {
	case *mcp.CallToolParamsRaw:
		if o.search != nil && o.search.Handles(p.Name) {
			return o.search.Call(context.WithValue(ctx, searchCallKey{}, &searchCall{a: a, ss: ss, meta: p.Meta}), p.Name, p.Arguments)
		}
		r, ok := o.routeName(o.toolRoutes, p.Name, sep)
		if !ok {
			if both := o.namesOf(o.toolRoutes, p.Name); len(both) > 1 {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(
					"mcptray: %q is a tool of more than one server of profile %s: call it as one of %v", p.Name, a.profile, both)}
			}
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(
				"mcptray: profile %s has no tool %q (its servers: %v; tool names are SERVER%sTOOL)", a.profile, p.Name, o.memberNames(), sep)}
		}
		if r.hidden != "" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("mcptray: tool %s of server %s is %s", r.name, r.server, r.hidden)}
		}
		q := *p
		q.Name = r.name
		server, params = r.server, &q
	case *mcp.GetPromptParams:
		r, ok := o.routeName(o.promptRoutes, p.Name, sep)
		if !ok {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(
				"mcptray: profile %s has no prompt %q (prompt names are SERVER%sPROMPT)", a.profile, p.Name, sep)}
		}
		q := *p
		q.Name = r.name
		server, params = r.server, &q
	case *mcp.ReadResourceParams:
		s, ok := o.routeURI(p.URI)
		if !ok {
			return nil, &jsonrpc.Error{Code: codeResourceNotFound, Message: fmt.Sprintf(
				"mcptray: no server of profile %s offers resource %s", a.profile, p.URI)}
		}
		server, params = s, p
	case *mcp.CompleteParams:
		if p.Ref == nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "mcptray: completion/complete needs a ref"}
		}
		q := *p
		ref := *p.Ref
		switch ref.Type {
		case "ref/prompt":
			r, ok := o.routeName(o.promptRoutes, ref.Name, sep)
			if !ok {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("mcptray: profile %s has no prompt %q", a.profile, ref.Name)}
			}
			ref.Name, server = r.name, r.server
		default:
			s, ok := o.routeTemplate(ref.URI)
			if !ok {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("mcptray: no server of profile %s offers %s", a.profile, ref.URI)}
			}
			server = s
		}
		q.Ref = &ref
		params = &q
	default:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("mcptray: %s without its params", method)}
	}
	return a.send(ctx, ss, server, method, params, req)
}

// send is a request for server, as the server is sent it, from session ss.
func (a *aggSession) send(ctx context.Context, ss *mcp.ServerSession, server, method string, params mcp.Params, req mcp.Request) (mcp.Result, error) {
	h := a.g.hub(server)
	cl := a.join(ctx, h, ss)
	forward := func(ctx context.Context, method string, _ mcp.Request) (mcp.Result, error) {
		return h.forward(ctx, cl, method, params)
	}
	// The frame is kept in the trace of the server it went to.
	return healthcheck.TraceMiddleware(h.traceFrame, cl.id, healthcheck.DirClientIn, a.g.opts.Clock.Now)(forward)(ctx, method, req)
}

// searchCall is what call_tool's target is sent with: the session that
// called, and its request's _meta (its progress token).
type searchCall struct {
	a    *aggSession
	ss   *mcp.ServerSession
	meta mcp.Meta
}

type searchCallKey struct{}

// callThroughSearch sends call_tool's target to its server, as a call of
// the session that asked.
func callThroughSearch(ctx context.Context, e toolsearch.Entry, args map[string]any) (*mcp.CallToolResult, error) {
	sc, ok := ctx.Value(searchCallKey{}).(*searchCall)
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "mcptray: call_tool outside an aggregate session"}
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	params := &mcp.CallToolParamsRaw{Meta: sc.meta, Name: e.Tool.Name, Arguments: raw}
	res, err := sc.a.send(ctx, sc.ss, e.Server, "tools/call", params, &mcp.CallToolRequest{Session: sc.ss, Params: params})
	if err != nil {
		return nil, err
	}
	r, ok := res.(*mcp.CallToolResult)
	if !ok {
		return nil, fmt.Errorf("mcptray: %s answered tools/call with %T", e.Server, res)
	}
	return r, nil
}

// codeResourceNotFound is MCP's error for a resource no server has.
const codeResourceNotFound = -32002

// routeTemplate is the server of a resource template or URI (completion's
// ref/resource names a template).
func (o *offer) routeTemplate(uri string) (string, bool) {
	for _, t := range o.tmplRoutes {
		if t.tmpl.Raw() == uri {
			return t.server, true
		}
	}
	return o.routeURI(uri)
}

func (a *aggSession) setLevel(ctx context.Context, level mcp.LoggingLevel) {
	a.mu.Lock()
	a.level = level
	members := make(map[string]*client, len(a.members))
	for k, v := range a.members {
		members[k] = v
	}
	a.mu.Unlock()
	for server, cl := range members {
		_ = a.g.hub(server).setLevel(ctx, cl, level)
	}
}

func (a *aggSession) memberHubs() []*hub {
	a.mu.Lock()
	defer a.mu.Unlock()
	var hs []*hub
	for server := range a.members {
		hs = append(hs, a.g.hub(server))
	}
	return hs
}

func (a *aggSession) rootsChanged(ctx context.Context, req *mcp.RootsListChangedRequest) {
	for _, h := range a.memberHubs() {
		h.rootsChanged(ctx, req)
	}
}

func (a *aggSession) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	o := a.g.offerOf(a.profile)
	server, ok := o.routeURI(req.Params.URI)
	if !ok {
		return &jsonrpc.Error{Code: codeResourceNotFound, Message: fmt.Sprintf("mcptray: no server of profile %s offers resource %s", a.profile, req.Params.URI)}
	}
	h := a.g.hub(server)
	a.join(ctx, h, req.Session)
	return h.subscribe(ctx, req)
}

func (a *aggSession) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	o := a.g.offerOf(a.profile)
	server, ok := o.routeURI(req.Params.URI)
	if !ok {
		return nil
	}
	return a.g.hub(server).unsubscribe(ctx, req)
}

// kickAggregates has Run look at the aggregates' offers now.
func (g *Gateway) kickAggregates() {
	select {
	case g.kick <- struct{}{}:
	default:
	}
}

// HoldsChanged tells the gateway that [Options.HeldTool] answers
// differently now: the aggregates' lists are made again.
func (g *Gateway) HoldsChanged() {
	g.holdGen.Add(1)
	g.kickAggregates()
}

// followAggregates tells each aggregate session whose lists changed, and
// forgets HTTP sessions that ended.
func (g *Gateway) followAggregates() {
	g.aggMu.Lock()
	aggs := make([]*aggSession, 0, len(g.aggs))
	for a := range g.aggs {
		aggs = append(aggs, a)
	}
	g.aggMu.Unlock()
	for _, a := range aggs {
		if !a.alive() {
			a.end()
			continue
		}
		if a.failed {
			continue
		}
		o := g.offerOf(a.profile)
		if o.err != nil {
			continue
		}
		now := [3]string{o.toolsKey, o.promptsKey, o.resourcesKey}
		a.mu.Lock()
		told := a.told
		a.told = now
		a.mu.Unlock()
		for i, method := range []string{"notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed"} {
			if told[i] != now[i] {
				notifyListChanged(a.front, method)
			}
		}
	}
}

// relist fetches server name's list again after it said the list changed,
// for the aggregates (their lists come from the catalogues, not from the
// server at each request), open now or later: a server may add tools just
// after its handshake (server-everything adds the tools of what its client
// declared).
func (h *hub) relist(method string) {
	st := h.state()
	if st == nil || st.Report == nil {
		return
	}
	rep := st.Report
	h.wg.Go(func() {
		ctx, cancel := context.WithTimeout(h.g.life, 30*time.Second)
		defer cancel()
		err := h.useClient(ctx, func(cs *mcp.ClientSession) error {
			switch method {
			case "notifications/tools/list_changed":
				var ts []*mcp.Tool
				for t, err := range cs.Tools(ctx, nil) {
					if err != nil {
						return err
					}
					ts = append(ts, t)
				}
				h.g.cats.setFresh(h.name, rep, func(f *freshLists) { f.tools, f.has["tools"] = ts, true })
			case "notifications/prompts/list_changed":
				var ps []*mcp.Prompt
				for p, err := range cs.Prompts(ctx, nil) {
					if err != nil {
						return err
					}
					ps = append(ps, p)
				}
				h.g.cats.setFresh(h.name, rep, func(f *freshLists) { f.prompts, f.has["prompts"] = ps, true })
			case "notifications/resources/list_changed":
				var rs []*mcp.Resource
				for r, err := range cs.Resources(ctx, nil) {
					if err != nil {
						return err
					}
					rs = append(rs, r)
				}
				var ts []*mcp.ResourceTemplate
				if caps := cs.InitializeResult(); caps != nil {
					for t, err := range cs.ResourceTemplates(ctx, nil) {
						if err != nil {
							break // a server may list resources and no templates
						}
						ts = append(ts, t)
					}
				}
				h.g.cats.setFresh(h.name, rep, func(f *freshLists) { f.resources, f.templates, f.has["resources"] = rs, ts, true })
			}
			return nil
		})
		if err != nil {
			h.g.opts.Logger.Warn("listing a server again after it said its list changed failed", "server", h.name, "list", method, "error", err)
		}
		h.g.kickAggregates()
	})
}

// Aggregate is one profile as clients reach it through the gateway.
type Aggregate struct {
	Profile  string          `json:"profile"`
	Sessions []Session       `json:"sessions"`
	Servers  []ProfileServer `json:"servers"`
	Tools    int             `json:"tools"`
	// Notices say what naming resolved (a shortened name, a collision).
	Notices []string `json:"notices,omitempty"`
	// Problem says why the profile cannot be served ("" when it can).
	Problem string `json:"problem,omitempty"`
}

// Aggregates describes every profile, with its open sessions: the
// default first, then the config's in name order, then any other that
// has sessions.
func (g *Gateway) Aggregates() []Aggregate {
	g.aggMu.Lock()
	names := []string{registry.DefaultProfile}
	for n := range g.profiles.list {
		if n != registry.DefaultProfile {
			names = append(names, n)
		}
	}
	byProfile := map[string][]*aggSession{}
	for a := range g.aggs {
		byProfile[a.profile] = append(byProfile[a.profile], a)
		if !slices.Contains(names, a.profile) {
			names = append(names, a.profile)
		}
	}
	g.aggMu.Unlock()
	slices.Sort(names[1:])
	out := make([]Aggregate, 0, len(names))
	for _, n := range names {
		o := g.offerOf(n)
		ag := Aggregate{Profile: n, Sessions: []Session{}, Servers: o.members, Tools: len(o.tools), Notices: o.notices}
		if o.err != nil {
			ag.Problem = o.err.Error()
		}
		if ag.Servers == nil {
			ag.Servers = []ProfileServer{}
		}
		as := byProfile[n]
		slices.SortFunc(as, func(x, y *aggSession) int { return x.since.Compare(y.since) })
		for _, a := range as {
			if a.alive() {
				ag.Sessions = append(ag.Sessions, a.describe())
			}
		}
		out = append(out, ag)
	}
	return out
}

func (a *aggSession) describe() Session {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := Session{ID: a.id, Via: a.peer.Via, PID: a.peer.PID, Profile: a.profile, Since: a.since, LastRequest: a.last,
		Requests: a.calls, Errors: a.errors, InFlight: a.inflight}
	if a.ss != nil {
		if p := a.ss.InitializeParams(); p != nil {
			if p.ClientInfo != nil {
				s.ClientName, s.ClientVersion = p.ClientInfo.Name, p.ClientInfo.Version
			}
			s.Protocol = p.ProtocolVersion
		}
	}
	return s
}
