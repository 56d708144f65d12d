package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/healthcheck"
	"mcptray/registry"
)

// Serve runs one client session of server name over t (a `mcptray connect`
// bridge's stream) until the client or ctx ends it. It waits for the
// server to be ready before the session's handshake is answered; a server
// that cannot get there answers every request with why.
func (g *Gateway) Serve(ctx context.Context, name string, t mcp.Transport, peer Peer) error {
	if g.unshared(name) {
		inst, err := g.up.NewInstance(name)
		if err != nil {
			return g.serveError(ctx, name, t, err)
		}
		defer g.up.EndInstance(inst)
		name = inst
	}
	h := g.hub(name)
	g.up.Touch(name) // starts a server that waits for its first client
	front, err := h.frontFor(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		front = errorFront(name, err)
	}
	ss, err := front.Connect(ctx, t, nil)
	if err != nil {
		return err
	}
	cl := h.attach(ss, peer)
	if lt, ok := t.(*lineTransport); ok {
		if c := lt.connection(); c != nil {
			c.watch(func(why string) { h.closedBy(cl, why) }, func(params json.RawMessage) {
				h.trace.add(Frame{Time: h.g.opts.Clock.Now(), Session: cl.id, Dir: healthcheck.DirClientIn, Kind: "notification", Method: "notifications/cancelled", Body: string(params)})
			})
		}
	}
	stop := context.AfterFunc(ctx, func() { _ = ss.Close() })
	defer stop()
	err = ss.Wait()
	h.detach(ss)
	if ctx.Err() != nil || errors.Is(err, mcp.ErrConnectionClosed) {
		return nil
	}
	return err
}

// serveError answers every request of a session with why its server
// cannot be reached.
func (g *Gateway) serveError(ctx context.Context, name string, t mcp.Transport, err error) error {
	ss, cerr := errorFront(name, g.hub(name).rpcError(ctx, err)).Connect(ctx, t, nil)
	if cerr != nil {
		return cerr
	}
	stop := context.AfterFunc(ctx, func() { _ = ss.Close() })
	defer stop()
	_ = ss.Wait()
	return nil
}

// refreshSecrets gives each server's trace the server's configured
// secrets to mask.
func (g *Gateway) refreshSecrets() {
	snap := g.up.Snapshot()
	same, n := true, 0
	for i := range snap.Servers {
		if srv := snap.Servers[i].Server; srv != nil {
			n++
			same = same && g.seen[snap.Servers[i].Name] == srv
		}
	}
	if same && n == len(g.seen) {
		return // an entry is replaced, never edited: nothing to read again
	}
	g.seen = make(map[string]*registry.Server, len(snap.Servers))
	var all []string
	for i := range snap.Servers {
		if srv := snap.Servers[i].Server; srv != nil {
			g.seen[snap.Servers[i].Name] = srv
			secrets := srv.Secrets()
			g.hub(snap.Servers[i].Name).trace.setSecrets(secrets)
			all = append(all, secrets...)
		}
	}
	// A profile's trace may hold any of its servers' values (a call's
	// arguments, a server's answer): it masks every server's secrets.
	g.ptMu.Lock()
	g.psecrets = all
	for _, r := range g.ptraces {
		r.setSecrets(all)
	}
	g.ptMu.Unlock()
}

// Server is the gateway's view of one server: its client sessions and
// what they asked.
type Server struct {
	Name     string    `json:"name"`
	Sessions []Session `json:"sessions"`
	Usage    Usage     `json:"usage"`
}

// Servers describes every server clients have reached, in name order.
func (g *Gateway) Servers() []Server {
	hs := g.allHubs()
	slices.SortFunc(hs, func(a, b *hub) int {
		switch {
		case a.name < b.name:
			return -1
		case a.name > b.name:
			return 1
		}
		return 0
	})
	out := make([]Server, 0, len(hs))
	for _, h := range hs {
		s := Server{Name: h.name, Usage: h.stats.usage(), Sessions: []Session{}}
		for _, cl := range h.clients() {
			s.Sessions = append(s.Sessions, cl.describe())
		}
		out = append(out, s)
	}
	return out
}

// Clients is how many client sessions server name has now.
func (g *Gateway) Clients(name string) int {
	g.mu.Lock()
	h := g.hubs[name]
	g.mu.Unlock()
	if h == nil {
		return 0
	}
	return len(h.clients())
}
