package gateway

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Peer is what the gateway knows of a client session before its handshake.
type Peer struct {
	// Via is how the session came: "stdio" (a `mcptray connect` bridge) or
	// "http" (the local endpoint).
	Via string
	// PID is the bridge's process id (stdio only).
	PID int
}

// client is the gateway's record of one client session.
type client struct {
	ss    *mcp.ServerSession
	id    string
	peer  Peer
	since time.Time
	nth   uint64 // hub.recorded when this record was made

	mu        sync.Mutex // protects the fields below
	name      string     // clientInfo, from the handshake
	version   string
	protocol  string
	caps      *mcp.ClientCapabilities
	level     mcp.LoggingLevel
	last      time.Time // last request
	calls     int
	errors    int
	inflight  int
	drops     int64     // notifications lost: the client read too slowly
	dropNoted time.Time // when the trace last said so

	// agg is the aggregate session this is the record of (nil for a
	// session of this server alone).
	agg *aggSession

	out    outbox
	leased atomic.Bool // the supervisor counts the session (Acquire succeeded)
}

// client returns ss's record, making it for a session seen the first time
// (an HTTP session is first seen at its first request).
func (h *hub) client(ss *mcp.ServerSession) *client {
	h.mu.Lock()
	if cl := h.sessions[ss]; cl != nil {
		h.mu.Unlock()
		return cl
	}
	cl := &client{ss: ss, id: fmt.Sprintf("%s#%d", h.name, h.g.seq.next()), peer: Peer{Via: "http"}, since: h.g.opts.Clock.Now()}
	if ss != nil {
		h.recorded++
		cl.nth = h.recorded
		h.sessions[ss] = cl
	}
	h.mu.Unlock()
	if ss != nil {
		// The supervisor counts the server's clients (and keeps a
		// server that waits for clients running while it has them). A
		// lease that was not given is not released: it would end
		// another session's.
		if err := h.g.up.Acquire(h.name); err != nil {
			h.g.opts.Logger.Warn("a client session is not counted by the supervisor", "server", h.name, "session", cl.id, "error", err)
		} else {
			cl.leased.Store(true)
		}
	}
	cl.identify()
	return cl
}

// release gives back cl's lease, once.
func (h *hub) release(cl *client) {
	if cl.leased.CompareAndSwap(true, false) {
		h.g.up.Release(h.name)
	}
}

// attach records a session the gateway connected itself (a bridge's).
func (h *hub) attach(ss *mcp.ServerSession, peer Peer) *client {
	cl := h.client(ss)
	cl.mu.Lock()
	cl.peer = peer
	cl.mu.Unlock()
	return cl
}

// detach forgets a session that ended.
func (h *hub) detach(ss *mcp.ServerSession) {
	h.mu.Lock()
	cl, ok := h.sessions[ss]
	delete(h.sessions, ss)
	for id, c := range h.elicits {
		if c == cl {
			delete(h.elicits, id)
		}
	}
	h.mu.Unlock()
	if ok {
		h.release(cl)
	}
}

// clients are the sessions connected now. HTTP sessions end without
// telling the gateway; those their front no longer has are forgotten.
func (h *hub) clients() []*client {
	h.mu.Lock()
	fronts := slices.Clone(h.fronts)
	// A session recorded after this may be missing from the fronts'
	// sessions read below (it connected in between): it is not gone.
	seen := h.recorded
	h.mu.Unlock()
	live := map[*mcp.ServerSession]bool{}
	var keep []*mcp.Server
	for _, f := range fronts {
		n := 0
		for ss := range f.Sessions() {
			live[ss] = true
			n++
		}
		if n > 0 {
			keep = append(keep, f)
		}
	}
	h.mu.Lock()
	var out, gone []*client
	for ss, cl := range h.sessions {
		if cl.agg != nil && !cl.agg.isClosed() {
			out = append(out, cl) // an aggregate's: it ends by itself (aggSession.end)
			continue
		}
		if !live[ss] && cl.nth <= seen {
			delete(h.sessions, ss)
			gone = append(gone, cl)
			continue
		}
		out = append(out, cl)
	}
	// Fronts no session uses any more go, except the current one.
	h.fronts = slices.DeleteFunc(h.fronts, func(f *mcp.Server) bool {
		return f != h.front && !slices.Contains(keep, f)
	})
	h.mu.Unlock()
	// The supervisor is called without hub.mu held (see the lock order
	// in hub.go).
	for _, cl := range gone {
		h.release(cl)
	}
	slices.SortFunc(out, func(a, b *client) int { return a.since.Compare(b.since) })
	return out
}

// lastActive is the session that sent a request last, of those can takes.
func (h *hub) lastActive(can func(*client) bool) *client {
	var best *client
	var bestT time.Time
	for _, cl := range h.clients() {
		cl.mu.Lock()
		t := cl.last
		cl.mu.Unlock()
		if can(cl) && (best == nil || t.After(bestT)) {
			best, bestT = cl, t
		}
	}
	return best
}

// identify reads the session's handshake: client name, version, protocol
// and capabilities.
func (c *client) identify() {
	if c.ss == nil {
		return
	}
	p := c.ss.InitializeParams()
	if p == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if p.ClientInfo != nil {
		c.name, c.version = p.ClientInfo.Name, p.ClientInfo.Version
	}
	c.protocol = p.ProtocolVersion
	c.caps = p.Capabilities
}

func (c *client) active(t time.Time) {
	c.identify()
	c.mu.Lock()
	c.last = t
	c.inflight++
	c.mu.Unlock()
}

func (c *client) done(failed bool) {
	c.mu.Lock()
	c.calls++
	c.inflight--
	if failed {
		c.errors++
	}
	c.mu.Unlock()
}

func (c *client) setLevel(l mcp.LoggingLevel) {
	c.mu.Lock()
	c.level = l
	c.mu.Unlock()
}

func (c *client) logLevel() mcp.LoggingLevel {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.level
}

func (c *client) capabilities() *mcp.ClientCapabilities {
	c.identify()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.caps
}

func (c *client) canSample() bool {
	caps := c.capabilities()
	return caps != nil && caps.Sampling != nil
}

func (c *client) canElicit() bool {
	caps := c.capabilities()
	return caps != nil && caps.Elicitation != nil
}

func (c *client) hasRoots() bool {
	caps := c.capabilities()
	return caps != nil && (caps.RootsV2 != nil || caps.Roots.ListChanged)
}

// Session describes one client session connected to a server.
type Session struct {
	ID  string `json:"id"`
	Via string `json:"via"`
	// Profile is the profile of an aggregate session ("" for a session
	// of one server).
	Profile       string    `json:"profile,omitempty"`
	PID           int       `json:"pid,omitempty"`
	ClientName    string    `json:"clientName,omitempty"`
	ClientVersion string    `json:"clientVersion,omitempty"`
	Protocol      string    `json:"protocolVersion,omitempty"`
	Since         time.Time `json:"since"`
	LastRequest   time.Time `json:"lastRequest"`
	Requests      int       `json:"requests"`
	Errors        int       `json:"errors"`
	InFlight      int       `json:"inFlight"`
	// Dropped is how many notifications the session lost because its
	// client did not read them fast enough.
	Dropped int64 `json:"droppedNotifications,omitempty"`
}

func (c *client) describe() Session {
	c.identify()
	c.mu.Lock()
	defer c.mu.Unlock()
	profile := ""
	if c.agg != nil {
		profile = c.agg.profile
	}
	return Session{
		ID: c.id, Via: c.peer.Via, Profile: profile, PID: c.peer.PID, ClientName: c.name, ClientVersion: c.version,
		Protocol: c.protocol, Since: c.since, LastRequest: c.last, Requests: c.calls, Errors: c.errors, InFlight: c.inflight,
		Dropped: c.drops,
	}
}

type seqs struct {
	mu sync.Mutex
	n  uint64
}

func (s *seqs) next() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	return s.n
}
