package gateway

// What the upstream is told on the sessions' behalf (subscriptions, the
// logging level, roots changes), and how a restarted server is brought
// up to date.

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/supervisor"
)

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
		h.noteUpstream(ctx, up)
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
			return nil // the revision has no logging/setLevel: each request says it (levelled)
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

// logLevelKey is where a request of the 2026-07-28 revision says the
// level it wants the server's logs at: the revision has no
// logging/setLevel.
const logLevelKey = protocolMetaPrefix + "logLevel"

// levelled is params as upstream session cs is sent them: to a server of
// the 2026-07-28 revision, with the logging level in _meta, the most
// verbose any session asked for (what a server of the initialize era is
// told with logging/setLevel); each session is still sent only what its
// own level lets through (fromserver.go). The caller's params are never
// changed.
func (h *hub) levelled(cs *mcp.ClientSession, params mcp.Params) mcp.Params {
	if params == nil || isNil(params) || !modernUpstream(cs) {
		return params
	}
	want := h.wantLevel()
	if want == "" {
		return params
	}
	meta := mcp.Meta(maps.Clone(params.GetMeta()))
	if meta == nil {
		meta = mcp.Meta{}
	}
	meta[logLevelKey] = want
	return replaceMeta(params, meta)
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
// server, which [hub.resync] brings up to date (with ctx's values, not
// its end: the request that noticed may end first), as it does one whose
// re-subscribing failed.
func (h *hub) noteUpstream(ctx context.Context, up Upstream) {
	h.mu.Lock()
	changed := h.upstream != up || len(h.resub) > 0
	h.mu.Unlock()
	if changed {
		h.resync(context.WithoutCancel(ctx), up)
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
				h.noteUpstream(tctx, up)
			}
			return nil
		})
	})
}

func (h *hub) wait() {
	h.wg.Wait()
	h.tripWG.Wait()
	h.drains.Wait()
}

// resync brings a new upstream session up to date: it has none of the
// subscriptions and no logging level, and its tools may differ.
func (h *hub) resync(ctx context.Context, up Upstream) {
	h.mu.Lock()
	if h.upstream == up && len(h.resub) == 0 {
		h.mu.Unlock()
		return
	}
	if h.upstream == up {
		// Only the subscriptions that failed are tried again.
		uris := slices.Collect(maps.Keys(h.resub))
		h.resub = nil
		h.mu.Unlock()
		h.subscribeAll(ctx, up, uris)
		return
	}
	first := h.upstream == nil
	h.upstream = up
	h.level = ""
	// The supervisor hands out no older session once it has a newer one:
	// the ended ones are forgotten.
	for cs, ch := range h.done {
		if cs != up.Client() && isDone(ch) {
			delete(h.done, cs)
		}
	}
	uris := slices.Collect(maps.Keys(h.subs))
	h.resub = nil
	old := h.tools
	h.mu.Unlock()

	cs := up.Client()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if modernUpstream(cs) {
		uris = nil // no resources/subscribe, no logging/setLevel
	}
	h.subscribeAll(ctx, up, uris)
	if want := h.wantLevel(); want != "" && !modernUpstream(cs) {
		if cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: want}) == nil {
			h.mu.Lock()
			h.level = want
			h.mu.Unlock()
		}
	}
	var names []string
	rep := up.Report()
	if rep != nil {
		for _, t := range rep.Tools {
			names = append(names, t.Name)
		}
	}
	h.g.ObserveReport(h.trustName(), rep)
	slices.Sort(names)
	h.mu.Lock()
	h.tools = names
	h.mu.Unlock()
	if !first && !slices.Equal(old, names) {
		h.onListChanged("notifications/tools/list_changed")
	}
}

// subscribeAll subscribes a new upstream session to uris; one that fails
// is logged and tried again at the next look at the upstream (the next
// request, or the gateway's next sweep).
func (h *hub) subscribeAll(ctx context.Context, up Upstream, uris []string) {
	cs := up.Client()
	for _, uri := range uris {
		err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
		if err == nil {
			continue
		}
		h.g.opts.Logger.Warn("re-subscribing a restarted server failed; it is tried again", "server", h.name, "uri", uri, "error", err)
		h.mu.Lock()
		if h.subs[uri] > 0 && h.upstream == up {
			if h.resub == nil {
				h.resub = map[string]bool{}
			}
			h.resub[uri] = true
		}
		h.mu.Unlock()
	}
}
