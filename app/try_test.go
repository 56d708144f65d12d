package app

import (
	"bytes"
	"encoding/base64"
	"image/png"
	"mcptray/internal/testenv"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

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
		testenv.Need(t, "server-everything (make test installs it)")
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
