package catalog

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"mcptray/registry"
)

// apiPrefix is the registry API's stable version.
const apiPrefix = "/v0.1"

// maxAnswer bounds an answer read into memory: a page of servers is tens
// of kilobytes; a registry that sends more is broken or hostile.
const maxAnswer = 16 << 20

// ErrNotFound means the registry has no such server or version.
var ErrNotFound = errors.New("not in the registry")

// Client reads one registry.
type Client struct {
	base     string
	http     *http.Client
	cacheDir string
}

// Options tune a [Client]; nil means defaults.
type Options struct {
	// HTTP is the client requests go through (default: one with a 30s
	// timeout).
	HTTP *http.Client
	// CacheDir keeps answers with their ETag, so an unchanged answer costs
	// a 304 and an unreachable registry still answers what it answered
	// before. "" means no cache.
	CacheDir string
}

// New returns a client of the registry at baseURL ("" means the official
// one).
func New(baseURL string, opts *Options) (*Client, error) {
	if baseURL == "" {
		baseURL = registry.DefaultRegistry
	}
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("registry URL %q: want http(s)://HOST[/PATH]", baseURL)
	}
	c := &Client{base: strings.TrimRight(baseURL, "/")}
	if opts != nil {
		c.http, c.cacheDir = opts.HTTP, opts.CacheDir
	}
	if c.http == nil {
		c.http = &http.Client{Timeout: 30 * time.Second}
	}
	return c, nil
}

// DefaultCacheDir is where mcptray keeps registry answers: the user cache
// folder's mcptray/registry.
func DefaultCacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("find a cache folder: %w", err)
	}
	return filepath.Join(d, "mcptray", "registry"), nil
}

// BaseURL is the registry's base URL.
func (c *Client) BaseURL() string { return c.base }

// Page is one page of a listing.
type Page struct {
	Servers []Response `json:"servers"`
	// NextCursor asks for the next page ("" on the last one).
	NextCursor string `json:"nextCursor,omitempty"`
	// Stale: the registry could not be reached and this is the answer
	// cached before.
	Stale bool `json:"stale,omitempty"`
}

// SearchOptions narrow a search; nil means the latest version of every
// match, the registry's page size.
type SearchOptions struct {
	Cursor      string
	Limit       int
	AllVersions bool // every version, not only the latest
}

// Search lists the servers whose name holds query (the registry's
// substring match), one page at a time.
func (c *Client) Search(ctx context.Context, query string, opts *SearchOptions) (*Page, error) {
	if opts == nil {
		opts = &SearchOptions{}
	}
	q := url.Values{}
	if query != "" {
		q.Set("search", query)
	}
	if !opts.AllVersions {
		q.Set("version", "latest")
	}
	if opts.Cursor != "" {
		q.Set("cursor", opts.Cursor)
	}
	if opts.Limit > 0 {
		q.Set("limit", strconv.Itoa(opts.Limit))
	}
	body, stale, err := c.get(ctx, apiPrefix+"/servers?"+q.Encode())
	if err != nil {
		return nil, err
	}
	var raw struct {
		Servers  []Response `json:"servers"`
		Metadata struct {
			NextCursor  string `json:"nextCursor"`
			NextCursor0 string `json:"next_cursor"` // as an early version of the docs spelled it
		} `json:"metadata"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, fmt.Errorf("registry %s: the server list is not the API's JSON: %w", c.base, err)
	}
	p := &Page{Servers: raw.Servers, NextCursor: raw.Metadata.NextCursor, Stale: stale}
	if p.NextCursor == "" {
		p.NextCursor = raw.Metadata.NextCursor0
	}
	return p, nil
}

// Get returns the server NAME at version ("" or "latest": the latest).
func (c *Client) Get(ctx context.Context, name, version string) (*Response, error) {
	if name == "" {
		return nil, errors.New("a server name is needed (such as io.github.owner/server)")
	}
	if version == "" {
		version = "latest"
	}
	body, _, err := c.get(ctx, apiPrefix+"/servers/"+url.PathEscape(name)+"/versions/"+url.PathEscape(version))
	if errors.Is(err, ErrNotFound) {
		if version == "latest" {
			return nil, fmt.Errorf("server %q: %w %s (names look like io.github.owner/server: try `mcptray search`)", name, ErrNotFound, c.base)
		}
		return nil, fmt.Errorf("server %q version %s: %w %s", name, version, ErrNotFound, c.base)
	}
	if err != nil {
		return nil, err
	}
	var r Response
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("registry %s: the answer for %s is not the API's JSON: %w", c.base, name, err)
	}
	if r.Server.Name == "" {
		return nil, fmt.Errorf("registry %s: the answer for %s has no server in it", c.base, name)
	}
	return &r, nil
}

// cached is one answer kept on disk.
type cached struct {
	URL  string          `json:"url"`
	ETag string          `json:"etag"`
	Body json.RawMessage `json:"body"`
}

func (c *Client) cachePath(u string) string {
	if c.cacheDir == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(u))
	return filepath.Join(c.cacheDir, hex.EncodeToString(sum[:16])+".json")
}

func (c *Client) readCache(u string) *cached {
	p := c.cachePath(u)
	if p == "" {
		return nil
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return nil
	}
	var e cached
	if json.Unmarshal(data, &e) != nil || e.URL != u || !json.Valid(e.Body) {
		return nil
	}
	return &e
}

func (c *Client) writeCache(e *cached) {
	p := c.cachePath(e.URL)
	if p == "" || e.ETag == "" || !json.Valid(e.Body) {
		return
	}
	data, err := json.Marshal(e)
	if err != nil {
		return
	}
	if os.MkdirAll(filepath.Dir(p), 0o700) != nil {
		return
	}
	// A cache is a convenience: a failed write only costs a download.
	_ = registry.WriteFileAtomic(p, data, &registry.WriteOptions{Perm: 0o600})
}

// get fetches path, answering from the cache on a 304 (and, marked stale,
// when the registry cannot be reached).
func (c *Client) get(ctx context.Context, path string) (body []byte, stale bool, err error) {
	u := c.base + path
	old := c.readCache(u)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, false, fmt.Errorf("registry request %s: %w", u, err)
	}
	req.Header.Set("Accept", "application/json")
	if old != nil {
		req.Header.Set("If-None-Match", old.ETag)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if old != nil && ctx.Err() == nil {
			return old.Body, true, nil
		}
		return nil, false, fmt.Errorf("registry %s: %w", c.base, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return nil, false, fmt.Errorf("registry %s: reading the answer: %w", c.base, err)
	}
	if len(data) > maxAnswer {
		return nil, false, fmt.Errorf("registry %s: answer larger than %d MiB", c.base, maxAnswer>>20)
	}
	switch {
	case resp.StatusCode == http.StatusNotModified && old != nil:
		return old.Body, false, nil
	case resp.StatusCode == http.StatusNotFound:
		return nil, false, ErrNotFound
	case resp.StatusCode != http.StatusOK:
		return nil, false, fmt.Errorf("registry %s: GET %s: %s%s", c.base, path, resp.Status, apiError(data))
	}
	if !json.Valid(data) {
		return nil, false, fmt.Errorf("registry %s: GET %s answered something other than JSON (%s)", c.base, path, resp.Header.Get("Content-Type"))
	}
	c.writeCache(&cached{URL: u, ETag: resp.Header.Get("ETag"), Body: data})
	return data, false, nil
}

// apiError is the {"error": "…"} (or RFC 9457 "detail") of a failed
// answer, as ": …".
func apiError(data []byte) string {
	var e struct {
		Error  string `json:"error"`
		Detail string `json:"detail"`
	}
	if json.Unmarshal(data, &e) == nil {
		if e.Error != "" {
			return ": " + e.Error
		}
		if e.Detail != "" {
			return ": " + e.Detail
		}
	}
	return ""
}
