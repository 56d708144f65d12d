package healthcheck

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"mcptray/internal/clock"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// deleteTimeout bounds the session DELETE the SDK sends on Close: it is a
// courtesy, and Close must not hang on a server that stopped answering.
const deleteTimeout = 500 * time.Millisecond

// httpExchange is one HTTP round trip as far as a diagnosis needs it. It
// holds no request header values: those are where secrets live.
type httpExchange struct {
	method          string
	url             string
	mcpMethod       string // the Mcp-Method header, when the SDK sent one
	status          int    // 0 when the round trip failed
	contentType     string
	wwwAuthenticate string
	err             error

	mu   sync.Mutex // protects body, filled while the SDK reads the response
	body []byte     // the first maxQuotedBody bytes of the response body
}

func (ex *httpExchange) bodyText() string {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	return string(ex.body)
}

func (ex *httpExchange) evidence() []string {
	if ex.status == 0 {
		if errors.Is(ex.err, context.DeadlineExceeded) || errors.Is(ex.err, context.Canceled) {
			return []string{fmt.Sprintf("%s %s: no answer before the deadline", ex.method, safeURL(ex.url))}
		}
		return []string{fmt.Sprintf("%s %s: %s", ex.method, safeURL(ex.url), scrub(fmt.Sprint(ex.err), ex.url))}
	}
	ev := []string{fmt.Sprintf("%s %s → HTTP %d", ex.method, safeURL(ex.url), ex.status)}
	if ex.contentType != "" {
		ev = append(ev, "Content-Type: "+ex.contentType)
	}
	if ex.wwwAuthenticate != "" {
		ev = append(ev, "WWW-Authenticate: "+ex.wwwAuthenticate)
	}
	if b := strings.TrimSpace(ex.bodyText()); b != "" {
		ev = append(ev, "body: "+quote(strings.Join(strings.Fields(b), " ")))
	}
	return ev
}

// recorder is the RoundTripper every request of a session goes through. It
// adds the configured headers and keeps the facts of the latest exchange,
// because the SDK's errors say "Not Found" and drop the rest.
type recorder struct {
	clock   Clock
	base    http.RoundTripper
	headers map[string]string
	// cancelSent, when set, is told of each notifications/cancelled
	// posted (a call waits for it before the session closes).
	cancelSent chan<- struct{}
	// ended, when set, is told of each answer (see [sessionEnd]).
	ended *sessionEnd

	mu        sync.Mutex // protects last, discover and ended
	last      *httpExchange
	discover  *httpExchange // the first server/discover POST
	exchanges int
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range r.headers {
		req.Header.Set(k, v)
	}
	if req.Method == http.MethodDelete {
		ctx, cancel := clock.WithTimeout(req.Context(), r.clock, deleteTimeout)
		defer cancel()
		req = req.WithContext(ctx)
	}
	ex := &httpExchange{method: req.Method, url: req.URL.String(), mcpMethod: req.Header.Get("Mcp-Method")}
	if r.cancelSent != nil && isCancellation(req) {
		defer signal(r.cancelSent)
	}
	resp, err := r.base.RoundTrip(req)
	if err != nil {
		ex.err = err
	} else {
		ex.status = resp.StatusCode
		ex.contentType = resp.Header.Get("Content-Type")
		ex.wwwAuthenticate = resp.Header.Get("WWW-Authenticate")
		resp.Body = &teeBody{ReadCloser: resp.Body, ex: ex}
		if ct := baseMediaType(ex.contentType); resp.StatusCode >= 300 || (ct != "application/json" && ct != "text/event-stream") {
			// The SDK closes such a body unread; keep its start for the
			// evidence and hand the SDK the whole of it.
			head := make([]byte, maxQuotedBody)
			n, _ := io.ReadFull(resp.Body, head)
			r.mu.Lock()
			ended := r.ended
			r.mu.Unlock()
			ended.saw(req, resp.StatusCode, head[:n])
			resp.Body = struct {
				io.Reader
				io.Closer
			}{io.MultiReader(bytes.NewReader(head[:n]), resp.Body), resp.Body}
		}
	}
	if req.Method != http.MethodDelete {
		r.mu.Lock()
		r.last = ex
		r.exchanges++
		if ex.mcpMethod == "server/discover" && r.discover == nil {
			r.discover = ex
		}
		r.mu.Unlock()
	}
	return resp, err
}

// isCancellation reports a POST of notifications/cancelled.
func isCancellation(req *http.Request) bool {
	if req.Method != http.MethodPost || req.GetBody == nil || req.ContentLength > 4096 {
		return false
	}
	body, err := req.GetBody()
	if err != nil {
		return false
	}
	defer body.Close()
	data, err := io.ReadAll(body)
	if err != nil {
		return false
	}
	var h frameHeader
	return json.Unmarshal(data, &h) == nil && len(h.ID) == 0 && string(h.Method) == `"notifications/cancelled"`
}

func (r *recorder) latest() *httpExchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

func (r *recorder) firstDiscover() *httpExchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.discover
}

// teeBody keeps the start of a response body for the evidence.
type teeBody struct {
	io.ReadCloser
	ex *httpExchange
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	if n > 0 {
		t.ex.mu.Lock()
		if room := maxQuotedBody - len(t.ex.body); room > 0 {
			t.ex.body = append(t.ex.body, p[:min(n, room)]...)
		}
		t.ex.mu.Unlock()
	}
	return n, err
}

// newHTTPClient returns a client sending the server's headers through rec.
func newHTTPClient(base *http.Client, headers map[string]string, clock Clock) (*http.Client, *recorder) {
	c := &http.Client{}
	if base != nil {
		*c = *base
	}
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	rec := &recorder{clock: clock, base: rt, headers: headers}
	c.Transport = rec
	return c, rec
}

// detachedSSE keeps the event stream of the SSE transport alive after
// Connect returns: the SDK ties the GET to the context given to Connect,
// which the supervisor bounds with startup_timeout. The stream is ended by
// stop (Session.Close), and by ctx only while the connection is being made.
type detachedSSE struct {
	inner *mcp.SSEClientTransport
	stop  context.CancelFunc
}

func (d *detachedSSE) Connect(ctx context.Context) (mcp.Connection, error) {
	connCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	d.stop = cancel
	unwatch := context.AfterFunc(ctx, cancel)
	conn, err := d.inner.Connect(connCtx)
	if !unwatch() || err != nil {
		// ctx ended first: the stream is already cancelled.
		cancel()
	}
	return conn, err
}

// modernHTTPCall POSTs one stateless request (2026-07-28 needs no session)
// and decodes its reply, sent either as JSON or as an event stream.
func modernHTTPCall(ctx context.Context, client *http.Client, endpoint, version, method string, id jsonrpc.ID, params any) (json.RawMessage, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	body, err := jsonrpc.EncodeMessage(&jsonrpc.Request{ID: id, Method: method, Params: raw})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", version)
	req.Header.Set("Mcp-Method", method)
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		data, err := io.ReadAll(io.LimitReader(resp.Body, maxLine))
		if err != nil {
			return nil, err
		}
		return decodeReply(data, id)
	case "text/event-stream":
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), maxLine)
		var data []byte
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "data:"):
				data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " ")...)
			case line == "" && len(data) > 0:
				if res, err := decodeReply(data, id); err != errNotOurs {
					return res, err
				}
				data = data[:0]
			}
		}
		if err := sc.Err(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("the event stream ended without a reply")
	default:
		return nil, fmt.Errorf("unexpected Content-Type %q", resp.Header.Get("Content-Type"))
	}
}

var errNotOurs = errors.New("not the reply to our request")

func decodeReply(data []byte, id jsonrpc.ID) (json.RawMessage, error) {
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return nil, fmt.Errorf("the reply is not a JSON-RPC message: %w", err)
	}
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || resp.ID != id {
		return nil, errNotOurs
	}
	return resp.Result, resp.Error
}

func baseMediaType(ct string) string {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return strings.ToLower(strings.TrimSpace(ct))
	}
	return mt
}
