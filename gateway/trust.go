package gateway

// Holds: tools whose definition changed since the person approved it (or
// that they held, or of a new server under approve_new_servers) reach no
// client session. The trust store (registry/tooltrust) decides what is
// held; here every tool a session is offered is recorded with it, held
// tools are left out of tools/list, a call to one is refused with why and
// how to approve it, and sessions are told (tools/list_changed) when a
// hold is added or lifted.

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/healthcheck"
	"mcptray/registry/tooltrust"
)

// OfferedTools are tools (as server lists them) as its client sessions
// are to see them: each definition is recorded with the trust store (a
// changed one is held there), and the held ones are left out. Without a
// store it is tools.
func (g *Gateway) OfferedTools(server string, tools []*mcp.Tool) []*mcp.Tool {
	if g.opts.Trust == nil {
		return tools
	}
	g.observeTools(server, tools)
	return g.WithoutHeld(server, tools)
}

// WithoutHeld is tools without server's held ones, recording nothing: for
// lists made from catalogues already recorded with [Gateway.ObserveReport]
// (an aggregate's tools/list). Without a store it is tools.
func (g *Gateway) WithoutHeld(server string, tools []*mcp.Tool) []*mcp.Tool {
	if g.opts.Trust == nil {
		return tools
	}
	held := g.opts.Trust.HeldTools(server)
	if len(held) == 0 {
		return tools
	}
	return slices.DeleteFunc(slices.Clone(tools), func(t *mcp.Tool) bool {
		_, ok := slices.BinarySearch(held, t.Name)
		return ok
	})
}

// ObserveReport records the tools server listed when it started (its
// health check's report) with the trust store: a restart with a changed
// tool is held before any session lists it. The per-server gateway does
// it at each restart it follows; an aggregate, for each catalogue it
// serves from.
func (g *Gateway) ObserveReport(server string, rep *healthcheck.Report) {
	if g.opts.Trust == nil || rep == nil {
		return
	}
	defs := make([]json.RawMessage, 0, len(rep.Tools))
	for _, t := range rep.Tools {
		if b, err := json.Marshal(t); err == nil {
			defs = append(defs, b)
		}
	}
	g.observe(server, defs)
}

// trustHeld is [Options.HeldTool] from the trust store: why server's tool
// t is held ("" when it is not). (An aggregate records each catalogue it
// lists from with [Gateway.observeTools] first.)
func (g *Gateway) trustHeld(server string, t *mcp.Tool) string {
	h, ok := g.opts.Trust.Held(server, t.Name)
	if !ok {
		return ""
	}
	return tooltrust.Held{Server: server, Tool: t.Name, Reason: h.Reason}.Why()
}

// HeldError is the error a call of server's tool gets while the tool is
// held (nil when it is not): why, and the command that approves it.
func (g *Gateway) HeldError(server, tool string) error {
	st := g.opts.Trust
	if st == nil {
		return nil
	}
	h, ok := st.Held(server, tool)
	if !ok {
		return nil
	}
	why := tooltrust.Held{Server: server, Tool: tool, Reason: h.Reason}.Why()
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
		Message: fmt.Sprintf("mcptray: tool %s of server %s is held back from clients since %s: %s", tool, server, h.Since.Format(time.DateTime), why)}
}

// observeTools records a server's whole catalogue with the store (when
// there is one): a tool that changed while no session of its server was
// open is held before an aggregate lists it, and a new server's tools are
// held together under approve_new_servers.
func (g *Gateway) observeTools(server string, tools []*mcp.Tool) {
	if g.opts.Trust == nil {
		return
	}
	defs := make([]json.RawMessage, 0, len(tools))
	for _, t := range tools {
		if b, err := json.Marshal(t); err == nil {
			defs = append(defs, b)
		}
	}
	g.observe(server, defs)
}

// observe records server's tool definitions with the store.
func (g *Gateway) observe(server string, defs []json.RawMessage) {
	if err := g.opts.Trust.Observe(server, defs); err != nil {
		g.opts.Logger.Warn("recording the tools' definitions failed", "server", server, "error", err)
	}
}

// trustName is the server the hub's tools are trusted under: a
// per-session instance's configured server.
func (h *hub) trustName() string {
	h.trustOnce.Do(func() {
		h.trustAs = h.name
		if st := h.state(); st != nil && st.InstanceOf != "" {
			h.trustAs = st.InstanceOf
		}
	})
	return h.trustAs
}

// holdsChanged tells the hub's sessions their tools changed when the
// server's held tools differ from what they were last told.
func (h *hub) holdsChanged() {
	held := h.g.opts.Trust.HeldTools(h.trustName())
	h.mu.Lock()
	same := slices.Equal(held, h.held)
	h.held = held
	h.mu.Unlock()
	if !same {
		h.onListChanged("notifications/tools/list_changed")
	}
}

// followTrust re-reads the store when another process (`mcptray tools
// approve`) changes its file, until ctx ends. Without a watcher the
// gateway's sweep re-reads it.
func (g *Gateway) followTrust(ctx context.Context) {
	st := g.opts.Trust
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		g.opts.Logger.Warn("the tool approvals file is not watched; it is re-read every sweep", "error", err)
		return
	}
	defer fw.Close()
	path, _ := filepath.Abs(st.Path())
	if err := fw.Add(filepath.Dir(path)); err != nil {
		g.opts.Logger.Debug("the tool approvals' folder is not watched yet; it is re-read every sweep", "error", err)
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-fw.Events:
			if !ok {
				return
			}
			if ev.Name != path {
				continue
			}
			if _, err := st.Reload(); err != nil {
				g.opts.Logger.Warn("re-reading the tool approvals failed", "error", err)
			}
		case _, ok := <-fw.Errors:
			if !ok {
				return
			}
			_, _ = st.Reload()
		}
	}
}
