package healthcheck

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/registry/tooltrust"
)

// maxPages stops a server that hands out cursors forever.
const maxPages = 1000

// Lists are lists discovery reads (see [Options.Skip]).
type Lists uint8

const (
	ListTools     Lists = 1 << iota
	ListResources       // resources and resource templates
	ListPrompts
	ListAll = ListTools | ListResources | ListPrompts
)

// discover lists what the server declared (but what Options.Skip names),
// every page. The lists go out
// at once (JSON-RPC allows requests in flight together), so discovery costs
// one round trip rather than four. A failing list is a list-failed diagnosis
// (the server is degraded), not an error.
func (s *Session) discover(ctx context.Context) error {
	caps := s.cs.InitializeResult().Capabilities
	if caps == nil {
		caps = &mcp.ServerCapabilities{}
	}
	r := &s.report
	r.Tools, r.Resources, r.ResourceTemplates, r.Prompts = []Tool{}, []Resource{}, []ResourceTemplate{}, []Prompt{}
	s.tools = map[string]*mcp.Tool{}
	type list struct {
		what string
		page func(cursor string) (next string, err error)
	}
	var lists []list
	want := func(l Lists) bool { return s.opts.Skip&l == 0 }
	if caps.Tools != nil && want(ListTools) {
		lists = append(lists, list{"tools", func(cur string) (string, error) {
			res, err := s.cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cur})
			if err != nil {
				return "", err
			}
			for _, t := range res.Tools {
				s.tools[t.Name] = t
				schema, _ := json.Marshal(t.InputSchema)
				tool := Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: schema, Annotations: t.Annotations}
				if t.OutputSchema != nil {
					tool.OutputSchema, _ = json.Marshal(t.OutputSchema)
				}
				r.Tools = append(r.Tools, tool)
			}
			return res.NextCursor, nil
		}})
	}
	if caps.Resources != nil && want(ListResources) {
		lists = append(lists, list{"resources", func(cur string) (string, error) {
			res, err := s.cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cur})
			if err != nil {
				return "", err
			}
			for _, x := range res.Resources {
				r.Resources = append(r.Resources, Resource{URI: x.URI, Name: x.Name, Title: x.Title, Description: x.Description, MIMEType: x.MIMEType})
			}
			return res.NextCursor, nil
		}}, list{"resource templates", func(cur string) (string, error) {
			res, err := s.cs.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cur})
			if err != nil {
				return "", err
			}
			for _, x := range res.ResourceTemplates {
				r.ResourceTemplates = append(r.ResourceTemplates, ResourceTemplate{URITemplate: x.URITemplate, Name: x.Name, Title: x.Title, Description: x.Description, MIMEType: x.MIMEType})
			}
			return res.NextCursor, nil
		}})
	}
	if caps.Prompts != nil && want(ListPrompts) {
		lists = append(lists, list{"prompts", func(cur string) (string, error) {
			res, err := s.cs.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cur})
			if err != nil {
				return "", err
			}
			for _, p := range res.Prompts {
				pr := Prompt{Name: p.Name, Title: p.Title, Description: p.Description}
				for _, a := range p.Arguments {
					pr.Arguments = append(pr.Arguments, PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
				}
				r.Prompts = append(r.Prompts, pr)
			}
			return res.NextCursor, nil
		}})
	}
	// Each list fills its own field of the report; errors keep list order.
	errs := make([]error, len(lists))
	var wg sync.WaitGroup
	for i, l := range lists {
		wg.Go(func() { errs[i] = paginate(ctx, l.page) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			r.Diagnoses = append(r.Diagnoses, listFailed(lists[i].what, err))
		}
	}
	if d := hiddenInstructions(r.Tools); d != nil {
		r.Diagnoses = append(r.Diagnoses, *d)
	}
	if s.wire != nil {
		if s.wire.endState().ended {
			return exitedDuringHandshake(s.wire.stats(), false)
		}
	}
	return nil
}

// paginate calls page with each cursor until the server gives none.
func paginate(ctx context.Context, page func(cursor string) (next string, err error)) error {
	seen := map[string]bool{}
	cursor := ""
	for range maxPages {
		next, err := page(cursor)
		if err != nil {
			return err
		}
		if next == "" {
			return nil
		}
		if seen[next] {
			return fmt.Errorf("the server returned cursor %q twice; its pagination loops", next)
		}
		seen[next] = true
		cursor = next
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return fmt.Errorf("more than %d pages; stopped", maxPages)
}

// hiddenInstructions is the warning for tools whose definitions carry
// signs of instructions a person does not see (tooltrust.Flags), nil when
// none does.
func hiddenInstructions(tools []Tool) *Diagnosis {
	var evidence, names []string
	for _, t := range tools {
		def := tooltrust.Definition{Title: t.Title, Description: t.Description, InputSchema: t.InputSchema, OutputSchema: t.OutputSchema}
		if t.Annotations != nil {
			def.Annotations, _ = json.Marshal(t.Annotations)
		}
		flags := def.Flags()
		if len(flags) == 0 {
			continue
		}
		names = append(names, t.Name)
		for _, f := range flags {
			evidence = append(evidence, fmt.Sprintf("tool %s: %s", t.Name, f))
		}
	}
	if len(names) == 0 {
		return nil
	}
	what := "Tool " + names[0] + "'s definition carries"
	if len(names) > 1 {
		what = fmt.Sprintf("%d tools' definitions (%s) carry", len(names), strings.Join(names, ", "))
	}
	return &Diagnosis{
		Code:     CodeHiddenInstructions,
		Message:  fmt.Sprintf("%s signs of instructions to the model that a person does not see (%d, below).", what, len(evidence)),
		Evidence: evidence,
		Fix:      "Read the definitions in full (`mcptray check --json NAME`) before a client uses them; `mcptray tools hold NAME TOOL` keeps a tool from every client.",
	}
}
