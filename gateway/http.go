package gateway

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPOptions tunes the local endpoint.
type HTTPOptions struct {
	// Key is the credential every request must carry: in the path
	// (/mcp/NAME/KEY) or as "Authorization: Bearer KEY".
	Key string
	// SessionTimeout closes HTTP sessions unused for that long (default
	// 30 minutes).
	SessionTimeout time.Duration
	// SameUser, when set, reports whether the peer of a connection is the
	// user the daemon runs as (nil: not checked). [PeerIsSameUser] is one.
	SameUser func(local, remote net.Addr) (bool, error)
	// MaxSessions is how many HTTP sessions are kept at once (default
	// [DefaultMaxSessions]); a new one evicts the one idle longest.
	MaxSessions int
	// BodyTimeout bounds reading a request's body (default 30 seconds).
	BodyTimeout time.Duration
}

// HTTPHandler is the local Streamable HTTP endpoint: one path per server,
// /mcp/NAME/KEY. Requests without the key, with a wrong one, from another
// user, or naming a host or origin other than this machine's loopback
// (DNS rebinding) are refused. Sessions are stateful (sampling,
// elicitation, subscriptions); a 2026-07-28 request without a session is
// served statelessly.
func (g *Gateway) HTTPHandler(opts HTTPOptions) http.Handler {
	return g.endpoint(opts)
}

func (g *Gateway) endpoint(opts HTTPOptions) *endpoint {
	if opts.SessionTimeout <= 0 {
		opts.SessionTimeout = 30 * time.Minute
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = DefaultMaxSessions
	}
	if opts.BodyTimeout <= 0 {
		opts.BodyTimeout = 30 * time.Second
	}
	return &endpoint{g: g, opts: opts, stateful: map[string]http.Handler{}, stateless: map[string]http.Handler{}, conns: map[net.Conn]bool{}}
}

// Limits of the local endpoint.
const (
	// DefaultMaxSessions is how many HTTP sessions the endpoint keeps at
	// once (all servers together); a new one evicts the one idle longest.
	DefaultMaxSessions = 256
	// maxConns bounds the endpoint's open connections: a flood of them
	// cannot take the descriptors the daemon's other work needs.
	maxConns = 512
	// strangerConns bounds the connections of other users held open to be
	// told they are refused; more are closed at once.
	strangerConns = 8
	// idleTimeout closes a kept-alive connection with no request.
	idleTimeout = 2 * time.Minute
)

// HTTPServer is the local endpoint's server, to Serve on a loopback
// listener: [Gateway.HTTPHandler] with the limits a local port open to
// every user of the machine needs. Connections from other users are told
// so and closed (at most a few are held at once, the rest are closed on
// accept); idle connections close after two minutes; a request has 10
// seconds for its headers and 30 for its body; a write to a client that
// reads nothing waits at most [writeStall]; at most [DefaultMaxSessions]
// sessions are kept.
func (g *Gateway) HTTPServer(ctx context.Context, opts HTTPOptions) *http.Server {
	e := g.endpoint(opts)
	return &http.Server{
		Handler:           e,
		ConnContext:       e.connContext,
		ConnState:         e.connState,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
}

type endpoint struct {
	g    *Gateway
	opts HTTPOptions

	mu        sync.Mutex // protects the fields below
	stateful  map[string]http.Handler
	stateless map[string]http.Handler
	conns     map[net.Conn]bool // open connections: true for another user's
	strangers int               // of conns, other users'
}

type connKey struct{}

// peerCheck is a connection's same-user check, made once for all the
// requests it carries.
type peerCheck struct {
	local, remote net.Addr
	once          sync.Once
	same          bool
}

// ConnContext keeps each connection's addresses for the same-user check;
// set it as the http.Server's ConnContext.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, &peerCheck{local: c.LocalAddr(), remote: c.RemoteAddr()})
}

func (p *peerCheck) sameUser(check func(local, remote net.Addr) (bool, error)) bool {
	p.once.Do(func() {
		same, err := check(p.local, p.remote)
		p.same = err == nil && same
	})
	return p.same
}

// connContext checks the peer's user as the connection is accepted, for
// connState to close another user's flood before it is read.
func (e *endpoint) connContext(ctx context.Context, c net.Conn) context.Context {
	pc := &peerCheck{local: c.LocalAddr(), remote: c.RemoteAddr()}
	if e.opts.SameUser != nil {
		pc.sameUser(e.opts.SameUser)
	}
	return context.WithValue(ctx, connKey{}, pc)
}

// connState counts the open connections, closing at once a new one over
// the limits: all of them, or another user's.
func (e *endpoint) connState(c net.Conn, st http.ConnState) {
	switch st {
	case http.StateNew:
		stranger := false
		if e.opts.SameUser != nil {
			same, err := e.opts.SameUser(c.LocalAddr(), c.RemoteAddr())
			stranger = err != nil || !same
		}
		e.mu.Lock()
		over := len(e.conns) >= maxConns || (stranger && e.strangers >= strangerConns)
		if !over {
			e.conns[c] = stranger
			if stranger {
				e.strangers++
			}
		}
		e.mu.Unlock()
		if over {
			_ = c.Close()
		}
	case http.StateClosed, http.StateHijacked:
		e.mu.Lock()
		if stranger, ok := e.conns[c]; ok {
			delete(e.conns, c)
			if stranger {
				e.strangers--
			}
		}
		e.mu.Unlock()
	}
}

// refuse answers a refused request and closes its connection: a client
// without the key has no reason to keep it.
func refuse(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Connection", "close")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": "mcptray: " + msg})
}

func (e *endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !loopbackHost(r.Host) {
		refuse(w, http.StatusForbidden, fmt.Sprintf("refused: Host %q is not this machine's loopback address", r.Host))
		return
	}
	if o := r.Header.Get("Origin"); o != "" && !loopbackOrigin(o) {
		refuse(w, http.StatusForbidden, fmt.Sprintf("refused: Origin %q is not this machine", o))
		return
	}
	rest, ok := strings.CutPrefix(r.URL.EscapedPath(), "/mcp/")
	profile := false
	if !ok {
		rest, profile = strings.CutPrefix(r.URL.EscapedPath(), ProfilePathPrefix)
	}
	if !ok && !profile {
		refuse(w, http.StatusNotFound, "no such endpoint: servers are at /mcp/NAME/KEY, profiles at /profile/NAME/KEY")
		return
	}
	rawName, key, _ := strings.Cut(rest, "/")
	name, err := url.PathUnescape(rawName)
	if err != nil || name == "" {
		refuse(w, http.StatusNotFound, "no such endpoint: servers are at /mcp/NAME/KEY, profiles at /profile/NAME/KEY")
		return
	}
	if key == "" {
		if b, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
			key = strings.TrimSpace(b)
		}
	}
	if key == "" {
		refuse(w, http.StatusUnauthorized, "the gateway key is missing: use the URL `mcptray gateway` prints")
		return
	}
	if subtle.ConstantTimeCompare([]byte(key), []byte(e.opts.Key)) != 1 {
		refuse(w, http.StatusUnauthorized, "wrong gateway key: use the URL `mcptray gateway` prints")
		return
	}
	if e.opts.SameUser != nil {
		if pc, ok := r.Context().Value(connKey{}).(*peerCheck); ok {
			if !pc.sameUser(e.opts.SameUser) {
				refuse(w, http.StatusForbidden, "refused: the connection is not from the user mcptray runs as")
				return
			}
		}
	}
	stateless := statelessRequest(r)
	if !stateless && r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" {
		if !e.makeRoom() {
			w.Header().Set("Retry-After", "10")
			refuse(w, http.StatusServiceUnavailable, fmt.Sprintf("refused: %d HTTP sessions are open and all are busy", e.opts.MaxSessions))
			return
		}
	}
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(e.opts.BodyTimeout))
	if r.Body != nil {
		r.Body = &bodyReader{ReadCloser: r.Body, rc: rc}
	}
	var out http.ResponseWriter = &stallWriter{ResponseWriter: w, rc: rc}
	if r.Method == http.MethodPost {
		var ok bool
		if out, ok = e.exactID(out, r); !ok {
			return
		}
	}
	if profile {
		e.profileHandler(name, stateless).ServeHTTP(out, r)
		return
	}
	e.handler(name, stateless).ServeHTTP(out, r)
}

// ProfilePathPrefix is where the local endpoint serves a profile's
// aggregate: /profile/NAME/KEY.
const ProfilePathPrefix = "/profile/"

// profileHandler serves profile name's aggregate sessions: each HTTP
// session is one aggregate session with a front of its own.
func (e *endpoint) profileHandler(name string, stateless bool) http.Handler {
	e.mu.Lock()
	defer e.mu.Unlock()
	m := e.stateful
	if stateless {
		m = e.stateless
	}
	key := "\x00profile " + name // no server is named so
	if h := m[key]; h != nil {
		return h
	}
	getServer := func(r *http.Request) *mcp.Server {
		return e.g.newAggregate(name, Peer{Via: "http"}).front
	}
	h := mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		Stateless: stateless, SessionTimeout: e.opts.SessionTimeout, Logger: e.g.opts.Logger,
		DisableLocalhostProtection: true,
	})
	m[key] = h
	return h
}

// exactID reads a POST's message and keeps its id as sent: the SDK turns
// a number into an int64 (2^53+1 becomes 2^53, 1.5 becomes 1), so such an
// id is replaced by a string no client can guess, and put back in what
// the response writes. A null id is answered with an invalid-request
// error, a body over [MaxMessage] with an error for its request; false
// when the request was answered.
func (e *endpoint) exactID(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxMessage+1))
	if err != nil {
		refuse(w, http.StatusBadRequest, "reading the request: "+err.Error())
		return nil, false
	}
	if len(body) > MaxMessage {
		big := &OversizeError{Size: len(body), Limit: MaxMessage}
		big.ID, big.Method = headOf(body)
		writeFrame(w, http.StatusRequestEntityTooLarge, big.Reply())
		return nil, false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var head struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if len(bytes.TrimSpace(body)) == 0 || bytes.TrimSpace(body)[0] != '{' || json.Unmarshal(body, &head) != nil || head.Method == "" || head.ID == nil {
		return w, true // not one request with an id: the SDK answers it
	}
	if string(head.ID) == "null" {
		writeFrame(w, http.StatusBadRequest, ErrorFrame(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("mcptray: invalid request %s: its id is null (MCP requests must have a string or number id; a message without one is a notification)", head.Method)))
		return nil, false
	}
	if keptID(head.ID) {
		return w, true
	}
	msg, err := jsonrpc.DecodeMessage(body)
	req, ok := msg.(*jsonrpc.Request)
	if err != nil || !ok {
		return w, true
	}
	sub := fmt.Sprintf("mcptray-id-%s-%d", idSalt(), idSeq.Add(1))
	req.ID, _ = jsonrpc.MakeID(sub)
	nb, err := jsonrpc.EncodeMessage(req)
	if err != nil {
		return w, true
	}
	r.Body = io.NopCloser(bytes.NewReader(nb))
	r.ContentLength = int64(len(nb))
	quoted, _ := json.Marshal(sub)
	return &idWriter{stallWriter: w.(*stallWriter), sub: quoted, raw: head.ID}, true
}

// keptID reports whether the SDK keeps id as it is: a string, or an
// integer a float64 holds exactly.
func keptID(id json.RawMessage) bool {
	if id[0] == '"' {
		return true
	}
	n, err := strconv.ParseInt(string(id), 10, 64)
	return err == nil && n >= -(1<<53) && n <= 1<<53
}

var (
	idSalt = sync.OnceValue(func() string { return newState()[:16] }) // drawn at first use, not at start
	idSeq  atomic.Uint64
)

// idWriter puts the client's id back where the response names the
// substitute (each message of a response is one write).
type idWriter struct {
	*stallWriter
	sub, raw []byte
}

func (w *idWriter) Write(p []byte) (int, error) {
	if !bytes.Contains(p, w.sub) {
		return w.stallWriter.Write(p)
	}
	q := bytes.ReplaceAll(p, w.sub, w.raw)
	if _, err := w.stallWriter.Write(q); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (w *idWriter) Unwrap() http.ResponseWriter { return w.stallWriter.ResponseWriter }

// writeFrame answers a request with one JSON-RPC frame.
func writeFrame(w http.ResponseWriter, status int, frame []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(frame)
}

// makeRoom makes room for a new HTTP session, evicting the one idle
// longest when the endpoint has its fill; false when every one is busy.
func (e *endpoint) makeRoom() bool {
	var open []*client
	for _, h := range e.g.allHubs() {
		for _, cl := range h.clients() {
			if cl.peer.Via == "http" && cl.ss != nil {
				open = append(open, cl)
			}
		}
	}
	for len(open) >= e.opts.MaxSessions {
		victim := -1
		var oldest time.Time
		for i, cl := range open {
			cl.mu.Lock()
			t, busy := cl.last, cl.inflight > 0
			if t.IsZero() {
				t = cl.since
			}
			cl.mu.Unlock()
			if !busy && (victim < 0 || t.Before(oldest)) {
				victim, oldest = i, t
			}
		}
		if victim < 0 {
			return false
		}
		cl := open[victim]
		e.g.opts.Logger.Info("an HTTP session was closed to make room for a new one", "session", cl.id, "idleSince", oldest)
		_ = cl.ss.Close()
		open = append(open[:victim], open[victim+1:]...)
	}
	return true
}

// bodyReader lifts the body's read deadline once the body is read: the
// connection is then read only to see the client go, which a deadline
// would take for it going.
type bodyReader struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) && !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// stallWriter bounds each write of a response (an event stream's
// included) by writeStall: a client that reads nothing loses its stream
// instead of holding a writer for ever.
type stallWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
}

func (s *stallWriter) Write(p []byte) (int, error) {
	_ = s.rc.SetWriteDeadline(time.Now().Add(writeStall))
	n, err := s.ResponseWriter.Write(p)
	_ = s.rc.SetWriteDeadline(time.Time{})
	return n, err
}

func (s *stallWriter) Flush() {
	_ = s.rc.SetWriteDeadline(time.Now().Add(writeStall))
	_ = s.rc.Flush()
	_ = s.rc.SetWriteDeadline(time.Time{})
}

func (s *stallWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// statelessRequest is a 2026-07-28 request outside any session.
func statelessRequest(r *http.Request) bool {
	return r.Header.Get("Mcp-Session-Id") == "" && r.Header.Get("MCP-Protocol-Version") >= "2026-07-28"
}

func (e *endpoint) handler(name string, stateless bool) http.Handler {
	e.mu.Lock()
	defer e.mu.Unlock()
	m := e.stateful
	if stateless {
		m = e.stateless
	}
	if h := m[name]; h != nil {
		return h
	}
	hub := e.g.hub(name)
	getServer := func(r *http.Request) *mcp.Server {
		e.g.up.Touch(name) // starts a server that waits for its first client
		front, err := hub.frontFor(r.Context())
		if err != nil {
			return errorFront(name, err)
		}
		return front
	}
	// Host and Origin are checked above, for every path.
	h := mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		Stateless: stateless, SessionTimeout: e.opts.SessionTimeout, Logger: e.g.opts.Logger,
		DisableLocalhostProtection: true,
	})
	m[name] = h
	return h
}

// loopbackHost reports whether a Host header names this machine's
// loopback (any port).
func loopbackHost(host string) bool {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func loopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return loopbackHost(u.Host)
}
