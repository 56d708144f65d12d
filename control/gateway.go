package control

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"mcptray/gateway"
	"mcptray/registry"
)

// The gateway's part of API v1:
//
//	GET /v1/servers/NAME/connect   Upgrade: mcp — the connection becomes one
//	                               client session of NAME: MCP messages,
//	                               one JSON object per line, both ways
//	GET /v1/profiles/NAME/connect  Upgrade: mcp — the connection becomes one
//	                               aggregate session of profile NAME
//	GET /v1/gateway                every server's and profile's local URL
//	                               and client sessions
//	GET /v1/servers/NAME/trace?since=N[&follow=1]
//	                               protocol trace frames: {"frames":[…],"next":N},
//	                               or NDJSON frames until closed
//	GET /v1/profiles/NAME/trace?since=N[&follow=1]
//	                               the same for profile NAME's aggregate
//	                               sessions, what it answers itself included

// upgradeProtocol is the Upgrade token of a connect request.
const upgradeProtocol = "mcp"

// BridgePIDHeader carries the pid of the `mcptray connect` process.
const BridgePIDHeader = "Mcptray-Bridge-Pid"

// GatewayInfo is what /v1/gateway answers.
type GatewayInfo struct {
	// Port is the local endpoint's (0 when it is not listening).
	Port int `json:"port"`
	// Problem says why the endpoint is not listening ("" when it is).
	Problem string          `json:"problem,omitempty"`
	Servers []GatewayServer `json:"servers"`
	// Profiles are the aggregates: the default profile and the config's.
	Profiles []GatewayProfile `json:"profiles,omitempty"`
}

// GatewayProfile is one profile as clients reach it: one MCP server over
// all its servers.
type GatewayProfile struct {
	gateway.Aggregate
	// URL is its address on the local endpoint, key included.
	URL string `json:"url,omitempty"`
	// Command is what a stdio client runs.
	Command []string `json:"command"`
}

// Profiles describes gw's profiles for [GatewayInfo]: exe is the binary a
// stdio client runs, port and key the local endpoint's (port 0: not
// listening).
func Profiles(gw *gateway.Gateway, exe string, port int, key string) []GatewayProfile {
	var out []GatewayProfile
	for _, ag := range gw.Aggregates() {
		gp := GatewayProfile{Aggregate: ag, Command: []string{exe, "connect", "--profile", ag.Profile}}
		if ag.Profile == registry.DefaultProfile {
			gp.Command = []string{exe, "connect"}
		}
		if port != 0 {
			gp.URL = gateway.ProfileURL(port, key, ag.Profile)
		}
		out = append(out, gp)
	}
	return out
}

// GatewayServer is one server as clients reach it.
type GatewayServer struct {
	Name string `json:"name"`
	// URL is its address on the local endpoint, key included.
	URL string `json:"url,omitempty"`
	// Command is what a stdio client runs.
	Command  []string          `json:"command"`
	Sessions []gateway.Session `json:"sessions"`
	Usage    gateway.Usage     `json:"usage"`
}

// TracePage is a piece of a server's protocol trace.
type TracePage struct {
	Frames []gateway.Frame `json:"frames"`
	Next   uint64          `json:"next"`
}

func (s *Server) gatewayRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/servers/{name}/connect", s.connect)
	mux.HandleFunc("GET /v1/profiles/{name}/connect", s.connect)
	mux.HandleFunc("GET /v1/gateway", func(w http.ResponseWriter, r *http.Request) {
		if s.opts.GatewayInfo == nil {
			writeError(w, http.StatusNotFound, codeBadRequest, "this daemon runs no gateway")
			return
		}
		writeJSON(w, http.StatusOK, s.opts.GatewayInfo())
	})
	mux.HandleFunc("GET /v1/servers/{name}/trace", s.trace)
	mux.HandleFunc("GET /v1/profiles/{name}/trace", s.trace)
}

func (s *Server) knownServer(w http.ResponseWriter, name string) bool {
	for _, st := range s.eng.Snapshot().Servers {
		if st.Name == name {
			return true
		}
	}
	writeError(w, http.StatusNotFound, codeUnknownServer, fmt.Sprintf("no server named %q is configured", name))
	return false
}

// connect turns the request's connection into a client session of the
// server.
func (s *Server) connect(w http.ResponseWriter, r *http.Request) {
	gw := s.opts.Gateway
	if gw == nil {
		writeError(w, http.StatusNotFound, codeBadRequest, "this daemon runs no gateway")
		return
	}
	name := r.PathValue("name")
	profile := strings.HasPrefix(r.URL.Path, "/v1/profiles/")
	if !profile && !s.knownServer(w, name) {
		return
	}
	if r.Header.Get("Upgrade") != upgradeProtocol {
		writeError(w, http.StatusBadRequest, codeBadRequest, "connect needs Upgrade: "+upgradeProtocol)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		writeError(w, http.StatusInternalServerError, codeInternal, "the connection cannot be taken over")
		return
	}
	conn, rw, err := hj.Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Time{})
	if _, err := io.WriteString(conn, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: "+upgradeProtocol+"\r\nConnection: Upgrade\r\n\r\n"); err != nil {
		return
	}
	pid, _ := strconv.Atoi(r.Header.Get(BridgePIDHeader))
	t := gateway.LineTransport(rw.Reader, conn, conn)
	peer := gateway.Peer{Via: "stdio", PID: pid}
	if profile {
		// An unknown or invalid profile is answered by the session itself
		// (the client's handshake gets why), as a server that cannot be
		// reached is.
		if err := gw.ServeProfile(r.Context(), name, t, peer); err != nil {
			s.logf("an aggregate session of profile %s ended: %v", name, err)
		}
		return
	}
	if err := gw.Serve(r.Context(), name, t, peer); err != nil {
		s.logf("a client session of %s ended: %v", name, err)
	}
}

func (s *Server) trace(w http.ResponseWriter, r *http.Request) {
	gw := s.opts.Gateway
	if gw == nil {
		writeError(w, http.StatusNotFound, codeBadRequest, "this daemon runs no gateway")
		return
	}
	name := r.PathValue("name")
	traceSince := gw.TraceSince
	if strings.HasPrefix(r.URL.Path, "/v1/profiles/") {
		if !gw.KnownProfile(name) {
			writeError(w, http.StatusNotFound, codeUnknownServer, fmt.Sprintf("no profile named %q is configured", name))
			return
		}
		traceSince = gw.ProfileTraceSince
	} else if !s.knownServer(w, name) {
		return
	}
	since, ok := sinceParam(w, r)
	if !ok {
		return
	}
	frames, next, wake := traceSince(name, since)
	if r.URL.Query().Get("follow") == "" {
		if frames == nil {
			frames = []gateway.Frame{}
		}
		writeJSON(w, http.StatusOK, TracePage{Frames: frames, Next: next})
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	fl, _ := w.(http.Flusher)
	for {
		for _, f := range frames {
			if enc.Encode(f) != nil {
				return
			}
		}
		if fl != nil {
			fl.Flush()
		}
		select {
		case <-r.Context().Done():
			return
		case <-wake:
		}
		frames, next, wake = traceSince(name, next)
	}
}

func (s *Server) logf(format string, args ...any) {
	if s.opts.Logf != nil {
		s.opts.Logf(format, args...)
	}
}

// Connect opens a client session of server name in the daemon: what is
// written to the connection goes to the server's shared instance, and its
// answers come back, MCP messages one per line.
func (c *Client) Connect(ctx context.Context, name string, pid int) (net.Conn, error) {
	return c.upgrade(ctx, "/v1/servers/"+url.PathEscape(name)+"/connect", name, pid)
}

// ConnectProfile opens an aggregate session of profile in the daemon: one
// MCP server over all the profile's servers ("" is the default profile).
func (c *Client) ConnectProfile(ctx context.Context, profile string, pid int) (net.Conn, error) {
	if profile == "" {
		profile = registry.DefaultProfile
	}
	return c.upgrade(ctx, "/v1/profiles/"+url.PathEscape(profile)+"/connect", "profile "+profile, pid)
}

func (c *Client) upgrade(ctx context.Context, path, name string, pid int) (net.Conn, error) {
	conn, err := dial(ctx, c.opts.Socket)
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	req := fmt.Sprintf("GET %s HTTP/1.1\r\nHost: mcptray\r\nConnection: Upgrade\r\nUpgrade: %s\r\n%s: %d\r\n\r\n",
		path, upgradeProtocol, BridgePIDHeader, pid)
	if _, err := io.WriteString(conn, req); err != nil {
		conn.Close()
		return nil, err
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("connecting to %s through the daemon: %w", name, err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		defer conn.Close()
		return nil, responseError(resp)
	}
	_ = conn.SetDeadline(time.Time{})
	return &bufferedConn{Conn: conn, r: br}, nil
}

// bufferedConn reads what the response reader already buffered first.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (b *bufferedConn) Read(p []byte) (int, error) { return b.r.Read(p) }

// Gateway asks the daemon for its gateway: local URLs and client sessions.
func (c *Client) Gateway(ctx context.Context) (*GatewayInfo, error) {
	var gi GatewayInfo
	if err := c.get(ctx, "/v1/gateway", &gi); err != nil {
		return nil, err
	}
	return &gi, nil
}

// Trace returns server name's trace frames numbered since or later.
func (c *Client) Trace(ctx context.Context, name string, since uint64) (*TracePage, error) {
	var p TracePage
	if err := c.get(ctx, "/v1/servers/"+url.PathEscape(name)+"/trace?since="+strconv.FormatUint(since, 10), &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// ProfileTrace returns profile name's trace frames numbered since or later.
func (c *Client) ProfileTrace(ctx context.Context, name string, since uint64) (*TracePage, error) {
	var p TracePage
	if err := c.get(ctx, "/v1/profiles/"+url.PathEscape(name)+"/trace?since="+strconv.FormatUint(since, 10), &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// FollowProfileTrace is [Client.FollowTrace] for profile name's trace.
func (c *Client) FollowProfileTrace(ctx context.Context, name string, since uint64, fn func(gateway.Frame)) error {
	return follow(ctx, c, "/v1/profiles/"+url.PathEscape(name)+"/trace", since, "the trace stream", fn)
}

// FollowTrace calls fn with each trace frame of server name from since on,
// until ctx ends or the daemon goes away.
func (c *Client) FollowTrace(ctx context.Context, name string, since uint64, fn func(gateway.Frame)) error {
	return follow(ctx, c, "/v1/servers/"+url.PathEscape(name)+"/trace", since, "the trace stream", fn)
}
