package schemaform

import (
	"testing"

	"mcptray/healthcheck"
)

func TestTemplateAndPromptForms(t *testing.T) {
	f, err := TemplateForm("demo://resource/dynamic/{kind}/{resourceId}")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Fields) != 2 || f.Fields[0].Name != "kind" || f.Fields[1].Name != "resourceId" || !f.Fields[1].Required {
		t.Fatalf("template fields: %+v", f.Fields)
	}
	uri, err := ExpandTemplate("demo://resource/dynamic/{kind}/{resourceId}", map[string]any{"kind": "text", "resourceId": "a b/c"})
	if err != nil || uri != "demo://resource/dynamic/text/a%20b%2Fc" {
		t.Errorf("expanded %q, %v", uri, err)
	}
	if _, err := TemplateForm("demo://{unclosed"); err == nil {
		t.Error("a broken template made a form")
	}

	p := healthcheck.Prompt{Name: "args-prompt", Arguments: []healthcheck.PromptArgument{
		{Name: "city", Description: "Name of the city", Required: true}, {Name: "state"}}}
	pf, err := PromptForm(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(pf.Fields) != 2 || pf.Fields[0].Name != "city" || !pf.Fields[0].Required || pf.Fields[1].Required || pf.Fields[0].Description != "Name of the city" {
		t.Fatalf("prompt fields: %+v", pf.Fields)
	}
	if err := pf.Check(map[string]any{"state": "x"}); err == nil {
		t.Error("a prompt form without its required argument passes")
	}
}
