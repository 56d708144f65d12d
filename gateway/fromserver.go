package gateway

// What the server sends on its own, routed to client sessions: progress,
// log messages, list changes and resource updates (through the queues of
// fanout.go), and its requests (sampling, elicitation, roots).

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/healthcheck"
)

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
	if c == nil {
		return
	}
	q := *p
	q.ProgressToken = c.token
	h.post(c.cl, func() {
		sendTo(c.ctx, func(ctx context.Context) error { return c.cl.ss.NotifyProgress(ctx, &q) })
	})
}

// onLog queues a log message for every session, each at its own level;
// the session whose request is in flight gets it with that request (on
// its HTTP stream).
func (h *hub) onLog(p *mcp.LoggingMessageParams) {
	c := h.latest(nil)
	for _, cl := range h.clients() {
		if !levelLets(cl.logLevel(), p.Level) {
			continue // the SDK would not send it: it need not wait
		}
		msg := p
		if cl.agg != nil {
			// An aggregate's client is told which server logged.
			q := *p
			q.Logger = h.name
			if p.Logger != "" {
				q.Logger += "/" + p.Logger
			}
			msg = &q
		}
		h.post(cl, func() { sendTo(notifyCtx(c, cl), func(ctx context.Context) error { return cl.ss.Log(ctx, msg) }) })
	}
}

// levelLets reports whether a session at level is sent a message of
// level msg; a session that set no level is sent none.
func levelLets(level, msg mcp.LoggingLevel) bool {
	i, j := slices.Index(levelOrder, level), slices.Index(levelOrder, msg)
	return i >= 0 && (j < 0 || j >= i)
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
		h.post(cl, func() {
			_ = cl.ss.NotifyElicitationComplete(context.Background(), &mcp.ElicitationCompleteParams{ElicitationID: id})
		})
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
	h.relist(method)
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
	for _, cl := range h.sessions {
		if cl.agg != nil && !slices.Contains(fronts, cl.agg.front) {
			fronts = append(fronts, cl.agg.front) // it sends only to a subscribed session
		}
	}
	h.mu.Unlock()
	h.postAll(func() {
		for _, f := range fronts {
			_ = f.ResourceUpdated(context.Background(), p)
		}
	})
}
