package gui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"mcptray/healthcheck"
)

// catalogItem is one tool, resource, template or prompt as the catalog shows
// it: a title, a one-line summary, and the full detail when selected.
type catalogItem struct {
	title, summary, detail string
}

// catalogView is a searchable list with a detail pane, used for tools,
// resources, resource templates and prompts alike.
type catalogView struct {
	what    string // "tools", for the empty text
	items   []catalogItem
	shown   []int
	search  *widget.Entry
	list    *widget.List
	detail  *widget.Label
	count   *widget.Label
	content fyne.CanvasObject
}

func newCatalogView(what string) *catalogView {
	c := &catalogView{what: what}
	c.search = widget.NewEntry()
	c.search.SetPlaceHolder("Search " + what)
	c.search.OnChanged = func(string) { c.refilter() }
	c.list = widget.NewList(
		func() int { return len(c.shown) },
		func() fyne.CanvasObject {
			t := widget.NewLabel("")
			t.TextStyle.Bold = true
			t.Truncation = fyne.TextTruncateEllipsis
			s := newSubtitle()
			return container.NewVBox(t, s)
		},
		func(id widget.ListItemID, o fyne.CanvasObject) {
			if id >= len(c.shown) {
				return
			}
			it := c.items[c.shown[id]]
			box := o.(*fyne.Container)
			box.Objects[0].(*widget.Label).SetText(it.title)
			setSubtitle(box.Objects[1].(*widget.RichText), it.summary)
		})
	c.list.OnSelected = func(id widget.ListItemID) {
		if id < len(c.shown) {
			c.detail.SetText(c.items[c.shown[id]].detail)
		}
	}
	c.detail = widget.NewLabel("")
	c.detail.Wrapping = fyne.TextWrapWord
	c.detail.TextStyle.Monospace = true
	c.count = widget.NewLabel("")
	c.count.Importance = widget.LowImportance
	split := container.NewHSplit(c.list, container.NewVScroll(c.detail))
	split.Offset = 0.4
	c.content = container.NewBorder(container.NewBorder(nil, nil, nil, c.count, c.search), nil, nil, nil, split)
	return c
}

// SetItems replaces the items (UI thread), keeping the search text.
func (c *catalogView) SetItems(items []catalogItem) {
	// shown indexes the old items: empty it before anything redraws.
	c.shown = c.shown[:0]
	c.items = items
	c.list.UnselectAll()
	c.detail.SetText("")
	c.refilter()
}

func (c *catalogView) refilter() {
	q := strings.ToLower(strings.TrimSpace(c.search.Text))
	c.shown = c.shown[:0]
	for i, it := range c.items {
		if q == "" || strings.Contains(strings.ToLower(it.title+"\n"+it.summary), q) {
			c.shown = append(c.shown, i)
		}
	}
	c.list.Refresh()
	switch {
	case len(c.items) == 0:
		c.count.SetText("no " + c.what)
	case q != "":
		c.count.SetText(fmt.Sprintf("%d of %d", len(c.shown), len(c.items)))
	default:
		c.count.SetText(fmt.Sprintf("%d", len(c.items)))
	}
}

func toolItems(tools []healthcheck.Tool) []catalogItem {
	out := make([]catalogItem, 0, len(tools))
	for _, t := range tools {
		var d strings.Builder
		d.WriteString(t.Name)
		if t.Title != "" {
			d.WriteString(" (" + t.Title + ")")
		}
		d.WriteString("\n\n" + t.Description + "\n\nInput schema:\n" + prettyJSON(t.InputSchema))
		out = append(out, catalogItem{title: t.Name, summary: firstLine(t.Description), detail: d.String()})
	}
	return out
}

func resourceItems(rs []healthcheck.Resource) []catalogItem {
	out := make([]catalogItem, 0, len(rs))
	for _, r := range rs {
		detail := fmt.Sprintf("%s\n\nURI: %s\nMIME type: %s\n\n%s", nameTitle(r.Name, r.Title), r.URI, orDash(r.MIMEType), r.Description)
		out = append(out, catalogItem{title: nameTitle(r.Name, r.Title), summary: r.URI, detail: detail})
	}
	return out
}

func templateItems(ts []healthcheck.ResourceTemplate) []catalogItem {
	out := make([]catalogItem, 0, len(ts))
	for _, t := range ts {
		detail := fmt.Sprintf("%s\n\nURI template: %s\nMIME type: %s\n\n%s", nameTitle(t.Name, t.Title), t.URITemplate, orDash(t.MIMEType), t.Description)
		out = append(out, catalogItem{title: nameTitle(t.Name, t.Title), summary: t.URITemplate, detail: detail})
	}
	return out
}

func promptItems(ps []healthcheck.Prompt) []catalogItem {
	out := make([]catalogItem, 0, len(ps))
	for _, p := range ps {
		var d strings.Builder
		d.WriteString(nameTitle(p.Name, p.Title) + "\n\n" + p.Description + "\n")
		if len(p.Arguments) > 0 {
			d.WriteString("\nArguments:\n")
			for _, a := range p.Arguments {
				req := ""
				if a.Required {
					req = " (required)"
				}
				if a.Description == "" {
					fmt.Fprintf(&d, "  %s%s\n", a.Name, req)
				} else {
					fmt.Fprintf(&d, "  %s%s: %s\n", a.Name, req, a.Description)
				}
			}
		}
		out = append(out, catalogItem{title: nameTitle(p.Name, p.Title), summary: firstLine(p.Description), detail: d.String()})
	}
	return out
}

func nameTitle(name, title string) string {
	if title == "" || title == name {
		return name
	}
	return name + " (" + title + ")"
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// capabilityList renders a capabilities object as one line per
// capability, its flags in brackets: "tools (listChanged)".
func capabilityList(raw json.RawMessage) string {
	var caps map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &caps) != nil {
		return prettyJSON(raw)
	}
	if len(caps) == 0 {
		return "none declared"
	}
	var lines []string
	for _, name := range slices.Sorted(maps.Keys(caps)) {
		var sub map[string]json.RawMessage
		line := "• " + name
		if json.Unmarshal(caps[name], &sub) == nil && len(sub) > 0 {
			var flags []string
			for _, k := range slices.Sorted(maps.Keys(sub)) {
				switch v := strings.TrimSpace(string(sub[k])); v {
				case "true":
					flags = append(flags, k)
				case "false":
				default:
					if strings.HasPrefix(v, "{") {
						flags = append(flags, k)
					} else {
						flags = append(flags, k+" "+v)
					}
				}
			}
			if len(flags) > 0 {
				line += " (" + strings.Join(flags, ", ") + ")"
			}
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

func prettyJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "–"
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}

// newSubtitle is the second, quieter line of a list row: the theme's
// placeholder colour, readable on dark and light themes alike (the disabled
// colour is too faint for text people read).
func newSubtitle() *widget.RichText {
	r := widget.NewRichText(&widget.TextSegment{Style: subtitleStyle})
	r.Truncation = fyne.TextTruncateEllipsis
	return r
}

var subtitleStyle = widget.RichTextStyle{ColorName: theme.ColorNamePlaceHolder, Inline: true}

func setSubtitle(r *widget.RichText, text string) {
	seg := r.Segments[0].(*widget.TextSegment)
	if seg.Text != text {
		seg.Text = text
		r.Refresh()
	}
}
