package toolsearch_test

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	"mcptray/gateway/toolsearch"
)

// query is one request as a person would word it, and the tools that
// answer it (any of them in the top three is a hit).
type query struct {
	Query string   `json:"query"`
	Want  []string `json:"want"`
}

// TestSearchQuality runs the fixed queries of testdata/queries.json over
// the captured tools of server-everything, server-filesystem,
// server-memory and the demo server: at least 90 % must have a right
// tool in the top three.
func TestSearchQuality(t *testing.T) {
	entries := loadCatalogues(t)
	ix := toolsearch.New(entries)
	qs := loadQueries(t)
	if len(qs) < 30 {
		t.Fatalf("only %d queries; the quality bar needs at least 30", len(qs))
	}
	hits := 0
	for _, q := range qs {
		for _, w := range q.Want {
			if _, ok := ix.Lookup(w); !ok {
				t.Errorf("query %q wants %s, which no captured server lists", q.Query, w)
			}
		}
		ms := ix.Search(q.Query, 3)
		var got []string
		for _, m := range ms {
			got = append(got, m.CallName())
		}
		if slices.ContainsFunc(got, func(n string) bool { return slices.Contains(q.Want, n) }) {
			hits++
		} else {
			t.Logf("miss: %q gave %v, wants one of %v", q.Query, got, q.Want)
		}
	}
	rate := float64(hits) / float64(len(qs))
	t.Logf("top-3 hit rate: %d/%d = %.1f%% over %d tools", hits, len(qs), 100*rate, ix.Len())
	if rate < 0.9 {
		t.Errorf("top-3 hit rate %.1f%% is below 90%%", 100*rate)
	}
}

func loadQueries(t testing.TB) []query {
	t.Helper()
	b, err := os.ReadFile("testdata/queries.json")
	if err != nil {
		t.Fatal(err)
	}
	var qs []query
	if err := json.Unmarshal(b, &qs); err != nil {
		t.Fatal(err)
	}
	return qs
}
