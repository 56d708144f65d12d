package gateway

import (
	"context"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/healthcheck"
	"mcptray/internal/lazyre"
	"mcptray/registry"
)

// Frame is one message of a server's protocol trace.
type Frame = healthcheck.Frame

// bodyLimit is how much of a frame's JSON the trace keeps.
const bodyLimit = 2048

// traceRing keeps the last frames of one server, numbered.
type traceRing struct {
	mu      sync.Mutex // protects the fields below
	frames  []Frame    // ring; bodies as captured until read
	clean   []bool     // frames[i].Body is redacted
	start   int        // index of the oldest
	next    uint64     // Seq of the next frame
	secrets []string   // the server's configured secrets, masked in bodies
	wake    chan struct{}
}

func newTraceRing(n int) *traceRing {
	return &traceRing{frames: make([]Frame, 0, n), clean: make([]bool, 0, n), next: 1}
}

func (r *traceRing) setSecrets(s []string) {
	r.mu.Lock()
	r.secrets = s
	r.mu.Unlock()
}

func (r *traceRing) add(f Frame) {
	r.mu.Lock()
	defer r.mu.Unlock()
	// Redacting costs more than the relay: it waits until someone reads.
	// A long body is cut now (copied, so the message itself is not kept).
	if len(f.Body) > 4*bodyLimit {
		f.Body = strings.Clone(f.Body[:4*bodyLimit])
	}
	f.Seq = r.next
	r.next++
	if len(r.frames) < cap(r.frames) {
		r.frames = append(r.frames, f)
		r.clean = append(r.clean, false)
	} else {
		r.frames[r.start], r.clean[r.start] = f, false
		r.start = (r.start + 1) % len(r.frames)
	}
	if r.wake != nil {
		close(r.wake)
		r.wake = nil
	}
}

// since returns the frames numbered since or later, oldest first, the
// number to ask from next, and a channel closed at the next frame.
func (r *traceRing) since(since uint64) ([]Frame, uint64, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Frame
	for i := range r.frames {
		j := (r.start + i) % len(r.frames)
		if r.frames[j].Seq < since {
			continue
		}
		if !r.clean[j] {
			r.frames[j].Body, r.clean[j] = redact(r.frames[j].Body, r.secrets), true
		}
		out = append(out, r.frames[j])
	}
	if r.wake == nil {
		r.wake = make(chan struct{})
	}
	return out, r.next, r.wake
}

// stringField is a JSON "key": "value" pair (the value possibly cut
// short at the end of a cut body).
var stringField = lazyre.New(`"((?:[^"\\]|\\.){1,64})"\s*:\s*"((?:[^"\\]|\\.)*)("|$)`)

// redact masks what a trace must not show: the values of fields named
// like credentials (token, password, api_key, ...) and the server's own
// configured secrets wherever they appear; then it cuts the body short. It
// works on the text, so a body cut short is masked as well as a whole one.
func redact(body string, secrets []string) string {
	if body == "" {
		return body
	}
	if len(body) > 4*bodyLimit {
		body = body[:4*bodyLimit]
	}
	field := stringField()
	body = field.ReplaceAllStringFunc(body, func(m string) string {
		sub := field.FindStringSubmatch(m)
		key := sub[1]
		if !registry.SecretName(key) || key == "progressToken" || key == "cursor" || key == "nextCursor" {
			return m
		}
		return `"` + key + `":"` + registry.MaskSecret(sub[2]) + `"`
	})
	body = registry.MaskSecrets(body, secrets)
	if len(body) > bodyLimit {
		body = body[:bodyLimit] + "…"
	}
	return body
}

// traceIn and traceOut are the front's middlewares: what a client session
// sends the gateway, and what the gateway sends it.
func (h *hub) traceIn(next mcp.MethodHandler) mcp.MethodHandler {
	return h.sessionTrace(next, healthcheck.DirClientIn)
}

func (h *hub) traceOut(next mcp.MethodHandler) mcp.MethodHandler {
	return h.sessionTrace(next, healthcheck.DirClientOut)
}

func (h *hub) sessionTrace(next mcp.MethodHandler, dir string) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		ss, _ := req.GetSession().(*mcp.ServerSession)
		id := h.client(ss).id
		return healthcheck.TraceMiddleware(h.traceFrame, id, dir, h.g.opts.Clock.Now)(next)(ctx, method, req)
	}
}

// traceFrame adds f to the trace, a request that ended because it was
// cancelled said as such: it is no error of the server's.
func (h *hub) traceFrame(f Frame) {
	if f.Kind == "error" && strings.Contains(f.Body, context.Canceled.Error()) {
		f.Kind = "cancelled"
		if f.Session == "" {
			f.Body = "cancelled by mcptray: the client cancelled the request or went away"
		} else {
			f.Body = "cancelled: the client cancelled the request or went away"
		}
	}
	h.trace.add(f)
}

// TraceSince returns server name's trace frames numbered since or later,
// the number to ask from next, and a channel closed at the next frame.
func (g *Gateway) TraceSince(name string, since uint64) ([]Frame, uint64, <-chan struct{}) {
	return g.hub(name).trace.since(since)
}

// profileTrace is profile name's trace: every frame of its aggregate
// sessions as their clients see them, the requests the aggregate answers
// itself (the handshake, the lists, search) with the ones it routes.
// Routed requests are also in the trace of the server they went to,
// under the server's own names.
func (g *Gateway) profileTrace(name string) *traceRing {
	g.ptMu.Lock()
	defer g.ptMu.Unlock()
	r := g.ptraces[name]
	if r == nil {
		if g.ptraces == nil {
			g.ptraces = map[string]*traceRing{}
		}
		r = newTraceRing(g.opts.TraceFrames)
		r.secrets = g.psecrets
		g.ptraces[name] = r
	}
	return r
}

// KnownProfile reports whether profile name is configured (default always
// is).
func (g *Gateway) KnownProfile(name string) bool {
	p, _, _ := g.profile(name)
	return p != nil
}

// ProfileTraceSince returns profile name's trace frames numbered since or
// later, the number to ask from next, and a channel closed at the next
// frame.
func (g *Gateway) ProfileTraceSince(name string, since uint64) ([]Frame, uint64, <-chan struct{}) {
	return g.profileTrace(name).since(since)
}

// traceIn and traceOut are an aggregate front's middlewares, as a
// server's front has them: what the client sends, and what the
// aggregate sends it.
func (a *aggSession) traceIn(next mcp.MethodHandler) mcp.MethodHandler {
	traced := healthcheck.TraceMiddleware(a.traceFrame, a.id, healthcheck.DirClientIn, a.g.opts.Clock.Now)(next)
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if !isListMethod(method) {
			return traced(ctx, method, req)
		}
		// A list is answered from the offer, and its answer's JSON
		// (hundreds of microseconds for a few dozen tools) is made once
		// per offer, not at every list.
		now := a.g.opts.Clock.Now
		start := now()
		a.traceFrame(Frame{Time: start, Session: a.id, Dir: healthcheck.DirClientIn, Kind: "request", Method: method, Body: healthcheck.TraceBody(req.GetParams())})
		lt := &listTrace{}
		res, err := next(context.WithValue(ctx, listTraceKey{}, lt), method, req)
		back := Frame{Time: now(), Session: a.id, Dir: healthcheck.DirClientOut, Kind: "result", Method: method}
		back.Took = back.Time.Sub(start)
		switch {
		case err != nil:
			back.Kind, back.Body = "error", err.Error()
		case lt.o != nil:
			back.Body = lt.o.traceBody(method, res)
		default:
			back.Body = healthcheck.TraceBody(res)
		}
		a.traceFrame(back)
		return res, err
	}
}

func isListMethod(method string) bool {
	switch method {
	case "tools/list", "prompts/list", "resources/list", "resources/templates/list":
		return true
	}
	return false
}

// listTrace carries the offer a list was answered from back to the trace.
type listTrace struct{ o *offer }

type listTraceKey struct{}

// traceBody is the trace's body of method's answer res, made from o: the
// same for every list of the same offer, so it is made once.
func (o *offer) traceBody(method string, res mcp.Result) string {
	o.bodyMu.Lock()
	defer o.bodyMu.Unlock()
	if b, ok := o.bodies[method]; ok {
		return b
	}
	b := healthcheck.TraceBody(res)
	if len(b) > 4*bodyLimit {
		b = b[:4*bodyLimit] // what the ring keeps of a long body
	}
	if o.bodies == nil {
		o.bodies = map[string]string{}
	}
	o.bodies[method] = b
	return b
}

func (a *aggSession) traceOut(next mcp.MethodHandler) mcp.MethodHandler {
	return healthcheck.TraceMiddleware(a.traceFrame, a.id, healthcheck.DirClientOut, a.g.opts.Clock.Now)(next)
}

func (a *aggSession) traceFrame(f Frame) {
	if f.Kind == "error" && strings.Contains(f.Body, context.Canceled.Error()) {
		f.Kind, f.Body = "cancelled", "cancelled: the client cancelled the request or went away"
	}
	a.trace.add(f)
}
