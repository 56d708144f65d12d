package healthcheck

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ClientHandlers answer what a server sends mcptray while it calls a tool,
// reads a resource or gets a prompt: notifications, and the server's own
// requests. A health check sets none (it offers the server nothing); a
// session made with handlers declares the matching client capabilities
// and lets every notification through to them.
type ClientHandlers struct {
	// Progress receives notifications/progress. Requests made through
	// [Session.CallTool] carry a progress token when it is set.
	Progress func(*mcp.ProgressNotificationParams)
	// Log receives notifications/message.
	Log func(*mcp.LoggingMessageParams)
	// Elicit answers elicitation/create, form and URL mode (both are
	// declared). The SDK checks an accepted form's content against the
	// requested schema.
	Elicit func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error)
	// RelayElicit hands Elicit the request as the server sent it: the
	// SDK's checks of the schema (stricter than the specification: it
	// refuses a titled multi-select whose items say "type": "string") and
	// of the answer are left to whoever answers.
	RelayElicit bool
	// ElicitationComplete receives notifications/elicitation/complete.
	ElicitationComplete func(elicitationID string)
	// Sample answers sampling/createMessage; nil leaves sampling undeclared.
	Sample func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)
	// Roots, when not nil, declares the roots capability and is the list
	// roots/list returns (it may be empty).
	Roots []*mcp.Root
	// ListRoots, when set, declares the roots capability (with
	// listChanged) and answers roots/list; it takes precedence over Roots.
	ListRoots func(context.Context) (*mcp.ListRootsResult, error)
	// ListChanged receives notifications/tools/list_changed,
	// notifications/prompts/list_changed and
	// notifications/resources/list_changed, by method name.
	ListChanged func(method string)
	// ResourceUpdated receives notifications/resources/updated.
	ResourceUpdated func(*mcp.ResourceUpdatedNotificationParams)
	// KeepInputRequests returns a 2026-07-28 server's input_required
	// results to the caller as they are (a relay answers them from its own
	// client), instead of answering them with the handlers above and
	// sending the request again, as the SDK does by default.
	KeepInputRequests bool
}

// newClient makes the SDK client for a session: a bare one for a health
// check, one with the handlers of o.Client otherwise.
func newClient(o Options) *mcp.Client {
	c := newSDKClient(o)
	if o.Trace != nil {
		now := o.Clock.Now
		c.AddSendingMiddleware(TraceMiddleware(o.Trace, "", DirServerOut, now))
		c.AddReceivingMiddleware(TraceMiddleware(o.Trace, "", DirServerIn, now))
	}
	return c
}

func newSDKClient(o Options) *mcp.Client {
	impl := &mcp.Implementation{Name: o.ClientName, Version: o.ClientVersion}
	h := o.Client
	if h == nil {
		// A health check offers nothing to the server: no roots, sampling
		// or elicitation.
		return mcp.NewClient(impl, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	}
	caps := &mcp.ClientCapabilities{}
	co := &mcp.ClientOptions{Capabilities: caps, Logger: o.Logger}
	if h.KeepInputRequests {
		co.MultiRoundTrip = &mcp.MultiRoundTripOptions{Disabled: true}
	}
	if h.Progress != nil {
		co.ProgressNotificationHandler = func(_ context.Context, r *mcp.ProgressNotificationClientRequest) { h.Progress(r.Params) }
	}
	if h.Log != nil {
		co.LoggingMessageHandler = func(_ context.Context, r *mcp.LoggingMessageRequest) { h.Log(r.Params) }
	}
	if h.Elicit != nil {
		caps.Elicitation = &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}
		co.ElicitationHandler = func(ctx context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return h.Elicit(ctx, r.Params)
		}
	}
	if h.ElicitationComplete != nil {
		co.ElicitationCompleteHandler = func(_ context.Context, r *mcp.ElicitationCompleteNotificationRequest) {
			h.ElicitationComplete(r.Params.ElicitationID)
		}
	}
	if h.Sample != nil {
		co.CreateMessageHandler = func(ctx context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return h.Sample(ctx, r.Params)
		}
	}
	if h.ListChanged != nil {
		co.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) { h.ListChanged("notifications/tools/list_changed") }
		co.PromptListChangedHandler = func(context.Context, *mcp.PromptListChangedRequest) {
			h.ListChanged("notifications/prompts/list_changed")
		}
		co.ResourceListChangedHandler = func(context.Context, *mcp.ResourceListChangedRequest) {
			h.ListChanged("notifications/resources/list_changed")
		}
	}
	if h.ResourceUpdated != nil {
		co.ResourceUpdatedHandler = func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { h.ResourceUpdated(r.Params) }
	}
	switch {
	case h.ListRoots != nil:
		caps.RootsV2 = &mcp.RootCapabilities{ListChanged: true}
	case h.Roots != nil:
		caps.RootsV2 = &mcp.RootCapabilities{}
	}
	c := mcp.NewClient(impl, co)
	c.AddRoots(h.Roots...)
	if h.ListRoots != nil || (h.RelayElicit && h.Elicit != nil) {
		// The SDK answers roots/list from a fixed list; this one is asked
		// each time. A relayed elicitation skips the SDK's checks.
		c.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				switch {
				case method == "roots/list" && h.ListRoots != nil:
					return h.ListRoots(ctx)
				case method == "elicitation/create" && h.RelayElicit && h.Elicit != nil:
					if p, ok := req.GetParams().(*mcp.ElicitParams); ok {
						return h.Elicit(ctx, p)
					}
				}
				return next(ctx, method, req)
			}
		})
	}
	return c
}
