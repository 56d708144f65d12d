package gui

import (
	"testing"
)

// TestToolsTabFormFollowsTheHighlightedTool: the search moves tools to
// other rows; the highlighted row and the form shown stay one tool, and a
// tool the search hides leaves no form of its own behind.
func TestToolsTabFormFollowsTheHighlightedTool(t *testing.T) {
	c := newTestController(t, newFakeEngine(sampleSnapshot()), "")
	c.apply(c.eng.Snapshot())
	m := c.main
	m.selectServer("demo")
	m.showTab("Tools")
	tools := m.tools
	shows := func(want string) {
		t.Helper()
		got := ""
		if tools.selected >= 0 && tools.selected < len(tools.shown) {
			got = tools.items[tools.shown[tools.selected]].key
		}
		if got != want {
			t.Errorf("highlighted %q, want %q (search %q)", got, want, tools.search.Text)
		}
		if want == "" {
			if len(tools.panel.Objects) != 0 {
				t.Errorf("a form is shown with no tool highlighted (search %q)", tools.search.Text)
			}
			return
		}
		p, ok := m.panel.(*toolPanel)
		if !ok || p.tool.Name != want || len(tools.panel.Objects) != 1 {
			t.Errorf("the form shown is not %s's (search %q)", want, tools.search.Text)
		}
	}

	// echo is on the first row; the search leaves only time, on that row.
	tools.list.Select(0)
	shows("echo")
	tools.search.SetText("ti")
	shows("")
	tools.list.Select(0)
	shows("time")

	// time, on the third row, moves to the first: it stays highlighted.
	tools.search.SetText("")
	shows("time")
	tools.search.SetText("ti")
	shows("time")
	tools.search.SetText("add")
	shows("")
}
