package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"mcptray/app"
	"mcptray/control"
	"mcptray/gateway"
	"mcptray/registry"
	"mcptray/supervisor"
)

const connectHelp = `What an AI client runs instead of the server: it speaks MCP on stdin and
stdout and relays every message to the one instance of NAME that mcptray
supervises (over the control socket, private to you), so every client shares
one process, and what the tray shows is what the clients use.

When no daemon runs, connect starts one (detached: it outlives the client)
and waits for NAME to be ready. When the daemon cannot be started, it says
why on stderr and runs the server itself, as a direct entry would.

When the daemon goes away (restarted, killed), connect answers the requests
in flight with an error that says so, starts or finds the next daemon, and
carries the session on: the client's handshake is replayed, so the client
does not notice more than the lost requests.

With --profile PROFILE, or with no NAME (the profile "default": every enabled
server), connect is one MCP server over every server of the profile: their
tools and prompts named SERVER__NAME, their resources, each server's
instructions under its name ([profiles.PROFILE] in servers.toml says which
servers and tools). A profile needs the daemon: connect does not run it
without one.

"mcptray export" and "mcptray install" write client entries that run it.`

func connectFlags(fs *flag.FlagSet) runFunc {
	cfgPath := configFlag(fs)
	profile := fs.String("profile", "", "be one MCP server over every server of `PROFILE` (no NAME: the default profile)")
	return func(ctx context.Context, env *app.Env, args []string) error {
		switch {
		case len(args) > 1:
			return app.Usagef("takes one server NAME, or --profile PROFILE")
		case len(args) == 1 && *profile != "":
			return app.Usagef("takes a server NAME or --profile %s, not both", *profile)
		case len(args) == 1:
			return runConnect(ctx, env, *cfgPath, args[0], "")
		case *profile == "":
			return runConnect(ctx, env, *cfgPath, "", registry.DefaultProfile)
		}
		return runConnect(ctx, env, *cfgPath, "", *profile)
	}
}

// Tunables of the bridge.
const (
	daemonStartWait = 15 * time.Second // for a daemon it started to answer
	reconnectFor    = 30 * time.Second // to find a daemon after losing one
	reconnectEvery  = 200 * time.Millisecond
)

// runConnect bridges stdio to server name's instance, or (name "") to an
// aggregate session of profile.
func runConnect(ctx context.Context, env *app.Env, cfgFlag, name, profile string) error {
	sock, err := control.DefaultSocket()
	if err != nil {
		return err
	}
	b := &bridge{env: env, name: name, profile: profile, cfgFlag: cfgFlag, sock: sock, pending: map[string]bool{}, started: time.Now()}
	if profile != "" {
		b.name = "profile " + profile // what messages call it
	}
	conn, err := b.dial(ctx, daemonStartWait)
	if err != nil {
		var api *control.APIError
		if errors.As(err, &api) {
			return fmt.Errorf("mcptray connect %s: %s", b.name, api.Message)
		}
		if profile != "" {
			return fmt.Errorf("mcptray connect --profile %s: %w (a profile is served by the daemon only)", profile, err)
		}
		fmt.Fprintf(env.Stderr, "mcptray connect %s: %v; running the server directly instead\n", name, err)
		return runDirect(ctx, env, cfgFlag, name)
	}
	return b.run(ctx, conn)
}

// bridge relays one client session between stdio and the daemon.
type bridge struct {
	env     *app.Env
	name    string
	profile string // an aggregate session's ("" for one server's)
	cfgFlag string
	sock    string
	started time.Time

	outMu sync.Mutex // serialises writes to stdout

	mu      sync.Mutex      // protects the fields below
	conn    *daemonConn     // nil while reconnecting
	pending map[string]bool // ids of the client's requests in flight, as sent
	session sessionState    // what a new daemon is told again
	queue   [][]byte        // what the client sent while reconnecting
	queued  int             // bytes in queue
}

// daemonConn is one connection to a daemon's client session.
type daemonConn struct {
	c net.Conn
	r *gateway.LineReader
}

// sessionState is what the client told the daemon that a new daemon is
// told again, so the session goes on where it was: the handshake, the
// logging level (only the last one matters) and the subscriptions.
type sessionState struct {
	initialize  *jsonrpc.Request
	initialized *jsonrpc.Request
	level       *jsonrpc.Request
	subs        []*jsonrpc.Request // resources/subscribe, one per URI
}

// dial connects to the daemon's instance of the server, starting the
// daemon when none answers.
func (b *bridge) dial(ctx context.Context, wait time.Duration) (*daemonConn, error) {
	c, err := app.DialOrStartDaemon(ctx, b.sock, b.cfgFlag, wait)
	if err != nil {
		return nil, err
	}
	var conn net.Conn
	if b.profile != "" {
		conn, err = c.ConnectProfile(ctx, b.profile, os.Getpid())
	} else {
		conn, err = c.Connect(ctx, b.name, os.Getpid())
	}
	if err != nil {
		return nil, err
	}
	return &daemonConn{c: conn, r: gateway.NewLineReader(conn, maxAnswer)}, nil
}

// Limits of the bridge.
const (
	// maxAnswer bounds one message from the daemon (answers may be larger
	// than what a client may send).
	maxAnswer = 4 * gateway.MaxMessage
	// maxQueued bounds what waits for a new daemon while reconnecting.
	maxQueued = gateway.MaxMessage
	// replayWait bounds a new daemon's answer to a replayed request.
	replayWait = 30 * time.Second
)

// frameHead is what the bridge reads of a message besides the SDK's
// decoding: the id exactly as sent.
type frameHead struct {
	ID json.RawMessage `json:"id"`
}

// parseFrame decodes one line: the message (nil when it is not one; the
// daemon answers it) and its id as sent.
func parseFrame(line []byte) (jsonrpc.Message, json.RawMessage) {
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return nil, nil
	}
	var head frameHead
	if json.Unmarshal(line, &head) != nil {
		return nil, nil
	}
	return msg, head.ID
}

// replayPrefix marks the ids of replayed requests: they are sent on a new
// connection before anything of the client's, and their answers are read
// there and then, so no id of the client's can meet them.
const replayPrefix = "mcptray-replay-"

func (b *bridge) run(ctx context.Context, conn *daemonConn) error {
	b.conn = conn
	stdinDone := make(chan error, 1)
	go func() { stdinDone <- b.fromClient() }()
	for {
		lost := make(chan error, 1)
		go func(c *daemonConn) { lost <- b.fromDaemon(c) }(conn)
		select {
		case err := <-stdinDone:
			// The client is done: let the daemon end the session.
			conn.c.Close()
			<-lost
			if err != nil && !errors.Is(err, io.EOF) {
				return err
			}
			return nil
		case <-ctx.Done():
			conn.c.Close()
			return nil
		case err := <-lost:
			conn.c.Close()
			if ctx.Err() != nil {
				return nil
			}
			select {
			case <-stdinDone:
				// The client left as the daemon did.
				return nil
			default:
			}
			if control.StoppedSince(b.sock, b.started) {
				// Stopped on request ("Stop all servers and quit"): a
				// new daemon would undo it.
				msg := fmt.Sprintf("mcptray: the background service serving %s was stopped on request (the tray's Stop all servers and quit); start mcptray or this client again to use it", b.name)
				b.failPending(msg)
				return fmt.Errorf("mcptray connect %s: the background service was stopped on request; not starting another", b.name)
			}
			why := "the connection ended"
			if err != nil && !errors.Is(err, io.EOF) {
				why = err.Error()
			}
			b.failPending(fmt.Sprintf("mcptray: the daemon serving %s went away while this request was in flight (%s); the session goes on with a new daemon, send the request again", b.name, why))
			next, rerr := b.reconnect(ctx)
			if rerr != nil {
				return fmt.Errorf("mcptray connect %s: the daemon went away and no new one answered: %w", b.name, rerr)
			}
			conn = next
		}
	}
}

// fromClient relays stdin to the daemon, line by line. A line over the
// limit is answered here and never sent.
func (b *bridge) fromClient() error {
	r := gateway.NewLineReader(b.env.Stdin, gateway.MaxMessage)
	for {
		line, err := r.Next()
		var big *gateway.OversizeError
		if errors.As(err, &big) {
			b.write(append(big.Reply(), '\n'))
			continue
		}
		if len(line) > 0 {
			b.send(append(line, '\n'))
		}
		if err != nil {
			return err
		}
	}
}

// send writes one client message to the daemon, recording what a new
// daemon would need: requests in flight, the session's state.
func (b *bridge) send(line []byte) {
	msg, id := parseFrame(line)
	req, _ := msg.(*jsonrpc.Request)
	b.mu.Lock()
	defer b.mu.Unlock()
	if req != nil && len(id) > 0 && string(id) != "null" {
		b.pending[string(id)] = true
	}
	if req != nil {
		b.session.note(req)
	}
	if b.conn == nil {
		if b.queued+len(line) > maxQueued {
			if req != nil && len(id) > 0 {
				b.writeLocked(gateway.ErrorFrame(id, jsonrpc.CodeInternalError, fmt.Sprintf("mcptray: the daemon serving %s is being reconnected and more than %d MiB wait for it; send the request again", b.name, maxQueued>>20)))
				delete(b.pending, string(id))
			}
			return
		}
		b.queue = append(b.queue, line)
		b.queued += len(line)
		return
	}
	// A message that could not be written is not sent again: a request
	// is answered when the loss is seen (it is pending), and a new daemon
	// gets only the session's state.
	_, _ = b.conn.c.Write(line)
}

// note records req when it is part of the session's state.
func (s *sessionState) note(req *jsonrpc.Request) {
	switch req.Method {
	case "initialize":
		s.initialize = req
	case "notifications/initialized":
		s.initialized = req
	case "logging/setLevel":
		s.level = req
	case "resources/subscribe", "resources/unsubscribe":
		uri := uriOf(req)
		s.subs = slices.DeleteFunc(s.subs, func(r *jsonrpc.Request) bool { return uriOf(r) == uri })
		if req.Method == "resources/subscribe" {
			s.subs = append(s.subs, req)
		}
	}
}

func uriOf(req *jsonrpc.Request) string {
	var p struct {
		URI string `json:"uri"`
	}
	_ = json.Unmarshal(req.Params, &p)
	return p.URI
}

// requests is the state's requests in the order a new daemon is sent
// them.
func (s *sessionState) requests() []*jsonrpc.Request {
	var out []*jsonrpc.Request
	for _, r := range []*jsonrpc.Request{s.initialize, s.initialized, s.level} {
		if r != nil {
			out = append(out, r)
		}
	}
	return append(out, s.subs...)
}

// fromDaemon relays the daemon's messages to stdout until the connection
// ends.
func (b *bridge) fromDaemon(conn *daemonConn) error {
	for {
		line, err := conn.r.Next()
		var big *gateway.OversizeError
		if errors.As(err, &big) {
			// An answer too large to relay: its request is answered so.
			b.answered(big.ID)
			b.write(append(big.Reply(), '\n'))
			continue
		}
		if len(line) > 0 {
			if msg, id := parseFrame(line); msg != nil {
				if _, ok := msg.(*jsonrpc.Response); ok {
					b.answered(id)
				}
			}
			b.write(append(line, '\n'))
		}
		if err != nil {
			return err
		}
	}
}

// answered forgets a request the daemon answered.
func (b *bridge) answered(id json.RawMessage) {
	if len(id) == 0 {
		return
	}
	b.mu.Lock()
	delete(b.pending, string(id))
	b.mu.Unlock()
}

func (b *bridge) write(line []byte) {
	b.outMu.Lock()
	defer b.outMu.Unlock()
	_, _ = b.env.Stdout.Write(line)
}

// writeLocked writes a frame the bridge answers itself, with b.mu held.
func (b *bridge) writeLocked(frame []byte) {
	b.write(append(frame, '\n'))
}

// failPending answers the client's requests in flight with msg: the
// daemon that had them is gone.
func (b *bridge) failPending(msg string) {
	b.mu.Lock()
	ids := make([]string, 0, len(b.pending))
	for id := range b.pending {
		ids = append(ids, id)
	}
	b.pending = map[string]bool{}
	b.conn = nil
	b.mu.Unlock()
	slices.Sort(ids)
	for _, id := range ids {
		b.write(append(gateway.ErrorFrame(json.RawMessage(id), jsonrpc.CodeInternalError, msg), '\n'))
	}
}

// reconnect finds (or starts) the next daemon and brings it up to where
// the session was: the session's state replayed, then what the client
// sent meanwhile. It returns a connection or an error, never neither.
func (b *bridge) reconnect(ctx context.Context) (*daemonConn, error) {
	deadline := time.Now().Add(reconnectFor)
	var last error
	for time.Now().Before(deadline) {
		conn, err := b.dial(ctx, time.Until(deadline))
		if err == nil {
			if err = b.resume(conn); err == nil {
				return conn, nil
			}
			conn.c.Close()
		}
		last = err
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(reconnectEvery):
		}
	}
	if last == nil {
		last = fmt.Errorf("none answered within %s", reconnectFor)
	}
	return nil, last
}

// resume replays the session's state on conn, reading the answers to the
// replayed requests there (anything else the daemon sends meanwhile goes
// to the client), then sends what the client queued.
func (b *bridge) resume(conn *daemonConn) error {
	b.mu.Lock()
	reqs := b.session.requests()
	b.mu.Unlock()
	for i, req := range reqs {
		out := *req
		if req.IsCall() {
			out.ID, _ = jsonrpc.MakeID(fmt.Sprintf("%s%d", replayPrefix, i))
		}
		data, err := jsonrpc.EncodeMessage(&out)
		if err != nil {
			return err
		}
		if _, err := conn.c.Write(append(data, '\n')); err != nil {
			return err
		}
		if out.IsCall() {
			if err := b.awaitReplay(conn, out.ID); err != nil {
				return fmt.Errorf("the new daemon did not take %s: %w", req.Method, err)
			}
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, line := range b.queue {
		if _, err := conn.c.Write(line); err != nil {
			return err
		}
	}
	b.queue, b.queued = nil, 0
	b.conn = conn
	return nil
}

// awaitReplay reads conn until the answer to replayed request id.
func (b *bridge) awaitReplay(conn *daemonConn, id jsonrpc.ID) error {
	_ = conn.c.SetReadDeadline(time.Now().Add(replayWait))
	defer conn.c.SetReadDeadline(time.Time{})
	for {
		line, err := conn.r.Next()
		if err != nil {
			return err
		}
		msg, _ := parseFrame(line)
		if resp, ok := msg.(*jsonrpc.Response); ok && resp.ID == id {
			if resp.Error != nil {
				return resp.Error
			}
			return nil
		}
		b.write(append(line, '\n'))
	}
}

// runDirect runs server name itself, on this process's stdio: what a
// direct client entry would have done.
func runDirect(ctx context.Context, env *app.Env, cfgFlag, name string) error {
	cfg, err := app.LoadConfig(env, cfgFlag, true)
	if err != nil {
		return err
	}
	var srv *registry.Server
	for _, s := range cfg.Servers {
		if s.Name == name {
			srv = s
		}
	}
	if srv == nil {
		return fmt.Errorf("no server named %q in %s", name, cfg.Path)
	}
	if srv.IsRemote() {
		return fmt.Errorf("%s is a remote server (%s): without the daemon there is nothing to relay it", name, registry.MaskURL(srv.URL))
	}
	// The supervisor's spawn path: process group, parent-death signal,
	// login-shell environment, family census and records.
	exit, err := supervisor.RunDirect(ctx, srv, env.Stdin, env.Stdout, env.Stderr,
		&supervisor.Options{Secret: (&app.LazySecrets{}).Secret, NoLogFiles: true})
	if err != nil {
		return err
	}
	if exit.Code != 0 || exit.Signal != "" {
		return ExitError{Code: exit.Code}
	}
	return nil
}
