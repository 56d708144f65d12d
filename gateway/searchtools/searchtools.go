// Package searchtools is search exposure: the three tools a session lists
// in place of the tools themselves. search_tools finds tools by what they
// do, describe_tools gives their full definitions, call_tool calls one, its
// arguments checked against the tool's input schema first (with the same
// errors as `mcptray call`: nothing is sent for arguments that do not fit).
//
// The tools on offer come as a [toolsearch.Index]; where a call goes is
// the caller's ([Caller]). An aggregate serves a profile with
//
//	x := searchtools.New(toolsearch.New(entries), route)
//	for _, t := range x.Tools() { /* list t */ }
//	// on tools/call of a name x.Handles:
//	res, err := x.Call(ctx, name, params.Arguments)
package searchtools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/gateway/toolsearch"
	"mcptray/healthcheck"
)

// The names of the three tools.
const (
	SearchTool   = "search_tools"
	DescribeTool = "describe_tools"
	CallTool     = "call_tool"
)

// DefaultLimit and MaxLimit bound how many matches search_tools returns.
const (
	DefaultLimit = 5
	MaxLimit     = 50
)

// Caller sends a call whose arguments fit to the tool's server: e is the
// tool as the index holds it (its server, and the name the server knows it
// by in e.Tool.Name).
type Caller func(ctx context.Context, e toolsearch.Entry, args map[string]any) (*mcp.CallToolResult, error)

// Exposure answers the three tools over one index.
type Exposure struct {
	ix   *toolsearch.Index
	call Caller
}

// New is the exposure of the tools in ix, calls sent through call.
func New(ix *toolsearch.Index, call Caller) *Exposure {
	if ix == nil {
		ix = &toolsearch.Index{}
	}
	return &Exposure{ix: ix, call: call}
}

// Index is the index the exposure searches.
func (x *Exposure) Index() *toolsearch.Index { return x.ix }

// Handles reports whether name is one of the three tools.
func (x *Exposure) Handles(name string) bool {
	return name == SearchTool || name == DescribeTool || name == CallTool
}

// Tools are the three tools' definitions, as a session lists them.
func (x *Exposure) Tools() []*mcp.Tool {
	n := x.ix.Len()
	obj := func(props map[string]any, required ...string) map[string]any {
		return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
	}
	ro := true
	return []*mcp.Tool{
		{
			Name:  SearchTool,
			Title: "Search tools",
			Description: fmt.Sprintf("Finds tools among the %d on offer by what they do (words of their names, descriptions and parameters). "+
				"Returns the best matches with their input schemas; call one with %s.", n, CallTool),
			InputSchema: obj(map[string]any{
				"query": map[string]any{"type": "string", "description": "what the tool should do, in a few words (\"read a file\")"},
				"limit": map[string]any{"type": "integer", "minimum": 1, "maximum": MaxLimit, "description": fmt.Sprintf("how many matches at most (default %d)", DefaultLimit)},
			}, "query"),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: ro},
		},
		{
			Name:        DescribeTool,
			Title:       "Describe tools",
			Description: "Gives the full definitions of tools named by search_tools: description, input and output schemas, annotations.",
			InputSchema: obj(map[string]any{
				"names": map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "minItems": 1, "description": "the tools' names, as search_tools gives them"},
			}, "names"),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: ro},
		},
		{
			Name:  CallTool,
			Title: "Call a tool",
			Description: "Calls a tool found with search_tools. The arguments are checked against the tool's input schema before anything is sent; " +
				"the result is the tool's own.",
			InputSchema: obj(map[string]any{
				"name":      map[string]any{"type": "string", "description": "the tool's name, as search_tools gives it"},
				"arguments": map[string]any{"type": "object", "description": "the tool's arguments, as its input schema describes them"},
			}, "name"),
		},
	}
}

// Found is one match of search_tools, as its result lists it.
type Found struct {
	Name        string  `json:"name"`
	Server      string  `json:"server,omitempty"`
	Title       string  `json:"title,omitempty"`
	Description string  `json:"description,omitempty"`
	InputSchema any     `json:"inputSchema,omitempty"`
	Score       float64 `json:"score"`
}

// Call answers a call of one of the three tools with its raw arguments.
// A name that is not one of them is a JSON-RPC error (the session's
// tools/call of an unknown tool); a call_tool whose target or arguments
// do not fit is a tool error (isError), which a model can read and fix.
func (x *Exposure) Call(ctx context.Context, name string, arguments json.RawMessage) (*mcp.CallToolResult, error) {
	var args map[string]any
	if len(arguments) > 0 && string(arguments) != "null" {
		v, err := healthcheck.DecodeJSON(string(arguments))
		if err != nil {
			return failure("the arguments do not parse: %v", err), nil
		}
		m, ok := v.(map[string]any)
		if !ok {
			return failure("the arguments must be an object"), nil
		}
		args = m
	}
	for _, t := range x.Tools() {
		if t.Name != name {
			continue
		}
		in, err := healthcheck.ParseSchema(t.InputSchema)
		if err != nil {
			return nil, err
		}
		if err := in.Check(args); err != nil {
			return failure("%s: %v", name, err), nil
		}
		switch name {
		case SearchTool:
			return x.search(args), nil
		case DescribeTool:
			return x.describe(args), nil
		default:
			return x.callTool(ctx, args)
		}
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", name)}
}

func (x *Exposure) search(args map[string]any) *mcp.CallToolResult {
	q, _ := args["query"].(string)
	limit := DefaultLimit
	if l, ok := args["limit"].(float64); ok {
		limit = min(max(int(l), 1), MaxLimit)
	}
	found := []Found{}
	for _, m := range x.ix.Search(q, limit) {
		found = append(found, Found{Name: m.CallName(), Server: m.Server, Title: m.Tool.Title, Description: m.Tool.Description,
			InputSchema: m.Tool.InputSchema, Score: float64(int(m.Score*1000)) / 1000})
	}
	out := map[string]any{"tools": found}
	if len(found) == 0 {
		out["note"] = fmt.Sprintf("no tool among the %d on offer matches %q; try other words", x.ix.Len(), q)
	}
	return structured(out)
}

func (x *Exposure) describe(args map[string]any) *mcp.CallToolResult {
	var tools []*mcp.Tool
	for _, v := range args["names"].([]any) {
		n, _ := v.(string)
		e, err := x.lookup(n)
		if err != nil {
			return failure("%s: %v", DescribeTool, err)
		}
		t := *e.Tool
		t.Name = e.CallName()
		tools = append(tools, &t)
	}
	return structured(map[string]any{"tools": tools})
}

func (x *Exposure) callTool(ctx context.Context, args map[string]any) (*mcp.CallToolResult, error) {
	name, _ := args["name"].(string)
	e, err := x.lookup(name)
	if err != nil {
		return failure("%s: %v", CallTool, err), nil
	}
	targs, _ := args["arguments"].(map[string]any)
	if targs == nil {
		targs = map[string]any{}
	}
	in, err := healthcheck.ParseSchema(e.Tool.InputSchema)
	if err != nil {
		return failure("%s: the input schema of tool %s: %v", CallTool, name, err), nil
	}
	if err := in.Check(targs); err != nil {
		return failure("%s %s: %v; nothing was sent", CallTool, name, err), nil
	}
	if x.call == nil {
		return failure("%s: no route to the tool's server", CallTool), nil
	}
	return x.call(ctx, e, targs)
}

// lookup is the tool a client calls name, or the error `mcptray call`
// gives for a tool no server offers.
func (x *Exposure) lookup(name string) (toolsearch.Entry, error) {
	if e, ok := x.ix.Lookup(name); ok {
		return e, nil
	}
	names := make([]string, 0, x.ix.Len())
	for _, e := range x.ix.Entries() {
		names = append(names, e.CallName())
	}
	slices.Sort(names)
	return toolsearch.Entry{}, healthcheck.Unknown("tool", name, names)
}

func structured(v any) *mcp.CallToolResult {
	b, _ := json.Marshal(v)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: v}
}

func failure(format string, a ...any) *mcp.CallToolResult {
	msg := fmt.Sprintf(format, a...)
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: strings.TrimSpace(msg)}}}
}
