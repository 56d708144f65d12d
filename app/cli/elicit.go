package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/term"

	"mcptray/app"
	"mcptray/app/present"
	"mcptray/app/schemaform"
	"mcptray/healthcheck"
)

// elicitor answers a server's elicitation requests during a call: on a
// terminal by asking field by field, else as --elicit says.
type elicitor struct {
	env         *app.Env
	mode        string // "", "accept-defaults", "decline", "cancel"
	interactive bool   // stdin is a terminal: ask

	mu        sync.Mutex // one form at a time; protects lines
	lines     chan string
	completed func(id string)
}

func newElicitor(env *app.Env, mode string) *elicitor {
	e := &elicitor{env: env, mode: mode}
	if f, ok := env.Stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		e.interactive = true
	}
	e.completed = func(id string) {
		fmt.Fprintf(env.Stderr, "The server says the request in the browser is complete (%s).\n", present.VisibleLine(id))
	}
	return e
}

func (e *elicitor) elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	mode := e.mode
	if mode == "" && !e.interactive {
		mode = "decline"
		fmt.Fprintf(e.env.Stderr, "The server asks: %s\nDeclined: there is no terminal to ask on (--elicit accept-defaults answers with the defaults).\n", present.Visible(p.Message))
	}
	switch mode {
	case "decline", "cancel":
		return &mcp.ElicitResult{Action: mode}, nil
	}
	if p.Mode == "url" || p.URL != "" {
		return e.openURL(ctx, p, mode)
	}
	schema, err := healthcheck.ParseSchema(p.RequestedSchema)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "requestedSchema: " + err.Error()}
	}
	if mode == "accept-defaults" {
		content := map[string]any{}
		for _, name := range schema.Properties() {
			if prop := schema.Property(name); prop != nil && prop.Default != nil {
				var v any
				if err := json.Unmarshal(prop.Default, &v); err == nil {
					content[name] = v
				}
			}
		}
		if err := schema.Check(content); err != nil {
			fmt.Fprintf(e.env.Stderr, "The server asks: %s\nDeclined: --elicit accept-defaults cannot answer: %v\n", present.Visible(p.Message), err)
			return &mcp.ElicitResult{Action: "decline"}, nil
		}
		return &mcp.ElicitResult{Action: "accept", Content: content}, nil
	}
	return e.askForm(ctx, p.Message, schema)
}

// openURL shows a URL-mode elicitation in the browser.
func (e *elicitor) openURL(ctx context.Context, p *mcp.ElicitParams, mode string) (*mcp.ElicitResult, error) {
	w := e.env.Stderr
	fmt.Fprintf(w, "The server asks you to visit a page: %s\n  %s\n", present.Visible(p.Message), present.VisibleLine(p.URL))
	if mode == "" {
		ans, err := e.ask(ctx, "Open it in your browser? [Y/n/cancel] ")
		if err != nil {
			return &mcp.ElicitResult{Action: "cancel"}, nil
		}
		switch strings.ToLower(strings.TrimSpace(ans)) {
		case "", "y", "yes":
		case "c", "cancel":
			return &mcp.ElicitResult{Action: "cancel"}, nil
		default:
			return &mcp.ElicitResult{Action: "decline"}, nil
		}
	}
	if err := app.OpenBrowser(e.env, p.URL); err != nil {
		fmt.Fprintf(w, "The browser did not open (%v): visit the address above.\n", err)
	}
	return &mcp.ElicitResult{Action: "accept"}, nil
}

// askForm asks for each field of a form on the terminal.
func (e *elicitor) askForm(ctx context.Context, message string, schema *healthcheck.Schema) (*mcp.ElicitResult, error) {
	w := e.env.Stderr
	fmt.Fprintf(w, "\nThe server asks: %s\n", present.Visible(message))
	fmt.Fprintln(w, "(Enter keeps the [default]; '-' leaves an optional field out; Ctrl-D cancels.)")
	required := map[string]bool{}
	if root := schema.Root(); root != nil {
		for _, r := range root.Required {
			required[r] = true
		}
	}
	content := map[string]any{}
	// Required fields first, in the order the schema requires them: the
	// SDK hands the schema over as a map, which forgets the written order.
	order := []string{}
	if root := schema.Root(); root != nil {
		order = append(order, root.Required...)
	}
	for _, name := range schema.Properties() {
		if !required[name] {
			order = append(order, name)
		}
	}
	for _, name := range order {
		prop := schema.Property(name)
		if prop == nil {
			continue
		}
		v, set, err := e.askField(ctx, name, prop, required[name])
		if err != nil {
			fmt.Fprintln(w, "\nCancelled.")
			return &mcp.ElicitResult{Action: "cancel"}, nil
		}
		if set {
			content[name] = v
		}
	}
	if err := schema.Check(content); err != nil {
		fmt.Fprintf(w, "These answers do not fit the form: %v\n", err)
	}
	ans, err := e.ask(ctx, "Send these answers? [Y]es, [n]o (decline), [c]ancel: ")
	if err != nil {
		return &mcp.ElicitResult{Action: "cancel"}, nil
	}
	switch strings.ToLower(strings.TrimSpace(ans)) {
	case "", "y", "yes":
		return &mcp.ElicitResult{Action: "accept", Content: content}, nil
	case "c", "cancel":
		return &mcp.ElicitResult{Action: "cancel"}, nil
	}
	return &mcp.ElicitResult{Action: "decline"}, nil
}

// askField asks for one field until the answer fits its schema. set is
// false for an optional field left out.
func (e *elicitor) askField(ctx context.Context, name string, p *jsonschema.Schema, required bool) (any, bool, error) {
	w := e.env.Stderr
	check, _ := healthcheck.ParseSchema(p)
	title := p.Title
	if title == "" {
		title = name
	}
	fmt.Fprintf(w, "\n%s", present.VisibleLine(title))
	if required {
		fmt.Fprint(w, " (required)")
	}
	fmt.Fprintln(w)
	if p.Description != "" {
		fmt.Fprintf(w, "  %s\n", present.VisibleLine(p.Description))
	}
	multi := p.Type == "array" && p.Items != nil
	choices := schemaform.ChoicesOf(p)
	if multi {
		choices = schemaform.ChoicesOf(p.Items)
	}
	for i, c := range choices {
		fmt.Fprintf(w, "  %d) %s\n", i+1, present.VisibleLine(c.Title))
	}
	var hint []string
	switch {
	case multi && len(choices) > 0:
		hint = append(hint, "numbers or values, comma-separated")
	case len(choices) > 0:
		hint = append(hint, "a number or a value")
	case p.Type == "boolean":
		hint = append(hint, "y/n")
	case p.Type == "integer", p.Type == "number":
		rng := p.Type
		if p.Minimum != nil && p.Maximum != nil {
			rng += fmt.Sprintf(" %g–%g", *p.Minimum, *p.Maximum)
		} else if p.Minimum != nil {
			rng += fmt.Sprintf(" ≥ %g", *p.Minimum)
		} else if p.Maximum != nil {
			rng += fmt.Sprintf(" ≤ %g", *p.Maximum)
		}
		hint = append(hint, rng)
	case p.Format != "":
		hint = append(hint, p.Format)
	}
	var def any
	hasDef := p.Default != nil && json.Unmarshal(p.Default, &def) == nil
	prompt := "> "
	if len(hint) > 0 {
		prompt = "(" + strings.Join(hint, "; ") + ") "
	}
	if hasDef {
		prompt += "[" + present.VisibleLine(defaultText(def)) + "] "
	}
	for {
		ans, err := e.ask(ctx, "  "+prompt)
		if err != nil {
			return nil, false, err
		}
		ans = strings.TrimSpace(ans)
		switch {
		case ans == "" && hasDef:
			return def, true, nil
		case ans == "-" && !required, ans == "" && !required:
			return nil, false, nil
		case ans == "":
			fmt.Fprintln(w, "  This field is required.")
			continue
		}
		v, err := fieldValue(p, ans, choices, multi)
		if err == nil {
			err = schemaform.CheckLimits(p, v)
		}
		if err == nil && check != nil {
			err = check.CheckValue(v)
			var ae *healthcheck.ArgsError
			if errors.As(err, &ae) {
				err = errors.New(ae.Why)
			}
		}
		if err != nil {
			fmt.Fprintf(w, "  %v; try again.\n", err)
			continue
		}
		return v, true, nil
	}
}

// defaultText shows a default as it would be typed.
func defaultText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []any:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = defaultText(x)
		}
		return strings.Join(parts, ",")
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// fieldValue reads an answer as the field's type.
func fieldValue(p *jsonschema.Schema, ans string, choices []schemaform.Choice, multi bool) (any, error) {
	pick := func(s string) (any, error) {
		if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= len(choices) {
			return choices[n-1].Value, nil
		}
		for _, c := range choices {
			if fmt.Sprint(c.Value) == s {
				return c.Value, nil
			}
		}
		return nil, fmt.Errorf("%q is not one of the choices", s)
	}
	switch {
	case multi && len(choices) > 0:
		out := []any{}
		for _, part := range strings.Split(ans, ",") {
			v, err := pick(strings.TrimSpace(part))
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case len(choices) > 0:
		return pick(ans)
	case p.Type == "boolean":
		switch strings.ToLower(ans) {
		case "y", "yes", "true":
			return true, nil
		case "n", "no", "false":
			return false, nil
		}
		return nil, fmt.Errorf("answer y or n")
	case p.Type == "integer":
		n, err := strconv.ParseInt(ans, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a whole number", ans)
		}
		return float64(n), nil
	case p.Type == "number":
		f, err := strconv.ParseFloat(ans, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", ans)
		}
		return f, nil
	}
	return ans, nil
}

// ask prints prompt on stderr and reads a line from stdin; io.EOF when
// stdin ends, ctx's error when it ends first.
func (e *elicitor) ask(ctx context.Context, prompt string) (string, error) {
	fmt.Fprint(e.env.Stderr, prompt)
	if e.lines == nil {
		e.lines = make(chan string)
		go func(r io.Reader, out chan<- string) {
			sc := bufio.NewScanner(r)
			for sc.Scan() {
				out <- sc.Text()
			}
			close(out)
		}(e.env.Stdin, e.lines)
	}
	select {
	case l, ok := <-e.lines:
		if !ok {
			return "", io.EOF
		}
		return l, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// sampler answers sampling/createMessage with the --sampling command, or
// declines with the reason when there is none.
func sampler(env *app.Env, command string) func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	if strings.TrimSpace(command) == "" {
		return func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			const why = "mcptray declines sampling: no --sampling command was given to answer it"
			fmt.Fprintln(env.Stderr, "The server asked for sampling (an LLM completion); declined: there is no --sampling command.")
			return nil, &jsonrpc.Error{Code: -1, Message: why}
		}
	}
	argv := strings.Fields(command)
	return func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
		in, err := json.Marshal(p)
		if err != nil {
			return nil, err
		}
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Stdin = bytes.NewReader(in)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			why := strings.TrimSpace(errOut.String())
			if why == "" {
				why = err.Error()
			}
			fmt.Fprintf(env.Stderr, "The --sampling command declined: %s\n", present.VisibleLine(firstLineOf(why)))
			return nil, &jsonrpc.Error{Code: -1, Message: "sampling declined: " + firstLineOf(why)}
		}
		var res mcp.CreateMessageResult
		if err := json.Unmarshal(out.Bytes(), &res); err == nil && res.Content != nil {
			if res.Role == "" {
				res.Role = "assistant"
			}
			if res.Model == "" {
				res.Model = filepath.Base(argv[0])
			}
			return &res, nil
		}
		return &mcp.CreateMessageResult{
			Role: "assistant", Model: filepath.Base(argv[0]), StopReason: "endTurn",
			Content: &mcp.TextContent{Text: strings.TrimRight(out.String(), "\n")},
		}, nil
	}
}

func firstLineOf(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
