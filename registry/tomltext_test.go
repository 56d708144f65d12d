package registry

import (
	"slices"
	"strings"
	"testing"
)

func TestTOMLHeader(t *testing.T) {
	for _, tt := range []struct {
		line string
		keys []string
	}{
		{"[servers.demo]", []string{"servers", "demo"}},
		{`  [ servers . "my server" ]  # note`, []string{"servers", "my server"}},
		{`[servers."a\"b"]`, []string{"servers", `a"b`}},
		{"[[profiles]]", []string{"profiles"}},
		{"[mcp_servers.x.env]\r", []string{"mcp_servers", "x", "env"}},
		{`["nested"],`, nil}, // an element of a multi-line array
		{"[servers.one", nil},
		{"command = 1", nil},
	} {
		keys, ok := TOMLHeader(tt.line)
		if ok != (tt.keys != nil) || !slices.Equal(keys, tt.keys) {
			t.Errorf("TOMLHeader(%q) = %q %v, want %q", tt.line, keys, ok, tt.keys)
		}
	}
}

func TestTOMLSetAndDeleteTable(t *testing.T) {
	src := "# top\nmodel = \"o3\"\n\n[mcp_servers.a]\ncommand = \"x\" # mine\n\n[mcp_servers.a.env]\nK = \"v\"\n\n# profiles\n[profiles.fast]\nmodel = \"m\"\n"
	// Added, then removed: the file as it was.
	added, isNew := TOMLSetTable([]byte(src), "[mcp_servers.b]\ncommand = \"y\"\n", "mcp_servers", "b")
	if !isNew || !strings.HasSuffix(string(added), "model = \"m\"\n\n[mcp_servers.b]\ncommand = \"y\"\n") {
		t.Errorf("added:\n%s", added)
	}
	back, removed := TOMLDeleteTable(added, "mcp_servers", "b")
	if !removed || string(back) != src {
		t.Errorf("removed:\n%q\nwant\n%q", back, src)
	}
	// Replaced in place, sub-tables with it; the comment introducing the
	// next table stays.
	repl, isNew := TOMLSetTable([]byte(src), "[mcp_servers.a]\ncommand = \"z\"\n", "mcp_servers", "a")
	if isNew || strings.Contains(string(repl), "K = ") || !strings.Contains(string(repl), "# top\nmodel = \"o3\"\n\n[mcp_servers.a]\ncommand = \"z\"\n") ||
		!strings.Contains(string(repl), "# profiles\n[profiles.fast]") {
		t.Errorf("replaced:\n%s", repl)
	}
	if _, removed := TOMLDeleteTable([]byte(src), "mcp_servers", "nope"); removed {
		t.Error("removed a table that is not there")
	}
	if TOMLHasTable([]byte("mcp_servers.a.command = \"x\"\n"), "mcp_servers", "a") {
		t.Error("dotted keys taken for a table")
	}
}

// A multi-line string holding a line that looks like a table header is not
// one: editing the next server keeps the file's comments (the file is not
// rewritten afresh).
func TestEncodeInPlaceSkipsMultilineStrings(t *testing.T) {
	src := "# my servers\n[servers.a]\ncommand = \"x\"\ndescription = \"\"\"\nnotes\n[servers.b]\n\"\"\"\n\n# the second one\n[servers.b]\ncommand = \"y\"\n"
	cfg := parse(t, src)
	cfg.Server("b").Args = []string{"new"}
	got := string(Encode(cfg))
	if !strings.Contains(got, "# my servers\n") || !strings.Contains(got, "# the second one\n[servers.b]\ncommand = \"y\"\nargs = [\"new\"]") {
		t.Errorf("file rewritten:\n%s", got)
	}
}
