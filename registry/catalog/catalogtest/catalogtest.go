// Package catalogtest serves recorded MCP Registry answers over a real
// local HTTP server, for tests of what reads the registry: the read API's
// listing (search, version=latest, cursor and limit), one version by name,
// 404s with the API's {"error": …} body, and ETags with 304 answers.
package catalogtest

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Registry is a running local registry.
type Registry struct {
	*httptest.Server

	mu       sync.Mutex // guards the fields below
	entries  []json.RawMessage
	names    []string // of entries, "NAME:VERSION"
	requests []string // every request's path and query, in order
	notMod   int      // how many answers were 304
}

// Serve starts a registry answering with every *.json in dir (each one
// server as the API answers it: {"server": …, "_meta": …}). It stops with
// the test.
func Serve(t testing.TB, dir string) *Registry {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded answers in %s (%v)", dir, err)
	}
	r := &Registry{}
	type rec struct {
		key  string
		body json.RawMessage
	}
	var recs []rec
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var head struct {
			Server struct{ Name, Version string } `json:"server"`
		}
		if err := json.Unmarshal(data, &head); err != nil || head.Server.Name == "" {
			t.Fatalf("%s: not a recorded server answer: %v", f, err)
		}
		recs = append(recs, rec{head.Server.Name + ":" + head.Server.Version, data})
	}
	// The registry lists by name, then version: the cursor is the last
	// NAME:VERSION of a page, as its documentation shows.
	slices.SortFunc(recs, func(a, b rec) int { return cmp.Compare(a.key, b.key) })
	for _, x := range recs {
		r.names = append(r.names, x.key)
		r.entries = append(r.entries, x.body)
	}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

// Requests returns the requests so far (path?query).
func (r *Registry) Requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.requests)
}

// NotModified is how many answers were 304 Not Modified.
func (r *Registry) NotModified() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.notMod
}

func (r *Registry) serve(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests = append(r.requests, req.URL.RequestURI())
	if req.Method != http.MethodGet {
		writeJSON(w, req, http.StatusMethodNotAllowed, map[string]string{"error": "read-only registry"}, r)
		return
	}
	path := req.URL.EscapedPath()
	switch {
	case path == "/v0.1/servers" || path == "/v0/servers":
		r.list(w, req)
	case strings.HasPrefix(path, "/v0.1/servers/") || strings.HasPrefix(path, "/v0/servers/"):
		rest := path[strings.Index(path, "/servers/")+len("/servers/"):]
		escName, escVersion, ok := strings.Cut(rest, "/versions/")
		name, err1 := url.PathUnescape(escName)
		version, err2 := url.PathUnescape(escVersion)
		if !ok || err1 != nil || err2 != nil {
			writeJSON(w, req, http.StatusNotFound, map[string]string{"error": "Server not found"}, r)
			return
		}
		r.one(w, req, name, version)
	default:
		writeJSON(w, req, http.StatusNotFound, map[string]string{"error": "Not found"}, r)
	}
}

func (r *Registry) latest() map[string]string {
	// The last version of each name in listing order is not necessarily
	// the latest: the recorded isLatest says.
	out := map[string]string{}
	for i, e := range r.entries {
		var m struct {
			Meta struct {
				Official struct {
					IsLatest bool `json:"isLatest"`
				} `json:"io.modelcontextprotocol.registry/official"`
			} `json:"_meta"`
		}
		_ = json.Unmarshal(e, &m)
		name, _, _ := strings.Cut(r.names[i], ":")
		if m.Meta.Official.IsLatest {
			out[name] = r.names[i]
		}
	}
	return out
}

func (r *Registry) list(w http.ResponseWriter, req *http.Request) {
	q := req.URL.Query()
	search := strings.ToLower(q.Get("search"))
	limit := 30
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 {
			writeJSON(w, req, http.StatusBadRequest, map[string]string{"error": "limit must be a positive number"}, r)
			return
		}
		limit = n
	}
	latest := r.latest()
	var picked []json.RawMessage
	var keys []string
	for i, key := range r.names {
		name, _, _ := strings.Cut(key, ":")
		if search != "" && !strings.Contains(strings.ToLower(name), search) {
			continue
		}
		if q.Get("version") == "latest" && latest[name] != key {
			continue
		}
		if c := q.Get("cursor"); c != "" && key <= c {
			continue
		}
		picked = append(picked, r.entries[i])
		keys = append(keys, key)
	}
	meta := map[string]any{}
	if len(picked) > limit {
		picked, keys = picked[:limit], keys[:limit]
		meta["nextCursor"] = keys[len(keys)-1]
	}
	meta["count"] = len(picked)
	if picked == nil {
		picked = []json.RawMessage{}
	}
	writeJSON(w, req, http.StatusOK, map[string]any{"servers": picked, "metadata": meta}, r)
}

func (r *Registry) one(w http.ResponseWriter, req *http.Request, name, version string) {
	if version == "latest" {
		version = strings.TrimPrefix(r.latest()[name], name+":")
	}
	i := slices.Index(r.names, name+":"+version)
	if i < 0 {
		writeJSON(w, req, http.StatusNotFound, map[string]string{"error": "Server not found"}, r)
		return
	}
	writeJSON(w, req, http.StatusOK, r.entries[i], r)
}

// writeJSON answers v with an ETag, or 304 when the client has it.
func writeJSON(w http.ResponseWriter, req *http.Request, status int, v any, r *Registry) {
	data, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if status == http.StatusOK {
		sum := sha256.Sum256(data)
		etag := `"` + hex.EncodeToString(sum[:8]) + `"`
		w.Header().Set("ETag", etag)
		if req.Header.Get("If-None-Match") == etag {
			r.notMod++
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(data)
}
