package app

import (
	"bytes"
	"encoding/base64"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
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

func TestSaveContentNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	a, err := SaveContent(dir, "demo://resource/blob", []byte("one"), "image/png")
	if err != nil {
		t.Fatal(err)
	}
	b, err := SaveContent(dir, "demo://resource/blob", []byte("two"), "image/png")
	if err != nil {
		t.Fatal(err)
	}
	if a == b || filepath.Base(a) != "blob-1.png" || filepath.Base(b) != "blob-2.png" {
		t.Errorf("saved to %s and %s", a, b)
	}
	if got, _ := os.ReadFile(a); string(got) != "one" {
		t.Errorf("first file holds %q", got)
	}
	if _, err := SaveContent(filepath.Join(dir, "missing"), "x", nil, ""); err == nil {
		t.Error("saving into a missing folder did not fail")
	}
}

// TestDrawablePNG: server-everything's tiny image has a colour profile
// with a wrong checksum, which Go's decoder refuses; without it, the
// image decodes.
func TestDrawablePNG(t *testing.T) {
	dir := os.Getenv("MCPTRAY_TEST_SERVERS")
	src, err := os.ReadFile(filepath.Join(dir, "@modelcontextprotocol", "server-everything", "dist", "tools", "get-tiny-image.js"))
	if err != nil {
		t.Skip("server-everything is not installed")
	}
	m := regexp.MustCompile(`MCP_TINY_IMAGE = "([^"]+)"`).FindSubmatch(src)
	if m == nil {
		t.Fatal("no image in get-tiny-image.js")
	}
	data, err := base64.StdEncoding.DecodeString(string(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(bytes.NewReader(data)); err == nil {
		t.Fatal("the image decodes as it is: this test no longer tests anything")
	}
	img, err := png.Decode(bytes.NewReader(DrawablePNG(data)))
	if err != nil {
		t.Fatalf("repaired: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 20 || b.Dy() != 20 {
		t.Errorf("size %v", b)
	}
	if got := DrawablePNG([]byte("not a png")); string(got) != "not a png" {
		t.Errorf("not a PNG changed: %q", got)
	}
}
