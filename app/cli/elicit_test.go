package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/app"
)

const formSchema = `{"type":"object","properties":{
  "name":{"type":"string","title":"Name","description":"Your name"},
  "age":{"type":"integer","minimum":1,"maximum":120,"default":30},
  "email":{"type":"string","format":"email"},
  "pet":{"type":"string","enum":["cat","dog"],"default":"cat"},
  "tools":{"type":"array","items":{"type":"string","enum":["saw","drill","plane"]},"default":["saw"]},
  "agree":{"type":"boolean"}
},"required":["name","agree"]}`

func elicitParams(t *testing.T) *mcp.ElicitParams {
	var schema map[string]any
	if err := json.Unmarshal([]byte(formSchema), &schema); err != nil {
		t.Fatal(err)
	}
	return &mcp.ElicitParams{Mode: "form", Message: "Tell me", RequestedSchema: schema}
}

// TestElicitForm answers a form on the "terminal": required fields first,
// wrong answers asked again with the reason, defaults kept on Enter.
func TestElicitForm(t *testing.T) {
	// name (required): empty, then Ada; agree: "maybe", then y; then in
	// name order: age 500 (too big), then Enter (default); email "x",
	// then a@b.co; pet 2 (dog); tools "1,3"; then send.
	answers := []string{"", "Ada", "maybe", "y", "500", "", "x", "a@b.co", "2", "1,3", ""}
	var stderr strings.Builder
	env := &app.Env{Stdin: strings.NewReader(strings.Join(answers, "\n") + "\n"), Stderr: &stderr}
	e := newElicitor(env, "")
	e.interactive = true
	res, err := e.elicit(context.Background(), elicitParams(t))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"name": "Ada", "agree": true, "age": 30.0, "email": "a@b.co", "pet": "dog", "tools": []any{"saw", "plane"}}
	got, _ := json.Marshal(res.Content)
	wantJSON, _ := json.Marshal(want)
	if res.Action != "accept" || string(got) != string(wantJSON) {
		t.Errorf("got %s %s, want accept %s\n%s", res.Action, got, wantJSON, stderr.String())
	}
	for _, w := range []string{"This field is required.", "answer y or n", "500 is above the maximum, 120", `"x" is not an email address`, "[cat]", "[saw]", "1) cat"} {
		if !strings.Contains(stderr.String(), w) {
			t.Errorf("the prompts lack %q:\n%s", w, stderr.String())
		}
	}
}

// TestElicitNonInteractive: --elicit answers without asking; with no
// terminal the answer is decline.
func TestElicitNonInteractive(t *testing.T) {
	for _, tt := range []struct{ mode, action string }{
		{"", "decline"}, {"decline", "decline"}, {"cancel", "cancel"},
		// name and agree have no default: accept-defaults cannot answer.
		{"accept-defaults", "decline"},
	} {
		var stderr strings.Builder
		e := newElicitor(&app.Env{Stdin: strings.NewReader(""), Stderr: &stderr}, tt.mode)
		res, err := e.elicit(context.Background(), elicitParams(t))
		if err != nil || res.Action != tt.action {
			t.Errorf("--elicit %q: %v %v, want %s", tt.mode, res, err, tt.action)
		}
	}
	p := elicitParams(t)
	p.RequestedSchema.(map[string]any)["required"] = []any{}
	e := newElicitor(&app.Env{Stdin: strings.NewReader(""), Stderr: &strings.Builder{}}, "accept-defaults")
	res, err := e.elicit(context.Background(), p)
	got, _ := json.Marshal(res.Content)
	if err != nil || res.Action != "accept" || string(got) != `{"age":30,"pet":"cat","tools":["saw"]}` {
		t.Errorf("accept-defaults: %v %s %v", res.Action, got, err)
	}
}
