// Package gateway is where AI clients reach the servers mcptray supervises.
// Each client session (a stdio bridge over the control socket, or a session
// of the local Streamable HTTP endpoint) talks MCP to the gateway, and the
// gateway relays it to the one supervised instance of the server: the
// health check's own session, so what the tray shows is what the clients
// use.
//
// Downstream, every client session does its own handshake, in its own era
// (2026-07-28 or the initialize era), against a front made from what the
// upstream server declared (serverInfo, capabilities, instructions).
// Upstream, the handshake happened once, when the supervisor started the
// server, and happens again after every restart.
//
// What is shared, and how it is kept apart:
//
//   - Requests are relayed with the SDK's own request ids on each side, so
//     ids of different sessions never meet; a client's id is answered
//     exactly as it sent it (lines.go, http.go).
//   - What goes to a session waits in that session's own bounded queue
//     (fanout.go): a client that reads nothing loses notifications, and
//     holds up no other session and not the server.
//   - Progress tokens are replaced by tokens unique to the gateway, and
//     notifications/progress goes back to the session that asked, with its
//     own token. A cancelled request (notifications/cancelled, or a client
//     that went away) is cancelled upstream.
//   - list_changed notifications go to every session; resources/updated
//     only to the sessions subscribed to the resource (upstream, a resource
//     is subscribed while at least one session is).
//   - logging/setLevel is per session; upstream gets the most verbose level
//     any session asked for, and each session is sent only what its own
//     level lets through.
//   - A server's own requests (sampling/createMessage, elicitation/create,
//     roots/list) go to the session whose request is in flight. When several
//     are, the one that sent its request last gets it: a server asks in
//     answer to the request it is working on, and the newest is the likeliest
//     (over stdio the protocol does not say which). With none in flight,
//     roots/list goes to the session active last that declared roots; the
//     others are answered with an error that says no client can take them.
package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/healthcheck"
	"mcptray/internal/clock"
	"mcptray/registry"
	"mcptray/registry/tooltrust"
	"mcptray/supervisor"
)

// Upstreams are the supervised servers the gateway relays to: a
// [supervisor.Supervisor].
type Upstreams interface {
	// Use runs fn with server name's live session, waiting until it has one.
	Use(ctx context.Context, name string, fn func(ctx context.Context, sess supervisor.Session) error) error
	Snapshot() supervisor.Snapshot
	// Watch returns a channel closed at the next change.
	Watch() <-chan struct{}
	// Acquire counts a client session of server name until Release, and
	// starts a server that waits for its first client (start = "lazy",
	// or stopped by idle_stop); Touch is a use now (idle_stop counts from
	// the last one).
	Acquire(name string) error
	Release(name string)
	Touch(name string)
	// NewInstance starts a process of server name (share = false) for one
	// client session; EndInstance stops it.
	NewInstance(name string) (string, error)
	EndInstance(instance string) error
}

// Upstream is what the gateway needs of a server's session: the health
// check's [healthcheck.Session] is one.
type Upstream interface {
	supervisor.Session
	Client() *mcp.ClientSession
	RootsChanged()
}

// Options tunes a [Gateway]. The zero value is ready to use.
type Options struct {
	// Logger receives the gateway's own records; nil discards.
	Logger *slog.Logger
	// TraceFrames is how many frames each server's trace keeps (default
	// 1000).
	TraceFrames int
	// Clock is the time of sessions and latencies and the gateway's
	// timers: a round trip's abandon and keep, the sweep (default the
	// system's).
	Clock clock.Clock
	// Trust is the store of approved tool definitions: a tool it holds
	// reaches no session (trust.go). Nil: every tool passes.
	Trust *tooltrust.Store
	// CatalogueDir keeps each server's last catalogue (tools, prompts,
	// resources), so an aggregate lists a lazy server without starting
	// it ("" keeps none).
	CatalogueDir string
	// HeldTool, when set, says why a server's tool is held back from
	// aggregates ("" when it is not); call [Gateway.HoldsChanged] when
	// its answers change.
	HeldTool func(server string, t *mcp.Tool) string
}

// Gateway relays client sessions to supervised servers. Create it with
// [New], give each server's health-check session its [Gateway.Handlers],
// and run it with [Gateway.Run].
type Gateway struct {
	up   Upstreams
	opts Options

	mu   sync.Mutex // protects hubs
	hubs map[string]*hub

	seq seqs

	aggMu    sync.Mutex // protects profiles, offers and aggs
	profiles profiles
	offers   map[string]*offer // by profile, as last made
	aggs     map[*aggSession]struct{}
	cats     catalogues
	kick     chan struct{} // the aggregates' offers may have changed
	holdGen  atomic.Int64

	ptMu     sync.Mutex            // protects ptraces and psecrets; a leaf
	ptraces  map[string]*traceRing // each profile's trace, by profile
	psecrets []string              // every server's secrets, masked in the profiles' traces
	// seen is each server's entry as refreshSecrets last read it (Run's
	// goroutine alone): an engine change that leaves every entry as it
	// was (a probe, a state) reads no secret again.
	seen map[string]*registry.Server

	// life ends when Run does: what outlives a client's request (a round
	// trip's upstream call) ends with it.
	life context.Context
	end  context.CancelFunc
}

// New makes the gateway of up's servers. opts may be nil.
func New(up Upstreams, opts *Options) *Gateway {
	g := &Gateway{up: up, hubs: map[string]*hub{}, kick: make(chan struct{}, 1)}
	g.life, g.end = context.WithCancel(context.Background())
	if opts != nil {
		g.opts = *opts
	}
	if g.opts.Logger == nil {
		g.opts.Logger = slog.New(slog.DiscardHandler)
	}
	if g.opts.TraceFrames <= 0 {
		g.opts.TraceFrames = 1000
	}
	g.opts.Clock = clock.Or(g.opts.Clock)
	g.cats.dir = g.opts.CatalogueDir
	if g.opts.Trust != nil && g.opts.HeldTool == nil {
		// The aggregates hold what the per-server sessions hold.
		g.opts.HeldTool = g.trustHeld
	}
	return g
}

// hub is the gateway's side of one server.
func (g *Gateway) hub(name string) *hub {
	g.mu.Lock()
	defer g.mu.Unlock()
	h := g.hubs[name]
	if h == nil {
		h = newHub(g, name)
		g.hubs[name] = h
	}
	return h
}

func (g *Gateway) allHubs() []*hub {
	g.mu.Lock()
	defer g.mu.Unlock()
	hs := make([]*hub, 0, len(g.hubs))
	for _, h := range g.hubs {
		hs = append(hs, h)
	}
	return hs
}

// Handlers are the client handlers server name's upstream session is to
// be made with: they route what the server sends (progress, logs, list
// changes, resource updates, sampling, elicitation, roots) to client
// sessions, and declare sampling, elicitation and roots, which the
// gateway's clients may answer.
func (g *Gateway) Handlers(name string) *healthcheck.ClientHandlers {
	return g.hub(name).handlers()
}

// Trace records one frame a health check or a call exchanged with server
// name (the upstream side of the trace).
func (g *Gateway) Trace(name string, f Frame) {
	g.hub(name).traceFrame(f)
}

// Run follows the upstream servers until ctx ends: after a restart it
// brings the new process up to date with the sessions (subscriptions,
// logging level) and tells them when its lists differ. When it returns,
// the goroutines it and the relay started have ended (round trips'
// upstream calls are cancelled); sessions end with their own contexts.
func (g *Gateway) Run(ctx context.Context) error {
	sweep := g.opts.Clock.NewTimer(sweepEvery)
	defer func() { sweep.Stop() }()
	var trustWG sync.WaitGroup
	defer trustWG.Wait()
	var trustCh <-chan struct{}
	if g.opts.Trust != nil {
		trustWG.Go(func() { g.followTrust(ctx) })
	}
	for {
		ch := g.up.Watch()
		if g.opts.Trust != nil {
			trustCh = g.opts.Trust.Changed()
		}
		g.refreshSecrets()
		for _, h := range g.allHubs() {
			h.followUpstream(ctx)
			h.clients() // forgets HTTP sessions that ended
			if g.opts.Trust != nil {
				h.holdsChanged()
			}
		}
		g.followAggregates()
		select {
		case <-g.kick:
		case <-ch:
		case <-trustCh:
			g.HoldsChanged()
		case <-sweep.C():
			sweep = g.opts.Clock.NewTimer(sweepEvery)
			if g.opts.Trust != nil {
				if _, err := g.opts.Trust.Reload(); err != nil {
					g.opts.Logger.Warn("re-reading the tool approvals failed", "error", err)
				}
			}
		case <-ctx.Done():
			g.end()
			for _, h := range g.allHubs() {
				h.wait()
			}
			return nil
		}
	}
}

// sweepEvery is how often the gateway looks for HTTP sessions that ended
// (they say nothing when they do).
const sweepEvery = 15 * time.Second

// unshared reports whether server name gives each client session its own
// process (share = false).
func (g *Gateway) unshared(name string) bool {
	for _, st := range g.up.Snapshot().Servers {
		if st.Name == name {
			return st.Server != nil && st.Server.Unshared && st.InstanceOf == ""
		}
	}
	return false
}

// upstreamOf turns the supervisor's session into the relay's.
func upstreamOf(sess supervisor.Session) (Upstream, error) {
	up, ok := sess.(Upstream)
	if !ok {
		return nil, fmt.Errorf("the server's session (%T) cannot relay requests", sess)
	}
	return up, nil
}

// rpcError is a JSON-RPC error for a client, from what went wrong on the
// way to the server. An error the server itself answered passes through.
func (h *hub) rpcError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var wire *jsonrpc.Error
	if errors.As(err, &wire) {
		return wire
	}
	if ctx.Err() != nil {
		return err
	}
	var nr *supervisor.NotReadyError
	if errors.As(err, &nr) {
		msg := fmt.Sprintf("mcptray: server %s is not available: it is %s (%s)", h.name, nr.State, nr.Reason)
		if nr.Diagnosis != nil && nr.Diagnosis.Fix != "" {
			msg += "; " + nr.Diagnosis.Fix
		}
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg}
	}
	if errors.Is(err, supervisor.ErrUnknownServer) {
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("mcptray: no server named %s is configured", h.name)}
	}
	if errors.Is(err, errUpstreamGone) {
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: h.goneMessage()}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("mcptray: relaying to %s: %v", h.name, err)}
}

var errUpstreamGone = errors.New("the server's session ended")

// goneMessage says what became of a server whose session ended under a
// request.
func (h *hub) goneMessage() string {
	st := h.state()
	why := ""
	if st != nil && st.Reason != "" {
		why = " (" + st.Reason + ")"
	}
	if st != nil && st.State == supervisor.StateStopped {
		return fmt.Sprintf("mcptray: server %s was stopped while this request was in flight%s", h.name, why)
	}
	return fmt.Sprintf("mcptray: server %s restarted while this request was in flight%s; the request was lost, send it again", h.name, why)
}

func (h *hub) state() *supervisor.ServerState {
	snap := h.g.up.Snapshot()
	for i := range snap.Servers {
		if snap.Servers[i].Name == h.name {
			return &snap.Servers[i]
		}
	}
	return nil
}

// identity is what a front is made from: the upstream's handshake.
type identity struct {
	Info         *mcp.Implementation     `json:"info"`
	Capabilities *mcp.ServerCapabilities `json:"caps"`
	Instructions string                  `json:"instructions"`
}

func identityOf(cs *mcp.ClientSession) identity {
	ir := cs.InitializeResult()
	if ir == nil {
		return identity{}
	}
	return identity{Info: ir.ServerInfo, Capabilities: ir.Capabilities, Instructions: ir.Instructions}
}

func (id identity) key() string {
	b, _ := json.Marshal(id)
	return string(b)
}
