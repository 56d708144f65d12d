package healthcheck

import (
	"context"
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Frame is one message of a protocol trace, as mcptray exchanged it.
type Frame struct {
	Seq  uint64    `json:"seq"`
	Time time.Time `json:"time"`
	// Session is the client session the frame belongs to ("" for the
	// upstream side: health checks and relayed requests).
	Session string `json:"session,omitempty"`
	// Dir is who sent it to whom: "client→mcptray", "mcptray→client",
	// "mcptray→server", "server→mcptray".
	Dir string `json:"dir"`
	// Kind is "request", "result", "error" or "notification".
	Kind   string `json:"kind"`
	Method string `json:"method"`
	// Took is a result's or error's time since its request.
	Took time.Duration `json:"took,omitempty"`
	// Body is the params or result as JSON, secrets masked, cut short.
	Body string `json:"body,omitempty"`
}

// Tracer receives the frames of a session. It must not block.
type Tracer func(Frame)

// Directions of a frame.
const (
	DirClientIn  = "client→mcptray"
	DirClientOut = "mcptray→client"
	DirServerOut = "mcptray→server"
	DirServerIn  = "server→mcptray"
)

// TraceMiddleware records every request (with its result or error, and
// the time it took) and notification passing through an SDK session, in
// the direction out (what the session sends) or in (what it receives).
func TraceMiddleware(t Tracer, session, dir string, now func() time.Time) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			start := now()
			kind := "request"
			notification := len(method) > 14 && method[:14] == "notifications/"
			if notification {
				kind = "notification"
			}
			t(Frame{Time: start, Session: session, Dir: dir, Kind: kind, Method: method, Body: TraceBody(req.GetParams())})
			res, err := next(ctx, method, req)
			if notification {
				return res, err
			}
			back := Frame{Time: now(), Session: session, Dir: reverse(dir), Kind: "result", Method: method}
			back.Took = back.Time.Sub(start)
			if err != nil {
				back.Kind, back.Body = "error", err.Error()
			} else {
				back.Body = TraceBody(res)
			}
			t(back)
			return res, err
		}
	}
}

func reverse(dir string) string {
	switch dir {
	case DirClientIn:
		return DirClientOut
	case DirClientOut:
		return DirClientIn
	case DirServerOut:
		return DirServerIn
	}
	return DirServerOut
}

// TraceBody is v as a trace frame shows it: its JSON, "" for nothing.
func TraceBody(v any) string {
	if v == nil {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil || string(b) == "null" {
		return ""
	}
	return string(b)
}
