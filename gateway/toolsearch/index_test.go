package toolsearch_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/gateway/toolsearch"
)

func TestTerms(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"filesystem__read_text_file", []string{"filesystem", "read", "text", "file"}},
		{"readFiles", []string{"read", "file"}},
		{"get-tiny-image", []string{"get", "tiny", "imag"}},
		{"HTTPServer", []string{"http", "server"}},
		{"Lists the directories", []string{"list", "directory"}},
		{"creating created creates", []string{"creat", "creat", "creat"}},
		{"running", []string{"run"}},
		{"the of a", nil},
		{"Ünïcode wörds", []string{"ünïcode", "wörds"}},
	} {
		if got := toolsearch.Terms(c.in); !slices.Equal(got, c.want) {
			t.Errorf("Terms(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestSearchRanksNameAboveDescription(t *testing.T) {
	ix := toolsearch.New([]toolsearch.Entry{
		{Server: "a", Tool: &mcp.Tool{Name: "notes", Description: "Keeps notes; can also delete a file it wrote."}},
		{Server: "b", Tool: &mcp.Tool{Name: "delete_file", Description: "Removes a path."}},
		{Server: "c", Tool: &mcp.Tool{Name: "unrelated", Description: "Says hello."}},
	})
	ms := ix.Search("delete a file", 5)
	if len(ms) != 2 || ms[0].CallName() != "delete_file" || ms[1].CallName() != "notes" {
		t.Fatalf("got %v", names(ms))
	}
	if ms := ix.Search("unrelated", 5); len(ms) != 1 || ms[0].CallName() != "unrelated" {
		t.Fatalf("exact name: got %v", names(ms))
	}
	if ms := ix.Search("zzz", 5); len(ms) != 0 {
		t.Fatalf("no match: got %v", names(ms))
	}
}

func TestSearchParameters(t *testing.T) {
	ix := toolsearch.New([]toolsearch.Entry{
		{Tool: &mcp.Tool{Name: "one", InputSchema: map[string]any{"type": "object", "properties": map[string]any{
			"latitude": map[string]any{"type": "number", "description": "degrees north"}}}}},
		{Tool: &mcp.Tool{Name: "two", InputSchema: map[string]any{"type": "object"}}},
	})
	if ms := ix.Search("latitude", 5); len(ms) != 1 || ms[0].CallName() != "one" {
		t.Fatalf("parameter name: got %v", names(ms))
	}
	if ms := ix.Search("north", 5); len(ms) != 1 || ms[0].CallName() != "one" {
		t.Fatalf("parameter description: got %v", names(ms))
	}
}

func TestNewSkipsDuplicatesAndNil(t *testing.T) {
	ix := toolsearch.New([]toolsearch.Entry{{Tool: &mcp.Tool{Name: "x"}}, {Tool: &mcp.Tool{Name: "x", Description: "second"}}, {Name: "y"}})
	if ix.Len() != 1 {
		t.Fatalf("len %d", ix.Len())
	}
	var empty toolsearch.Index
	if empty.Search("x", 3) != nil || empty.Len() != 0 {
		t.Fatal("the zero index is not empty")
	}
}

func names(ms []toolsearch.Match) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.CallName())
	}
	return out
}

// thousand are 1,008 tools: the captured catalogues repeated under 24
// server names, as 24 servers of those kinds would list them.
func thousand(b testing.TB) []toolsearch.Entry {
	base := loadCatalogues(b)
	var out []toolsearch.Entry
	for i := 0; len(out) < 1000; i++ {
		for _, e := range base {
			srv := fmt.Sprintf("%s%d", e.Server, i)
			out = append(out, toolsearch.Entry{Name: srv + "__" + e.Tool.Name, Server: srv, Tool: e.Tool})
		}
	}
	return out
}

// BenchmarkSearch1000 is one search over 1,000 tools (the queries of the
// quality test in turn); `make bench` reports its p50.
func BenchmarkSearch1000(b *testing.B) {
	ix := toolsearch.New(thousand(b))
	qs := loadQueries(b)
	i := 0
	for b.Loop() {
		ix.Search(qs[i%len(qs)].Query, 5)
		i++
	}
}

// BenchmarkBuild1000 is building the index of 1,000 tools.
func BenchmarkBuild1000(b *testing.B) {
	es := thousand(b)
	for b.Loop() {
		toolsearch.New(es)
	}
}
