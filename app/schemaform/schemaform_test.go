package schemaform

import (
	"encoding/json"
	"strings"
	"testing"
)

func mustForm(t *testing.T, schema string) *Form {
	t.Helper()
	f, err := NewForm(json.RawMessage(schema))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestFormFromSchema: each kind of property gets the field that asks for
// it: the required ones first, then the others in the order the schema
// writes them.
func TestFormFromSchema(t *testing.T) {
	f := mustForm(t, `{"type":"object","properties":{
		"includeImage":{"type":"boolean","default":false},
		"messageType":{"type":"string","enum":["error","success","debug"],"description":"Type of message"},
		"count":{"type":"integer","minimum":1,"maximum":10},
		"tags":{"type":"array","items":{"type":"string","enum":["a","b"]}},
		"entities":{"type":"array","items":{"type":"object","properties":{
			"name":{"type":"string"},"observations":{"type":"array","items":{"type":"string"}}},"required":["name"]}},
		"either":{"anyOf":[{"type":"string"},{"type":"number"}]},
		"email":{"type":"string","format":"email","maxLength":40}
	},"required":["messageType","count"]}`)
	if f.JSONOnly != "" {
		t.Fatalf("JSON only: %s", f.JSONOnly)
	}
	var names []string
	kinds := map[string]FieldKind{}
	for _, fd := range f.Fields {
		names = append(names, fd.Name)
		kinds[fd.Name] = fd.Kind
	}
	if got := strings.Join(names, " "); got != "messageType count includeImage tags entities either email" {
		t.Errorf("order %q", got)
	}
	want := map[string]FieldKind{"messageType": FieldChoice, "count": FieldInteger, "includeImage": FieldBool, "tags": FieldChoices,
		"entities": FieldList, "either": FieldJSON, "email": FieldText}
	for n, k := range want {
		if kinds[n] != k {
			t.Errorf("%s: kind %d, want %d", n, kinds[n], k)
		}
	}
	if !f.Fields[0].Required || f.Fields[2].Required || !f.Fields[2].HasDefault || f.Fields[2].Default != false {
		t.Errorf("required/default marks wrong: %+v %+v", f.Fields[0], f.Fields[2])
	}
	if h := f.Fields[1].Hint; h != "integer, 1 to 10" {
		t.Errorf("count hint %q", h)
	}
	if h := f.Fields[6].Hint; h != "email, at most 40 characters" {
		t.Errorf("email hint %q", h)
	}
	ent := f.Fields[4].Item
	if ent.Kind != FieldObject || len(ent.Fields) != 2 || ent.Fields[0].Name != "name" || !ent.Fields[0].Required || ent.Fields[1].Kind != FieldList {
		t.Errorf("nested object: %+v", ent)
	}
}

func TestFieldParse(t *testing.T) {
	f := mustForm(t, `{"type":"object","properties":{
		"n":{"type":"integer","minimum":1,"maximum":10},
		"x":{"type":"number"},
		"mail":{"type":"string","format":"email"},
		"raw":{"anyOf":[{"type":"string"},{"type":"number"}]}}}`)
	by := map[string]*Field{}
	for _, fd := range f.Fields {
		by[fd.Name] = fd
	}
	for _, tt := range []struct {
		field, text string
		want        any
		err         string
	}{
		{"n", " 3 ", 3.0, ""},
		{"n", "3.5", nil, "not a whole number"},
		{"n", "11", nil, "above the maximum, 10"},
		{"x", "2.5", 2.5, ""},
		{"x", "two", nil, "not a number"},
		{"mail", "ada@example.com", "ada@example.com", ""},
		{"mail", "ada", nil, "not an email address"},
		{"raw", "7", 7.0, ""},
		{"raw", `"s"`, "s", ""},
		{"raw", `true`, nil, "has type"},
		{"raw", `{`, nil, "not JSON"},
	} {
		v, err := by[tt.field].Parse(tt.text)
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("%s %q: %v", tt.field, tt.text, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%s %q: error %v, want %q", tt.field, tt.text, err, tt.err)
		case tt.err == "" && v != tt.want:
			t.Errorf("%s %q = %#v, want %#v", tt.field, tt.text, v, tt.want)
		}
	}
	if got := by["n"].Text(4.0); got != "4" {
		t.Errorf("Text(4) = %q", got)
	}
}

func TestFormJSONOnly(t *testing.T) {
	for _, schema := range []string{
		`{"anyOf":[{"type":"object"},{"type":"string"}]}`,
		`{"type":"array","items":{"type":"string"}}`,
		`{"type":"object","additionalProperties":{"type":"string"}}`,
	} {
		if f := mustForm(t, schema); f.JSONOnly == "" {
			t.Errorf("%s: shown as a form", schema)
		}
	}
	if f := mustForm(t, `{"type":"object"}`); f.JSONOnly != "" || len(f.Fields) != 0 {
		t.Errorf("an object without properties: %+v", f)
	}
	if _, err := NewForm(json.RawMessage(`{"type":`)); err == nil {
		t.Error("a schema that does not parse made a form")
	}
}
