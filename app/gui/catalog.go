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
	key                    string // the name or URI it is known by
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
	// panel holds what panelFor makes for the selected item (a form and
	// a button that calls the server), above the detail (panelFirst) or
	// below it.
	panel    *fyne.Container
	panelFor func(i int) fyne.CanvasObject
	selected widget.ListItemID // the selected row, -1 for none
}

func newCatalogView(what string, panelFor func(int) fyne.CanvasObject, panelFirst bool) *catalogView {
	c := &catalogView{what: what, panelFor: panelFor, panel: container.NewVBox()}
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
	c.selected = -1
	c.list.OnUnselected = func(widget.ListItemID) { c.selected = -1 }
	c.list.OnSelected = func(id widget.ListItemID) {
		if id >= len(c.shown) {
			return
		}
		c.selected = id
		c.detail.SetText(c.items[c.shown[id]].detail)
		if c.panelFor != nil {
			c.panel.Objects = nil
			if p := c.panelFor(c.shown[id]); p != nil {
				c.panel.Objects = []fyne.CanvasObject{p}
			}
			c.panel.Refresh()
		}
	}
	c.detail = widget.NewLabel("")
	c.detail.Wrapping = fyne.TextWrapWord
	c.detail.TextStyle.Monospace = true
	c.count = widget.NewLabel("")
	c.count.Importance = widget.LowImportance
	right := container.NewVBox(c.detail, c.panel)
	if panelFirst {
		right = container.NewVBox(c.panel, c.detail)
	}
	split := container.NewHSplit(c.list, container.NewVScroll(container.NewPadded(right)))
	split.Offset = 0.4
	if panelFor != nil {
		split.Offset = 0.3 // room for the form
	}
	c.content = container.NewBorder(container.NewBorder(nil, nil, nil, c.count, c.search), nil, nil, nil, split)
	return c
}

// SetItems replaces the items (UI thread), keeping the search text, and
// the selection when keep is set and the selected item is still there.
func (c *catalogView) SetItems(items []catalogItem, keep bool) {
	selected := ""
	if id := c.selected; id >= 0 && id < len(c.shown) && keep {
		selected = c.items[c.shown[id]].key
	}
	// shown indexes the old items: empty it before anything redraws.
	c.shown = c.shown[:0]
	c.items = items
	c.list.UnselectAll()
	c.detail.SetText("")
	c.panel.Objects = nil
	c.panel.Refresh()
	c.refilter()
	if selected != "" {
		c.selectKey(selected)
	}
}

// selectKey selects the item known by key, clearing the search if it
// hides it; false when there is none.
func (c *catalogView) selectKey(key string) bool {
	i := slices.IndexFunc(c.items, func(it catalogItem) bool { return it.key == key })
	if i < 0 {
		return false
	}
	if !slices.Contains(c.shown, i) {
		c.search.SetText("")
	}
	id := slices.Index(c.shown, i)
	c.list.Select(id)
	c.list.ScrollTo(id)
	return true
}

// refilter lists the items the search matches. The selection follows its
// item: the list highlights it on its new row, or nothing when the search
// hides it, and the panel shows the form of what is highlighted, never of
// an item the search moved away.
func (c *catalogView) refilter() {
	selected := -1
	if id := c.selected; id >= 0 && id < len(c.shown) {
		selected = c.shown[id]
	}
	q := strings.ToLower(strings.TrimSpace(c.search.Text))
	c.shown = c.shown[:0]
	for i, it := range c.items {
		if q == "" || strings.Contains(strings.ToLower(it.title+"\n"+it.summary), q) {
			c.shown = append(c.shown, i)
		}
	}
	c.list.Refresh()
	if selected >= 0 {
		if id := slices.Index(c.shown, selected); id < 0 {
			c.list.UnselectAll()
			c.selected = -1
			c.detail.SetText("")
			c.panel.Objects = nil
			c.panel.Refresh()
		} else if id != c.selected {
			c.list.Select(id)
		}
	}
	switch {
	case len(c.items) == 0:
		c.count.SetText("no " + c.what)
	case q != "":
		c.count.SetText(fmt.Sprintf("%d of %d", len(c.shown), len(c.items)))
	default:
		c.count.SetText(fmt.Sprintf("%d", len(c.items)))
	}
}

// toolItems lists tools; those from extra on are offered only to the
// window's calls (whose session answers elicitation and sampling).
func toolItems(tools []healthcheck.Tool, extra int) []catalogItem {
	out := make([]catalogItem, 0, len(tools))
	for i, t := range tools {
		// The name and description head the tool's Run panel, above.
		var d strings.Builder
		d.WriteString("Input schema:\n" + prettyJSON(t.InputSchema))
		if len(t.OutputSchema) > 0 {
			d.WriteString("\n\nOutput schema:\n" + prettyJSON(t.OutputSchema))
		}
		summary := firstLine(t.Description)
		if i >= extra {
			summary = "(for calls from this window) " + summary
			d.WriteString("\n\nThe server offers this tool to sessions that can answer it back (elicitation, sampling), as the window's calls do; the health check does not.")
		}
		out = append(out, catalogItem{key: t.Name, title: t.Name, summary: summary, detail: d.String()})
	}
	return out
}

func resourceItems(rs []healthcheck.Resource) []catalogItem {
	out := make([]catalogItem, 0, len(rs))
	for _, r := range rs {
		detail := fmt.Sprintf("%s\n\nURI: %s\nMIME type: %s\n\n%s", nameTitle(r.Name, r.Title), r.URI, orDash(r.MIMEType), r.Description)
		out = append(out, catalogItem{key: r.URI, title: nameTitle(r.Name, r.Title), summary: r.URI, detail: detail})
	}
	return out
}

func templateItems(ts []healthcheck.ResourceTemplate) []catalogItem {
	out := make([]catalogItem, 0, len(ts))
	for _, t := range ts {
		detail := fmt.Sprintf("%s\n\nURI template: %s\nMIME type: %s\n\n%s", nameTitle(t.Name, t.Title), t.URITemplate, orDash(t.MIMEType), t.Description)
		out = append(out, catalogItem{key: t.URITemplate, title: nameTitle(t.Name, t.Title), summary: t.URITemplate, detail: detail})
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
		out = append(out, catalogItem{key: p.Name, title: nameTitle(p.Name, p.Title), summary: firstLine(p.Description), detail: d.String()})
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
