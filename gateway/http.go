package gateway

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

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
}

// HTTPHandler is the local Streamable HTTP endpoint: one path per server,
// /mcp/NAME/KEY. Requests without the key, with a wrong one, from another
// user, or naming a host or origin other than this machine's loopback
// (DNS rebinding) are refused. Sessions are stateful (sampling,
// elicitation, subscriptions); a 2026-07-28 request without a session is
// served statelessly.
func (g *Gateway) HTTPHandler(opts HTTPOptions) http.Handler {
	if opts.SessionTimeout <= 0 {
		opts.SessionTimeout = 30 * time.Minute
	}
	e := &endpoint{g: g, opts: opts, stateful: map[string]http.Handler{}, stateless: map[string]http.Handler{}}
	return e
}

type endpoint struct {
	g    *Gateway
	opts HTTPOptions

	mu        sync.Mutex // protects the maps
	stateful  map[string]http.Handler
	stateless map[string]http.Handler
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

func refuse(w http.ResponseWriter, status int, msg string) {
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
	if !ok {
		refuse(w, http.StatusNotFound, "no such endpoint: servers are at /mcp/NAME/KEY")
		return
	}
	rawName, key, _ := strings.Cut(rest, "/")
	name, err := url.PathUnescape(rawName)
	if err != nil || name == "" {
		refuse(w, http.StatusNotFound, "no such endpoint: servers are at /mcp/NAME/KEY")
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
	e.handler(name, statelessRequest(r)).ServeHTTP(w, r)
}

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
