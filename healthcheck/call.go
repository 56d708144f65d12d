package healthcheck

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"mcptray/internal/clock"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// cancelFlushWait bounds how long a cancelled call waits for its
// notifications/cancelled to be written before it returns (the SDK sends
// it on a goroutine of its own, and closing the session first would lose
// it).
const cancelFlushWait = time.Second

var progressSeq atomic.Int64

// Tool is the tool called name as discovery listed it, or an
// *UnknownError naming the nearest tools.
func (s *Session) Tool(name string) (*mcp.Tool, error) {
	if t, ok := s.tools[name]; ok {
		return t, nil
	}
	names := make([]string, 0, len(s.tools))
	for n := range s.tools {
		names = append(names, n)
	}
	slices.Sort(names)
	return nil, Unknown("tool", name, names)
}

// CallResult is a tool's answer.
type CallResult struct {
	*mcp.CallToolResult
	// OutputError says how structuredContent fails the tool's outputSchema
	// (or that it is missing); nil when it fits or the tool declares none.
	OutputError error
}

// CallTool calls a tool the server listed with args, after checking them
// against its input schema (an *ArgsError, nothing sent). A server that
// asks for input meanwhile (elicitation, sampling, roots; in the
// 2026-07-28 revision an input_required result, answered and retried by
// the SDK) is answered by the session's [ClientHandlers]. When ctx ends
// first, the server is sent notifications/cancelled, and CallTool returns
// once that is written.
func (s *Session) CallTool(ctx context.Context, name string, args map[string]any) (*CallResult, error) {
	tool, err := s.Tool(name)
	if err != nil {
		return nil, err
	}
	in, err := ParseSchema(tool.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("the input schema of tool %s: %w", name, err)
	}
	if err := in.Check(args); err != nil {
		return nil, err
	}
	params := &mcp.CallToolParams{Name: name, Arguments: args}
	s.withProgress(params)
	var res *mcp.CallToolResult
	err = s.request(ctx, "tools/call", func() (err error) {
		res, err = s.cs.CallTool(ctx, params)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := &CallResult{CallToolResult: res}
	if tool.OutputSchema != nil && !res.IsError {
		switch schema, err := ParseSchema(tool.OutputSchema); {
		case err != nil:
			out.OutputError = fmt.Errorf("the tool's outputSchema: %w", err)
		case res.StructuredContent == nil:
			out.OutputError = errors.New("the tool declares an outputSchema but the result has no structuredContent")
		default:
			if err := schema.CheckValue(res.StructuredContent); err != nil {
				out.OutputError = fmt.Errorf("structuredContent does not match the outputSchema: %w", err)
			}
		}
	}
	return out, nil
}

// ReadResource reads the resource at uri (listed or not: templates make
// URIs of their own).
func (s *Session) ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	params := &mcp.ReadResourceParams{URI: uri}
	var res *mcp.ReadResourceResult
	err := s.request(ctx, "resources/read", func() (err error) {
		res, err = s.cs.ReadResource(ctx, params)
		return err
	})
	return res, err
}

// GetPrompt gets a prompt the server listed, after checking that args has
// its required arguments and no others (an *ArgsError, nothing sent).
func (s *Session) GetPrompt(ctx context.Context, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	i := slices.IndexFunc(s.report.Prompts, func(p Prompt) bool { return p.Name == name })
	if i < 0 {
		var names []string
		for _, p := range s.report.Prompts {
			names = append(names, p.Name)
		}
		return nil, Unknown("prompt", name, names)
	}
	p := s.report.Prompts[i]
	var known []string
	for _, a := range p.Arguments {
		known = append(known, a.Name)
		if _, ok := args[a.Name]; a.Required && !ok {
			why := "is required"
			if a.Description != "" {
				why += " (" + firstLine(a.Description) + ")"
			}
			return nil, &ArgsError{Field: a.Name, Why: why}
		}
	}
	for k := range args {
		if !slices.Contains(known, k) {
			return nil, &ArgsError{Field: k, Why: "the prompt takes no such argument" + takes(known)}
		}
	}
	params := &mcp.GetPromptParams{Name: name, Arguments: args}
	var res *mcp.GetPromptResult
	err := s.request(ctx, "prompts/get", func() (err error) {
		res, err = s.cs.GetPrompt(ctx, params)
		return err
	})
	return res, err
}

// Complete asks for completions of argument arg (typed so far: value) of
// a prompt (ref.Type "ref/prompt") or a resource template
// ("ref/resource"); known holds arguments already chosen.
func (s *Session) Complete(ctx context.Context, ref *mcp.CompleteReference, arg, value string, known map[string]string) (*mcp.CompleteResult, error) {
	if caps := s.cs.InitializeResult().Capabilities; caps == nil || caps.Completions == nil {
		return nil, errors.New("the server does not offer argument completion (no completions capability)")
	}
	params := &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: arg, Value: value}}
	if len(known) > 0 {
		params.Context = &mcp.CompleteContext{Arguments: known}
	}
	var res *mcp.CompleteResult
	err := s.request(ctx, "completion/complete", func() (err error) {
		res, err = s.cs.Complete(ctx, params)
		return err
	})
	return res, err
}

// withProgress asks for progress notifications when someone listens.
func (s *Session) withProgress(p interface{ SetProgressToken(any) }) {
	if s.opts.Client != nil && s.opts.Client.Progress != nil {
		p.SetProgressToken(fmt.Sprintf("mcptray-%d", progressSeq.Add(1)))
	}
}

// request runs one request of the SDK's and explains its failure. When
// ctx ended it, it waits (briefly) for the notifications/cancelled the
// SDK sends to be written, so a caller that closes the session next does
// not lose it.
func (s *Session) request(ctx context.Context, method string, do func() error) error {
	drain(s.cancelSent)
	err := do()
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		sent := !clock.Sleep(s.opts.Clock, cancelFlushWait, s.cancelSent)
		return &CallError{Method: method, Cancelled: true, CancelSent: sent, Err: context.Cause(ctx)}
	}
	return &CallError{Method: method, Err: err, url: s.url}
}

// drain takes a stale signal out of ch.
func drain(ch chan struct{}) {
	select {
	case <-ch:
	default:
	}
}

// CallError is a request that failed: the server answered with an error,
// the connection failed, or the caller ended it (Cancelled).
type CallError struct {
	Method    string
	Cancelled bool
	// CancelSent: the server was sent notifications/cancelled.
	CancelSent bool
	Err        error
	url        string // scrubbed from the text
}

func (e *CallError) Error() string {
	var werr *jsonrpc.Error
	if errors.As(e.Err, &werr) {
		return fmt.Sprintf("the server refused %s: %s (JSON-RPC error %d)", e.Method, scrub(werr.Message, e.url), werr.Code)
	}
	msg := scrub(e.Err.Error(), e.url)
	if e.Cancelled {
		msg += "; the server was sent notifications/cancelled"
		if !e.CancelSent {
			msg = scrub(e.Err.Error(), e.url) + "; notifications/cancelled could not be sent in time"
		}
		return fmt.Sprintf("%s ended: %s", e.Method, msg)
	}
	if errors.Is(e.Err, mcp.ErrConnectionClosed) || errors.Is(e.Err, errStdoutClosed) {
		msg = "the connection to the server closed before it answered"
	}
	return fmt.Sprintf("%s failed: %s", e.Method, strings.TrimPrefix(msg, "calling \""+e.Method+"\": "))
}

func (e *CallError) Unwrap() error { return e.Err }

// Client is the session's MCP connection, for relaying requests the
// session has no method of its own for (the gateway's). Requests sent on
// it are answered by the session's [ClientHandlers], like CallTool's.
func (s *Session) Client() *mcp.ClientSession { return s.cs }

// RootsChanged tells the server that the roots [ClientHandlers.ListRoots]
// answers have changed (notifications/roots/list_changed).
func (s *Session) RootsChanged() {
	if s.client == nil {
		return
	}
	// The SDK sends the notification when its own list changes; the
	// list itself is never read while ListRoots answers roots/list.
	marker := &mcp.Root{URI: "file:///.mcptray-roots-changed"}
	s.client.AddRoots(marker)
	s.client.RemoveRoots(marker.URI)
}
