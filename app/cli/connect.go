package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"sync"
	"time"

	"mcptray/app"
	"mcptray/control"
	"mcptray/registry"
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

"mcptray export" and "mcptray install" write client entries that run it.`

func connectFlags(fs *flag.FlagSet) runFunc {
	cfgPath := configFlag(fs)
	return func(ctx context.Context, env *app.Env, args []string) error {
		if len(args) != 1 {
			return app.Usagef("takes one server NAME")
		}
		return runConnect(ctx, env, *cfgPath, args[0])
	}
}

// Tunables of the bridge.
const (
	daemonStartWait = 15 * time.Second // for a daemon it started to answer
	reconnectFor    = 30 * time.Second // to find a daemon after losing one
	reconnectEvery  = 200 * time.Millisecond
)

func runConnect(ctx context.Context, env *app.Env, cfgFlag, name string) error {
	sock, err := control.DefaultSocket()
	if err != nil {
		return err
	}
	b := &bridge{env: env, name: name, cfgFlag: cfgFlag, sock: sock, pending: map[string]bool{}, started: time.Now()}
	conn, err := b.dial(ctx, daemonStartWait)
	if err != nil {
		var api *control.APIError
		if errors.As(err, &api) {
			return fmt.Errorf("mcptray connect %s: %s", name, api.Message)
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
	cfgFlag string
	sock    string
	started time.Time

	outMu sync.Mutex // serialises writes to stdout

	mu      sync.Mutex      // protects the fields below
	conn    net.Conn        // nil while reconnecting
	pending map[string]bool // ids of the client's requests in flight
	replay  [][]byte        // the handshake and session settings, to send a new daemon
	queue   [][]byte        // what the client sent while reconnecting
}

// dial connects to the daemon's instance of the server, starting the
// daemon when none answers.
func (b *bridge) dial(ctx context.Context, wait time.Duration) (net.Conn, error) {
	c, err := app.DialOrStartDaemon(ctx, b.sock, b.cfgFlag, wait)
	if err != nil {
		return nil, err
	}
	return c.Connect(ctx, b.name, os.Getpid())
}

// message is what the bridge reads of a JSON-RPC message.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

// replayed are the methods a new daemon is sent again, in order, so the
// session goes on where it was.
var replayed = map[string]bool{"initialize": true, "notifications/initialized": true, "logging/setLevel": true, "resources/subscribe": true}

// replayPrefix marks the ids of replayed requests, whose answers the
// client never sees.
const replayPrefix = "mcptray-replay-"

func (b *bridge) run(ctx context.Context, conn net.Conn) error {
	b.conn = conn
	stdinDone := make(chan error, 1)
	go func() { stdinDone <- b.fromClient() }()
	for {
		lost := make(chan error, 1)
		go func(c net.Conn) { lost <- b.fromDaemon(c) }(conn)
		select {
		case err := <-stdinDone:
			// The client is done: let the daemon end the session.
			conn.Close()
			<-lost
			if err != nil && !errors.Is(err, io.EOF) {
				return err
			}
			return nil
		case <-ctx.Done():
			conn.Close()
			return nil
		case err := <-lost:
			conn.Close()
			if ctx.Err() != nil {
				return nil
			}
			select {
			case err := <-stdinDone:
				// The client left as the daemon did.
				_ = err
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

// fromClient relays stdin to the daemon, line by line.
func (b *bridge) fromClient() error {
	r := bufio.NewReaderSize(b.env.Stdin, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if !bytes.HasSuffix(line, []byte("\n")) {
				line = append(line, '\n')
			}
			b.send(line)
		}
		if err != nil {
			return err
		}
	}
}

// send writes one client message to the daemon, recording what a new
// daemon would need: requests in flight, the handshake.
func (b *bridge) send(line []byte) {
	var m message
	_ = json.Unmarshal(line, &m)
	b.mu.Lock()
	defer b.mu.Unlock()
	if m.Method != "" && len(m.ID) > 0 {
		b.pending[string(m.ID)] = true
	}
	if replayed[m.Method] {
		b.replay = append(b.replay, line)
	}
	if b.conn == nil {
		b.queue = append(b.queue, line)
		return
	}
	if _, err := b.conn.Write(line); err != nil {
		// The reader sees the loss too; what is pending is answered then.
		b.queue = append(b.queue, line)
	}
}

// fromDaemon relays the daemon's messages to stdout until the connection
// ends.
func (b *bridge) fromDaemon(conn net.Conn) error {
	r := bufio.NewReaderSize(conn, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			var m message
			_ = json.Unmarshal(line, &m)
			if m.Method == "" && len(m.ID) > 0 {
				if bytes.Contains(m.ID, []byte(replayPrefix)) {
					continue
				}
				b.mu.Lock()
				delete(b.pending, string(m.ID))
				b.mu.Unlock()
			}
			b.write(line)
		}
		if err != nil {
			return err
		}
	}
}

func (b *bridge) write(line []byte) {
	b.outMu.Lock()
	defer b.outMu.Unlock()
	_, _ = b.env.Stdout.Write(line)
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
	for _, id := range ids {
		line, _ := json.Marshal(map[string]any{
			"jsonrpc": "2.0", "id": json.RawMessage(id),
			"error": map[string]any{"code": -32603, "message": msg},
		})
		b.write(append(line, '\n'))
	}
}

// reconnect finds (or starts) the next daemon and brings it up to where
// the session was: the handshake and settings replayed, then what the
// client sent meanwhile.
func (b *bridge) reconnect(ctx context.Context) (net.Conn, error) {
	deadline := time.Now().Add(reconnectFor)
	var last error
	for time.Now().Before(deadline) {
		conn, err := b.dial(ctx, time.Until(deadline))
		if err == nil {
			if err := b.resume(conn); err == nil {
				return conn, nil
			}
			conn.Close()
		}
		last = err
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(reconnectEvery):
		}
	}
	return nil, last
}

func (b *bridge) resume(conn net.Conn) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, line := range b.replay {
		if _, err := conn.Write(withReplayID(line, i)); err != nil {
			return err
		}
	}
	for _, line := range b.queue {
		if _, err := conn.Write(line); err != nil {
			return err
		}
	}
	b.queue = nil
	b.conn = conn
	return nil
}

// withReplayID gives a replayed request an id of the bridge's own.
func withReplayID(line []byte, i int) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		return line
	}
	if _, ok := m["id"]; !ok {
		return line // a notification
	}
	m["id"], _ = json.Marshal(fmt.Sprintf("%s%d", replayPrefix, i))
	out, err := json.Marshal(m)
	if err != nil {
		return line
	}
	return append(out, '\n')
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
	sec := &app.LazySecrets{}
	exp, err := srv.ExpandWith(os.LookupEnv, sec.Secret)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, exp.Command, exp.Args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = env.Stdin, env.Stdout, env.Stderr
	cmd.Dir = exp.Cwd
	cmd.Env = os.Environ()
	for k, v := range exp.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	err = cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ExitError{Code: ee.ExitCode()}
	}
	return err
}
