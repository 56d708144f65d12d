package gateway

import (
	"context"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server of the 2026-07-28 revision never sends its client a request:
// when a call needs input it answers input_required, naming what it needs
// (an elicitation, a sampling, the roots), and the client calls again with
// the answers and the server's requestState. This is the reverse of
// mrtr.go. The gateway answers such a result itself, from the client
// session whose call it is: a client of the initialize era gets the
// server's needs as its own elicitation/create, sampling/createMessage or
// roots/list requests; a 2026-07-28 client gets them as an input_required
// result of the gateway's round trip (mrtr.go), whose retry carries its
// answers back here. Either way the upstream call is then sent again with
// the answers, until the server's result is complete.

// maxInputRounds bounds the rounds of one call, as the SDK's own client
// does: a server that keeps asking is answered with an error.
const maxInputRounds = 10

// modernUpstream reports whether an upstream session speaks the
// stateless revision.
func modernUpstream(cs *mcp.ClientSession) bool {
	ir := cs.InitializeResult()
	return ir != nil && ir.ProtocolVersion >= "2026-07-28"
}

// inputsOf returns what a result of a modern server needs before the
// call can complete, with the state to send back; ok is false for a
// complete result.
func inputsOf(res mcp.Result) (reqs mcp.InputRequestMap, state string, ok bool) {
	switch r := res.(type) {
	case *mcp.CallToolResult:
		return r.InputRequests, r.RequestState, r.NeedsInput() || r.InputRequests != nil
	case *mcp.GetPromptResult:
		return r.InputRequests, r.RequestState, r.NeedsInput() || r.InputRequests != nil
	case *mcp.ReadResourceResult:
		return r.InputRequests, r.RequestState, r.NeedsInput() || r.InputRequests != nil
	}
	return nil, "", false
}

// withInputs is params for the next round: a copy carrying the answers
// and the server's state (the caller's params are never changed).
func withInputs(params mcp.Params, responses mcp.InputResponseMap, state string) (mcp.Params, error) {
	switch p := params.(type) {
	case *mcp.CallToolParams:
		q := *p
		q.InputResponses, q.RequestState = responses, state
		return &q, nil
	case *mcp.GetPromptParams:
		q := *p
		q.InputResponses, q.RequestState = responses, state
		return &q, nil
	case *mcp.ReadResourceParams:
		q := *p
		q.InputResponses, q.RequestState = responses, state
		return &q, nil
	}
	return nil, fmt.Errorf("mcptray cannot answer the server's input requests for %T", params)
}

// sendAnswering sends a request upstream and, while the server answers
// input_required, answers its needs from call c's client and sends it
// again.
func (h *hub) sendAnswering(ctx context.Context, cs *mcp.ClientSession, c *call, method string, params mcp.Params) (mcp.Result, error) {
	for round := 1; ; round++ {
		res, err := send(ctx, cs, method, h.levelled(cs, params))
		if err != nil {
			return res, err
		}
		reqs, state, needs := inputsOf(res)
		if !needs {
			return res, nil
		}
		if len(reqs) == 0 {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("mcptray: %s is busy (it asked for no input and gave no result); send the request again later", h.name)}
		}
		if round >= maxInputRounds {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("mcptray: %s asked for input %d times for one %s; giving up", h.name, round, method)}
		}
		responses, err := h.answerInputs(ctx, c, reqs)
		if err != nil {
			return nil, err
		}
		if params, err = withInputs(params, responses, state); err != nil {
			return nil, err
		}
	}
}

// answerInputs gets every input request answered, at once (the server
// may ask several things in one result).
func (h *hub) answerInputs(ctx context.Context, c *call, reqs mcp.InputRequestMap) (mcp.InputResponseMap, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	responses := make(mcp.InputResponseMap, len(reqs))
	for key, ir := range reqs {
		wg.Go(func() {
			r, err := h.answerInput(ctx, c, ir)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if firstErr == nil {
					firstErr = err
					cancel()
				}
				return
			}
			responses[key] = r
		})
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return responses, nil
}

// answerInput is one of the server's needs, answered by call c's client:
// asked as a request of its own (initialize era), or as part of the
// gateway's input_required result (2026-07-28).
func (h *hub) answerInput(ctx context.Context, c *call, ir mcp.InputRequest) (mcp.InputResponse, error) {
	method, can := inputMethod(c, ir)
	if method == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("mcptray: %s asked for input of a kind mcptray does not know (%T)", h.name, ir)}
	}
	if !can {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("mcptray: %s needs %s to answer this request, and this client session did not declare it", h.name, method)}
	}
	if c.trip != nil {
		return c.trip.ask(ctx, ir)
	}
	// The client's request context: an HTTP session gets the request on
	// that request's stream. It ends with the upstream call too.
	rctx, cancel := context.WithCancel(c.ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	ss := c.cl.ss
	switch p := ir.(type) {
	case *mcp.ElicitParams:
		if p.ElicitationID != "" {
			h.mu.Lock()
			h.elicits[p.ElicitationID] = c.cl
			h.mu.Unlock()
		}
		q := *p
		q.RequestedSchema = elicitSchema(p.RequestedSchema)
		return ss.Elicit(rctx, &q)
	case *mcp.CreateMessageParams:
		return ss.CreateMessage(rctx, p)
	case *mcp.CreateMessageWithToolsParams:
		if base, ok := plainSampling(p); ok {
			// What an initialize-era client without sampling tools takes.
			return ss.CreateMessage(rctx, base)
		}
		return ss.CreateMessageWithTools(rctx, p)
	case *mcp.ListRootsParams:
		return ss.ListRoots(rctx, p)
	}
	return nil, fmt.Errorf("unreachable: %T", ir)
}

// inputMethod names what an input request asks of a client, and whether
// call c's client declared it can answer.
func inputMethod(c *call, ir mcp.InputRequest) (method string, can bool) {
	switch ir.(type) {
	case *mcp.ElicitParams:
		return "elicitation/create", c.canElicit()
	case *mcp.CreateMessageParams, *mcp.CreateMessageWithToolsParams:
		return "sampling/createMessage", c.canSample()
	case *mcp.ListRootsParams:
		return "roots/list", c.hasRoots()
	}
	return "", false
}

// plainSampling is a sampling request without tools, one content block a
// message, as the sampling/createMessage of the initialize era (the SDK
// decodes every sampling input request as the form with tools).
func plainSampling(p *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageParams, bool) {
	if len(p.Tools) > 0 || p.ToolChoice != nil {
		return nil, false
	}
	out := &mcp.CreateMessageParams{Meta: p.Meta, IncludeContext: p.IncludeContext, MaxTokens: p.MaxTokens, Metadata: p.Metadata,
		ModelPreferences: p.ModelPreferences, StopSequences: p.StopSequences, SystemPrompt: p.SystemPrompt, Temperature: p.Temperature}
	for _, m := range p.Messages {
		if len(m.Content) != 1 {
			return nil, false
		}
		out.Messages = append(out.Messages, &mcp.SamplingMessage{Role: m.Role, Content: m.Content[0]})
	}
	return out, true
}
