package gui

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"image"
	_ "image/gif" // images servers send
	_ "image/jpeg"
	_ "image/png"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/app"
	"mcptray/app/present"
)

// maxImageSide bounds an image shown in a result; larger ones are scaled
// down to fit, keeping their shape.
const maxImageSide = 360

// minImageSide is the size a tiny image (an icon) is enlarged towards.
const minImageSide = 96

// contentView shows what a server sent (a tool's result, a prompt's
// message, a resource's contents): text as text, images drawn, audio and
// binaries behind a Save button that names the file it wrote. from names
// the files saved. bad shows text in the error colour (a tool's isError).
type contentView struct {
	c    *controller
	from string
	bad  bool
	box  *fyne.Container
}

func (c *controller) newContentView(from string, bad bool) *contentView {
	return &contentView{c: c, from: from, bad: bad, box: container.NewVBox()}
}

// text adds a block of text, selectable, in monospace when it is JSON.
func (v *contentView) text(s string) {
	l := widget.NewLabel(strings.TrimSuffix(present.Visible(s), "\n"))
	l.Wrapping = fyne.TextWrapWord
	l.Selectable = true
	if t := strings.TrimSpace(s); strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
		l.TextStyle.Monospace = true
	}
	if v.bad {
		l.Importance = widget.DangerImportance
	}
	v.box.Add(l)
}

// caption adds a quiet line that says what a block is.
func (v *contentView) caption(s string) {
	l := widget.NewLabel(present.VisibleLine(s))
	l.Importance = widget.LowImportance
	l.SizeName = theme.SizeNameCaptionText
	l.Wrapping = fyne.TextWrapWord
	v.box.Add(l)
}

// add shows content blocks.
func (v *contentView) add(cs []mcp.Content) {
	for _, c := range cs {
		switch c := c.(type) {
		case *mcp.TextContent:
			v.text(c.Text)
		case *mcp.ImageContent:
			v.image(c.Data, c.MIMEType)
		case *mcp.AudioContent:
			v.binary("audio", c.Data, c.MIMEType)
		case *mcp.ResourceLink:
			what := "Resource link " + c.URI
			if name := cmp.Or(c.Title, c.Name); name != "" {
				what += " (" + name + ")"
			}
			if c.MIMEType != "" {
				what += ", " + c.MIMEType
			}
			v.caption(what)
			if c.Description != "" {
				v.text(c.Description)
			}
		case *mcp.EmbeddedResource:
			if c.Resource != nil {
				v.resource(c.Resource, false)
			}
		default:
			b, _ := json.Marshal(c)
			v.text(string(b))
		}
	}
}

// resource shows a resource's contents: text as text, images drawn, other
// binaries saved at once (save) or behind a Save button.
func (v *contentView) resource(rc *mcp.ResourceContents, save bool) {
	binary := rc.Blob != nil || rc.Text == "" && rc.MIMEType != "" && !strings.HasPrefix(rc.MIMEType, "text/")
	if !binary {
		v.caption(strings.TrimSpace("Resource " + rc.URI + " " + rc.MIMEType))
		v.text(rc.Text)
		return
	}
	if strings.HasPrefix(rc.MIMEType, "image/") && decodable(rc.Blob) {
		v.image(rc.Blob, rc.MIMEType)
		return
	}
	mimeType := cmp.Or(rc.MIMEType, "application/octet-stream")
	if !save {
		v.from = rc.URI
		v.binary("resource "+rc.URI, rc.Blob, mimeType)
		return
	}
	path, err := app.SaveContent(app.SaveDir(), rc.URI, rc.Blob, mimeType)
	if err != nil {
		v.bad = true
		v.text(fmt.Sprintf("Resource %s (%s, %s) could not be saved: %v", rc.URI, mimeType, present.Plural(len(rc.Blob), "byte"), err))
		v.bad = false
		return
	}
	v.caption(fmt.Sprintf("Resource %s (%s, %s) saved to %s", rc.URI, mimeType, present.Plural(len(rc.Blob), "byte"), path))
}

func decodable(data []byte) bool {
	_, _, err := image.DecodeConfig(bytes.NewReader(data))
	return err == nil
}

// image draws an image at its size (scaled down to fit maxImageSide),
// with what it is and a Save button under it.
func (v *contentView) image(data []byte, mimeType string) {
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		v.binary("image (it does not decode: "+err.Error()+")", data, mimeType)
		return
	}
	img := canvas.NewImageFromResource(fyne.NewStaticResource(v.from+extensionOf(mimeType), app.DrawablePNG(data)))
	img.FillMode = canvas.ImageFillContain
	w, h := float32(cfg.Width), float32(cfg.Height)
	what := fmt.Sprintf("image %d×%d", cfg.Width, cfg.Height)
	switch side := max(w, h); {
	case side > maxImageSide:
		w, h = w*maxImageSide/side, h*maxImageSide/side
	case side > 0 && side*2 <= minImageSide:
		// An icon-sized image is shown larger, its pixels kept sharp.
		n := float32(int(minImageSide / side))
		w, h = w*n, h*n
		img.ScaleMode = canvas.ImageScalePixels
		what += fmt.Sprintf(" (shown at %g×)", n)
	}
	img.SetMinSize(fyne.NewSize(w, h))
	v.box.Add(container.NewHBox(img))
	v.binary(what, data, mimeType)
}

// binary says what a block is and offers to save it.
func (v *contentView) binary(what string, data []byte, mimeType string) {
	line := widget.NewLabel(fmt.Sprintf("%s, %s, %s", what, mimeType, present.Plural(len(data), "byte")))
	line.Importance = widget.LowImportance
	line.Wrapping = fyne.TextWrapWord
	from := v.from
	var save *widget.Button
	save = widget.NewButtonWithIcon("Save", theme.DownloadIcon(), func() {
		path, err := app.SaveContent(app.SaveDir(), from, data, mimeType)
		if err != nil {
			v.c.showError(fmt.Errorf("could not save the %s: %w", what, err))
			return
		}
		save.Disable()
		line.SetText(line.Text + ": saved to " + path)
	})
	save.Importance = widget.LowImportance
	v.box.Add(container.NewBorder(nil, nil, nil, save, line))
}

func extensionOf(mimeType string) string {
	if i := strings.IndexByte(mimeType, '/'); i >= 0 {
		return "." + mimeType[i+1:]
	}
	return ""
}
