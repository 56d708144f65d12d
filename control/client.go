package control

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"syscall"
	"time"

	"mcptray/supervisor"
)

// ClientOptions tunes a [Client]. Zero fields mean defaults.
type ClientOptions struct {
	// Socket is the control socket (default [DefaultSocket]).
	Socket string
	// Timeout bounds each request that is not a stream (default 10 s).
	Timeout time.Duration
	// Retry is the wait before a lost change stream is opened again
	// (default 1 s).
	Retry time.Duration
}

// Client talks to a daemon. Besides the calls the command line needs, it is
// an [Engine] for the desktop app, behaving as a [Local] one does. While
// [Client.Run] runs, Snapshot and Status answer from a copy kept current by
// the daemon's change stream.
type Client struct {
	opts    ClientOptions
	hc      *http.Client // requests with a timeout
	stream  *http.Client // streams (no timeout)
	info    Info
	changes chan struct{}

	mu      sync.Mutex // guards the fields below
	snap    *supervisor.Snapshot
	status  Status // as of the daemon's last answer
	lastErr error
	watch   chan struct{} // closed (and replaced) on every change
	// trans are the transitions received, renumbered from 1 on this side
	// so that a restarted daemon (whose numbers start again) is seamless.
	trans []supervisor.Transition
	tseq  uint64 // the last number given
}

// clientTransitionLimit is how many transitions the client keeps.
const clientTransitionLimit = 1000

// Dial connects to the daemon and asks who it is. Nothing listening gives an
// error that matches [ErrNoDaemon].
func Dial(ctx context.Context, opts *ClientOptions) (*Client, error) {
	c := &Client{changes: make(chan struct{}, 1), watch: make(chan struct{})}
	if opts != nil {
		c.opts = *opts
	}
	if c.opts.Socket == "" {
		p, err := DefaultSocket()
		if err != nil {
			return nil, err
		}
		c.opts.Socket = p
	}
	if c.opts.Timeout <= 0 {
		c.opts.Timeout = 10 * time.Second
	}
	if c.opts.Retry <= 0 {
		c.opts.Retry = time.Second
	}
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return dial(ctx, c.opts.Socket)
		},
		MaxIdleConns: 4,
	}
	c.hc = &http.Client{Transport: tr, Timeout: c.opts.Timeout}
	c.stream = &http.Client{Transport: tr}
	if err := c.get(ctx, "/v1/info", &c.info); err != nil {
		return nil, err
	}
	c.status.ConfigPath = c.info.ConfigPath
	return c, nil
}

// Info is what the daemon said about itself when dialled.
func (c *Client) Info() Info { return c.info }

// Socket is the socket the client talks to.
func (c *Client) Socket() string { return c.opts.Socket }

// APIError is an error the daemon answered with.
type APIError struct {
	Status  int
	Code    string
	Message string
	// Config is set when the daemon's config file does not load.
	Config *ConfigError
}

func (e *APIError) Error() string { return e.Message }

// Unwrap gives the config problem, for errors.As(err, **ConfigError).
func (e *APIError) Unwrap() error {
	if e.Config == nil {
		return nil
	}
	return e.Config
}

// Is maps the daemon's error codes back to the supervisor's errors, so
// errors.Is(err, supervisor.ErrUnknownServer) works across the socket.
func (e *APIError) Is(target error) bool {
	switch e.Code {
	case codeUnknownServer:
		return target == supervisor.ErrUnknownServer
	case codeDisabled:
		return target == supervisor.ErrDisabled
	case codeNoConfig:
		return target == ErrNoConfig
	}
	return false
}

// transportError turns a failed request into ErrNoDaemon when nothing
// listens, and says which socket otherwise.
func (c *Client) transportError(err error) error {
	if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED) || isNoSocket(err) {
		return &NoDaemonError{Socket: c.opts.Socket, Err: err}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("control socket %s: %w", c.opts.Socket, err)
}

func (c *Client) do(ctx context.Context, hc *http.Client, method, path string, query url.Values) (*http.Response, error) {
	u := "http://mcptray" + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, c.transportError(err)
	}
	if resp.StatusCode >= 300 {
		defer resp.Body.Close()
		return nil, responseError(resp)
	}
	return resp, nil
}

// responseError is the daemon's error answer as an *APIError.
func responseError(resp *http.Response) error {
	var eb errorBody
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if json.Unmarshal(data, &eb) != nil || eb.Error == "" {
		eb.Error = fmt.Sprintf("daemon answered %s: %s", resp.Status, bytes.TrimSpace(data))
	}
	ae := &APIError{Status: resp.StatusCode, Code: eb.Code, Message: eb.Error}
	if eb.Problem != nil {
		ae.Config = &ConfigError{Diagnostic: *eb.Problem}
	}
	return ae
}

func (c *Client) call(ctx context.Context, method, path string, query url.Values, out any) error {
	resp, err := c.do(ctx, c.hc, method, path, query)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("daemon's answer to %s: %w", path, err)
	}
	return nil
}

func (c *Client) get(ctx context.Context, path string, out any) error {
	return c.call(ctx, http.MethodGet, path, nil, out)
}

// FetchSnapshot asks the daemon for every server's state.
func (c *Client) FetchSnapshot(ctx context.Context) (supervisor.Snapshot, error) {
	var w wireSnapshot
	if err := c.get(ctx, "/v1/snapshot", &w); err != nil {
		return supervisor.Snapshot{}, err
	}
	snap, status := fromWire(w)
	c.mu.Lock()
	c.status = status
	c.mu.Unlock()
	return snap, nil
}

// Command sends start, stop, restart or check for one server.
func (c *Client) Command(ctx context.Context, name, action string) error {
	if name == "" && action == "check" {
		return c.call(ctx, http.MethodPost, "/v1/check", nil, nil)
	}
	return c.call(ctx, http.MethodPost, "/v1/servers/"+url.PathEscape(name)+"/"+action, nil, nil)
}

// Reload asks the daemon to read its servers.toml again and apply it. A
// file that does not load gives an error that matches *ConfigError.
func (c *Client) Reload(ctx context.Context) (*ReloadResult, error) {
	var res ReloadResult
	if err := c.call(ctx, http.MethodPost, "/v1/reload", nil, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// LogPage returns server name's stderr lines after since.
func (c *Client) LogPage(ctx context.Context, name string, since uint64) (*LogPage, error) {
	var p LogPage
	q := url.Values{"since": {strconv.FormatUint(since, 10)}}
	if err := c.call(ctx, http.MethodGet, "/v1/servers/"+url.PathEscape(name)+"/log", q, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// FollowLog calls fn with each stderr line of server name after since, as
// it is written, until ctx ends (nil) or the daemon goes (an error).
func (c *Client) FollowLog(ctx context.Context, name string, since uint64, fn func(supervisor.LogLine)) error {
	return follow(ctx, c, "/v1/servers/"+url.PathEscape(name)+"/log", since, "the log stream", fn)
}

// follow reads the NDJSON stream at path (from since on), calling fn with
// each value, until ctx ends (nil) or the daemon ends it (an error).
func follow[T any](ctx context.Context, c *Client, path string, since uint64, what string, fn func(T)) error {
	q := url.Values{"since": {strconv.FormatUint(since, 10)}, "follow": {"1"}}
	resp, err := c.do(ctx, c.stream, http.MethodGet, path, q)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	for {
		var v T
		if err := dec.Decode(&v); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("daemon closed %s: %w", what, err)
		}
		fn(v)
	}
}

// Run follows the daemon's change stream, keeping the copy Snapshot returns
// and signalling Changes, until ctx ends. A lost stream (the daemon
// restarting) is opened again every Retry; the copy is kept meanwhile and
// Err says why it is stale.
func (c *Client) Run(ctx context.Context) error {
	for {
		err := c.follow(ctx)
		if ctx.Err() != nil {
			return nil
		}
		c.setErr(err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(c.opts.Retry):
		}
	}
}

func (c *Client) follow(ctx context.Context) error {
	resp, err := c.do(ctx, c.stream, http.MethodGet, "/v1/changes", nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	// Snapshots with full catalogs can be large: no line limit.
	dec := json.NewDecoder(bufio.NewReader(resp.Body))
	for {
		var m streamMessage
		if err := dec.Decode(&m); err != nil {
			return fmt.Errorf("daemon closed the change stream: %w", err)
		}
		s, status := fromWire(m.wireSnapshot)
		c.mu.Lock()
		c.snap, c.status, c.lastErr = &s, status, nil
		for _, t := range m.Transitions {
			c.tseq++
			t.Seq = c.tseq
			if len(c.trans) == clientTransitionLimit {
				c.trans = append(c.trans[:0], c.trans[1:]...)
			}
			c.trans = append(c.trans, t)
		}
		c.mu.Unlock()
		c.signal()
	}
}

// signal wakes Changes' reader and every Watch.
func (c *Client) signal() {
	select {
	case c.changes <- struct{}{}:
	default:
	}
	c.mu.Lock()
	close(c.watch)
	c.watch = make(chan struct{})
	c.mu.Unlock()
}

func (c *Client) setErr(err error) {
	c.mu.Lock()
	c.lastErr = err
	c.mu.Unlock()
	c.signal()
}

// Watch returns a channel closed at the next change seen on the stream (or
// failure to reach the daemon); any number may wait on it.
func (c *Client) Watch() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.watch
}

// Transitions returns the state transitions received on the change stream
// (while Run runs) with a number of at least since, and the number to ask
// from next. The numbers are the client's own: they go on increasing when
// the daemon restarts. Transitions from before Run started are not included.
func (c *Client) Transitions(since uint64) ([]supervisor.Transition, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []supervisor.Transition
	for _, t := range c.trans {
		if t.Seq >= since {
			out = append(out, t)
		}
	}
	return out, c.tseq + 1
}

// FetchTransitions asks the daemon for its transitions from since on (in
// the daemon's numbering).
func (c *Client) FetchTransitions(ctx context.Context, since uint64) (*TransitionPage, error) {
	var p TransitionPage
	q := url.Values{"since": {strconv.FormatUint(since, 10)}}
	if err := c.call(ctx, http.MethodGet, "/v1/transitions", q, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// Status is the daemon's engine status as of its last answer; Unreachable
// is set while the daemon does not answer.
func (c *Client) Status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.status
	s.Unreachable = c.lastErr
	return s
}

// Snapshot returns the daemon's last snapshot: the streamed copy while Run
// runs, else a fresh one (an empty snapshot when the daemon cannot be
// reached; see Status).
func (c *Client) Snapshot() supervisor.Snapshot {
	c.mu.Lock()
	s := c.snap
	c.mu.Unlock()
	if s != nil {
		return *s
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.opts.Timeout)
	defer cancel()
	snap, err := c.FetchSnapshot(ctx)
	if err != nil {
		c.setErr(err)
	}
	return snap
}

// Changes signals (coalesced) that Snapshot or Status has something new.
func (c *Client) Changes() <-chan struct{} { return c.changes }

// Start asks the daemon to start a server.
func (c *Client) Start(ctx context.Context, name string) error {
	return c.Command(ctx, name, "start")
}

// Stop asks the daemon to stop a server.
func (c *Client) Stop(ctx context.Context, name string) error { return c.Command(ctx, name, "stop") }

// Restart asks the daemon to restart a server.
func (c *Client) Restart(ctx context.Context, name string) error {
	return c.Command(ctx, name, "restart")
}

// CheckNow asks the daemon to probe a server ("" for all).
func (c *Client) CheckNow(ctx context.Context, name string) error {
	return c.Command(ctx, name, "check")
}

// Log returns server name's stderr lines after since.
func (c *Client) Log(ctx context.Context, name string, since uint64) ([]supervisor.LogLine, uint64, error) {
	p, err := c.LogPage(ctx, name, since)
	if err != nil {
		return nil, since, err
	}
	return p.Lines, p.Next, nil
}

// Shutdown asks the daemon to stop every server and exit. It returns once
// the daemon has agreed; the daemon then stops its servers and exits 0.
func (c *Client) Shutdown(ctx context.Context) error {
	return c.call(ctx, http.MethodPost, "/v1/shutdown", nil, nil)
}

// FetchInfo asks the daemon who it is now (another daemon may answer on
// the socket than the one dialled, after a restart).
func (c *Client) FetchInfo(ctx context.Context) (Info, error) {
	var info Info
	err := c.get(ctx, "/v1/info", &info)
	return info, err
}
