package healthcheck

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

const argsSchema = `{"type":"object","properties":{
  "n":{"type":"number"},"i":{"type":"integer","minimum":3},"b":{"type":"boolean"},
  "s":{"type":"string","description":"a string\nsecond line"},"e":{"type":"string","enum":["p","q"]},
  "tags":{"type":"array","items":{"type":"string"}},"nums":{"type":"array","items":{"type":"number"}},
  "o":{"type":"object","properties":{"x":{"type":"integer","minimum":3}},"required":["x"]},
  "any":{}
},"required":["s"],"additionalProperties":false}`

func TestToolArgs(t *testing.T) {
	s, err := ParseSchema(json.RawMessage(argsSchema))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Properties(); !slices.Equal(got, []string{"n", "i", "b", "s", "e", "tags", "nums", "o", "any"}) {
		t.Errorf("property order %v", got)
	}
	tests := []struct {
		name     string
		json     string
		kv       []string
		want     string // the arguments as JSON, when they fit
		field    string // the field named by the error, when they do not
		whyMatch string
	}{
		{"typed flags", "", []string{"s=hi", "n=2.5", "i=4", "b=true", "tags=a,b", "nums=[1,2]", `o={"x":5}`, "any=7"},
			`{"any":7,"b":true,"i":4,"n":2.5,"nums":[1,2],"o":{"x":5},"s":"hi","tags":["a","b"]}`, "", ""},
		{"flags over JSON", `{"s":"a","n":1}`, []string{"n=3"}, `{"n":3,"s":"a"}`, "", ""},
		{"not a number", "", []string{"s=x", "n=two"}, "", "n", `"two" is not a number`},
		{"not an integer", "", []string{"s=x", "i=2.5"}, "", "i", `"2.5" is not an integer`},
		{"missing required", `{}`, nil, "", "s", "is required (a string)"},
		{"wrong JSON type", `{"s":1}`, nil, "", "s", "must be string, not the number 1"},
		{"enum", `{"s":"x","e":"z"}`, nil, "", "e", `must be one of "p", "q"`},
		{"unknown", "", []string{"s=x", "zz=1"}, "", "zz", "the tool takes no such argument"},
		{"nested", `{"s":"x","o":{"x":1}}`, nil, "", "o.x", "minimum"},
		{"nested required", `{"s":"x","o":{}}`, nil, "", "o", "missing properties"},
		{"not an object", `[1]`, nil, "", "", "must be an object"},
		{"bad JSON", `{`, nil, "", "", "do not parse"},
		{"bad flag", "", []string{"novalue"}, "", "", "wants key=value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args, err := s.ToolArgs(tt.json, tt.kv)
			if err == nil {
				err = s.Check(args)
			}
			if tt.want != "" {
				got, _ := json.Marshal(args)
				if err != nil || string(got) != tt.want {
					t.Errorf("got %s, %v; want %s", got, err, tt.want)
				}
				return
			}
			var ae *ArgsError
			if !errors.As(err, &ae) || ae.Field != tt.field || !strings.Contains(ae.Why, tt.whyMatch) {
				t.Errorf("error %#v, want field %q and %q", err, tt.field, tt.whyMatch)
			}
		})
	}
}

func TestNearest(t *testing.T) {
	names := []string{"echo", "get-sum", "get-env", "get-tiny-image", "trigger-long-running-operation"}
	for _, tt := range []struct {
		name string
		want []string
	}{
		{"get-sm", []string{"get-sum"}},
		{"long-running", []string{"trigger-long-running-operation"}},
		{"ECHO", []string{"echo"}},
		{"zzzzzz", nil},
	} {
		if got := nearest(tt.name, names); !slices.Equal(got, tt.want) {
			t.Errorf("nearest(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}
