// Package toolsearch finds tools by what a person or a model asks for: a
// ranked full-text index (BM25F) over the tools of many servers, for an
// aggregate session that lists a few search tools instead of hundreds of
// definitions.
//
// An [Index] is built once from the tools on offer ([New]) and is then
// read-only: safe for concurrent searches, and rebuilt when the union of tools changes (1,000 tools take about
// 20 ms on one core: BenchmarkBuild1000).
//
// What is indexed, each with its own weight: the tool's name split into
// words (snake_case, camelCase, kebab-case and SERVER__TOOL all split),
// its title, its description, its parameters' names and their
// descriptions, and the server's name. Words are lower-cased and reduced
// to a stem (plural, -ing, -ed) so "reads files" finds read_file; a small
// table of everyday synonyms ("folder" for directory, "remember" for
// memory) is searched at a lower weight, so the words of the tool itself
// always count more.
package toolsearch

import (
	"cmp"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Entry is one tool on offer.
type Entry struct {
	// Name is the name a client calls the tool by (in an aggregate,
	// SERVER__TOOL); "" means Tool.Name.
	Name string
	// Server is the server the tool belongs to ("" when there is one).
	Server string
	Tool   *mcp.Tool
}

// CallName is the name a client calls the entry by.
func (e Entry) CallName() string {
	if e.Name != "" {
		return e.Name
	}
	if e.Tool != nil {
		return e.Tool.Name
	}
	return ""
}

// Match is one search result, best first.
type Match struct {
	Entry
	Score float64
}

// Field weights: a word of the name says most about what a tool does,
// a word deep in a parameter's description least.
const (
	wName       = 4.0
	wTitle      = 3.0
	wServer     = 1.0
	wDesc       = 1.0
	wParamName  = 1.5
	wParamDesc  = 0.5
	wSynonym    = 0.4 // a query word's synonyms, relative to the word itself
	bm25K1      = 1.2
	bm25B       = 0.6
	maxTermsDoc = 4096 // bounds a tool with a huge description or schema
)

// Index is a search index over a set of tools. The zero value is an empty
// index.
type Index struct {
	entries []Entry
	byName  map[string]int
	// postings maps a stem to the documents holding it, with the stem's
	// weighted frequency in each.
	postings map[string][]posting
	docLen   []float64
	avgLen   float64
}

type posting struct {
	doc int32
	tf  float32
}

// New builds the index of entries (their order breaks ties in results).
// Entries without a tool, and second entries of a name already seen, are
// left out.
func New(entries []Entry) *Index {
	ix := &Index{byName: make(map[string]int, len(entries)), postings: map[string][]posting{}}
	tf := map[string]float64{}
	var total float64
	for _, e := range entries {
		if e.Tool == nil {
			continue
		}
		name := e.CallName()
		if _, dup := ix.byName[name]; dup {
			continue
		}
		doc := len(ix.entries)
		ix.byName[name] = doc
		ix.entries = append(ix.entries, e)
		clear(tf)
		n := 0
		add := func(text string, w float64) {
			for _, t := range Terms(text) {
				if n >= maxTermsDoc {
					return
				}
				n++
				tf[t] += w
			}
		}
		add(name, wName)
		if e.Tool.Name != name {
			add(e.Tool.Name, wName)
		}
		add(e.Tool.Title, wTitle)
		if e.Tool.Annotations != nil {
			add(e.Tool.Annotations.Title, wTitle)
		}
		add(e.Server, wServer)
		add(e.Tool.Description, wDesc)
		for _, p := range params(e.Tool.InputSchema) {
			add(p.name, wParamName)
			add(p.desc, wParamDesc)
		}
		var l float64
		for t, f := range tf {
			ix.postings[t] = append(ix.postings[t], posting{doc: int32(doc), tf: float32(f)})
			l += f
		}
		ix.docLen = append(ix.docLen, l)
		total += l
	}
	if len(ix.entries) > 0 {
		ix.avgLen = total / float64(len(ix.entries))
	}
	return ix
}

// Len is how many tools the index holds.
func (ix *Index) Len() int {
	if ix == nil {
		return 0
	}
	return len(ix.entries)
}

// Entries are the tools the index holds, in the order given to [New].
func (ix *Index) Entries() []Entry {
	if ix == nil {
		return nil
	}
	return ix.entries
}

// Lookup is the tool a client calls name.
func (ix *Index) Lookup(name string) (Entry, bool) {
	if ix == nil {
		return Entry{}, false
	}
	i, ok := ix.byName[name]
	if !ok {
		return Entry{}, false
	}
	return ix.entries[i], true
}

// Search returns up to limit tools matching query, best first (limit ≤ 0:
// 10). A tool matches when it holds at least one of the query's words or
// their synonyms; a query naming a tool exactly puts that tool first.
func (ix *Index) Search(query string, limit int) []Match {
	if ix.Len() == 0 {
		return nil
	}
	if limit <= 0 {
		limit = 10
	}
	qw := map[string]float64{}
	for _, t := range Terms(query) {
		qw[t] = max(qw[t], 1)
		for _, s := range synonyms()[t] {
			if _, own := qw[s]; !own {
				qw[s] = max(qw[s], wSynonym)
			}
		}
	}
	scores := make([]float64, len(ix.entries))
	n := float64(len(ix.entries))
	for t, qweight := range qw {
		ps := ix.postings[t]
		if len(ps) == 0 {
			continue
		}
		idf := math.Log(1 + (n-float64(len(ps))+0.5)/(float64(len(ps))+0.5))
		for _, p := range ps {
			f := float64(p.tf)
			norm := bm25K1 * (1 - bm25B + bm25B*ix.docLen[p.doc]/ix.avgLen)
			scores[p.doc] += qweight * idf * f * (bm25K1 + 1) / (f + norm)
		}
	}
	if i, ok := ix.byName[strings.TrimSpace(query)]; ok {
		scores[i] += 1000
	}
	var out []Match
	for i, s := range scores {
		if s > 0 {
			out = append(out, Match{Entry: ix.entries[i], Score: s})
		}
	}
	slices.SortStableFunc(out, func(a, b Match) int { return cmp.Compare(b.Score, a.Score) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

type param struct{ name, desc string }

// params are the names and descriptions of a schema's top-level
// properties, whatever form the schema came in (the SDK hands a server's
// schema on as decoded JSON; a Go server's as *jsonschema.Schema).
func params(schema any) []param {
	var s struct {
		Properties map[string]struct {
			Description string `json:"description"`
			Title       string `json:"title"`
		} `json:"properties"`
	}
	switch v := schema.(type) {
	case nil:
		return nil
	case map[string]any:
		props, _ := v["properties"].(map[string]any)
		out := make([]param, 0, len(props))
		for _, k := range slices.Sorted(maps.Keys(props)) {
			p := param{name: k}
			if m, ok := props[k].(map[string]any); ok {
				d, _ := m["description"].(string)
				t, _ := m["title"].(string)
				p.desc = strings.TrimSpace(t + " " + d)
			}
			out = append(out, p)
		}
		return out
	case json.RawMessage:
		if json.Unmarshal(v, &s) != nil {
			return nil
		}
	default:
		b, err := json.Marshal(v)
		if err != nil || json.Unmarshal(b, &s) != nil {
			return nil
		}
	}
	out := make([]param, 0, len(s.Properties))
	for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
		p := s.Properties[k]
		out = append(out, param{name: k, desc: strings.TrimSpace(p.Title + " " + p.Description)})
	}
	return out
}
