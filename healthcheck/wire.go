package healthcheck

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"mcptray/internal/clock"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxLine bounds one stdout line, as the SDK bounds one frame.
const maxLine = mcp.DefaultMaxLineLength

// probeIDPrefix marks the requests mcptray writes itself (liveness probes).
// The SDK numbers its requests with integers, so a string id never clashes,
// and replies carrying it are taken off the stream before the SDK sees them.
const probeIDPrefix = "mcptray-probe-"

var errStdoutClosed = errors.New("server's stdout closed")

// wireStats is what the server wrote so far, for explaining a handshake
// that did not complete.
type wireStats struct {
	messages   int      // JSON-RPC messages received
	noise      []string // evidence for the lines that were not MCP messages (bounded)
	noiseTotal int      // such lines seen
	waitingOn  string   // methods of requests still unanswered
}

// discoverOutcome is what became of the first server/discover.
type discoverOutcome int

const (
	discoverNotSent discoverOutcome = iota
	discoverResult
	discoverError
	discoverUnanswered
)

type probeReply struct {
	result json.RawMessage
	err    error
}

// stdioConn is the SDK's connection to a stdio server: an [mcp.Connection]
// over the server's pipes. Each stdout line is decoded once, with the SDK's
// jsonrpc types, and handed to the SDK as a message. On the way in it
// drops what is not an MCP message for this session (the SDK's own
// IOTransport ends the session on such a line) and keeps it as evidence:
// non-JSON lines, JSON that is not JSON-RPC, replies to no request, lines
// over the size limit. It answers for a server/discover left unanswered (so
// the SDK falls back to initialize instead of waiting forever), and takes
// the replies to mcptray's own probes off the stream. On the way out it
// serialises writes and notes which requests are pending.
type stdioConn struct {
	stdin           io.WriteCloser
	stdout          io.ReadCloser
	caller          context.Context // Connect's; nil once the handshake is done
	clock           Clock
	discoverTimeout time.Duration
	onNoise         func(string)
	passAll         bool            // pass every notification to the SDK: a session with handlers
	cancelSent      chan<- struct{} // told of each notifications/cancelled written

	in     chan jsonrpc.Message // the read loop hands messages to Read here
	done   chan struct{}        // closed when stdout has ended; readErr is set
	closed chan struct{}        // closed by shutdown: the pipes are closed

	readErr   error // why stdout ended (nil: EOF); written before done closes
	closeOnce sync.Once
	writeMu   sync.Mutex // serialises writes to stdin, so lines never interleave
	probeSeq  atomic.Int64
	messages  atomic.Int64 // JSON-RPC messages received

	mu sync.Mutex // protects the fields below
	// sdkClosed is closed by Close: nobody reads in any more, until
	// reopen hands the pipes to a new SDK session.
	sdkClosed chan struct{}
	sdkDone   bool // sdkClosed is closed
	// afterHandshake: noise from now on also goes to onNoise.
	afterHandshake bool
	noise          []string // evidence, bounded
	noiseTotal     int
	pending        map[jsonrpc.ID]string // id → method of SDK requests awaiting a reply
	firstMethod    string                // the first request the server was sent
	replies        int                   // replies the server gave to SDK requests
	discoverID     jsonrpc.ID            // the server/discover awaiting a reply, when discoverPend
	discoverPend   bool
	stopDiscover   func() // stops the server/discover timer
	outcome        discoverOutcome
	abandoned      map[jsonrpc.ID]bool // discovers answered by us; drop late replies
	offered        string              // protocolVersion offered in initialize
	answered       string              // protocolVersion in the last handshake result
	capabilities   json.RawMessage     // capabilities in the last handshake result, verbatim
	probes         map[jsonrpc.ID]chan probeReply
	ended          bool // the server's side ended (stdout, or the process) before mcptray closed
	closedByUs     bool // shutdown was called: an end after that is mcptray's doing
	diedInDiscover bool
	// lateDiscover: a server/discover answered for (it was unanswered in
	// time) got a result from the server after all. It speaks the
	// 2026-07-28 revision and was only slow to start.
	lateDiscover bool
	lateReply    chan struct{} // told of each late reply to such a discover
}

func newStdioConn(caller context.Context, stdin io.WriteCloser, stdout io.ReadCloser, o Options) *stdioConn {
	c := &stdioConn{
		caller:          caller,
		stdin:           stdin,
		stdout:          stdout,
		clock:           o.Clock,
		discoverTimeout: o.DiscoverTimeout,
		onNoise:         o.OnNoise,
		passAll:         o.Client != nil,
		in:              make(chan jsonrpc.Message, 64),
		done:            make(chan struct{}),
		sdkClosed:       make(chan struct{}),
		closed:          make(chan struct{}),
		pending:         map[jsonrpc.ID]string{},
		abandoned:       map[jsonrpc.ID]bool{},
		lateReply:       make(chan struct{}, 1),
		probes:          map[jsonrpc.ID]chan probeReply{},
	}
	go c.readLoop()
	return c
}

// stdioTransport hands the SDK its one connection.
type stdioTransport struct{ c *stdioConn }

func (t stdioTransport) Connect(context.Context) (mcp.Connection, error) { return t.c, nil }

// SessionID implements [mcp.Connection]: stdio has no session id.
func (c *stdioConn) SessionID() string { return "" }

// Read implements [mcp.Connection]: the next message for the SDK.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m := <-c.in:
		return m, nil
	default:
	}
	select {
	case m := <-c.in:
		return m, nil
	case <-c.done:
		// Every send of the read loop happened before done closed.
		select {
		case m := <-c.in:
			return m, nil
		default:
		}
		if c.readErr != nil {
			return nil, c.readErr
		}
		return nil, io.EOF
	case <-c.sdkGone():
		return nil, io.EOF
	case <-c.closed:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Write implements [mcp.Connection]. A request is recorded before it is
// written, so its reply can never arrive before the record.
func (c *stdioConn) Write(_ context.Context, msg jsonrpc.Message) error {
	req, isReq := msg.(*jsonrpc.Request)
	if isReq && req.IsCall() {
		c.noteCall(req)
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	err = c.writeLine(data)
	if isReq && !req.IsCall() && req.Method == "notifications/cancelled" && err == nil {
		signal(c.cancelSent)
	}
	return err
}

// signal tells ch without waiting; nil ch is nobody.
func signal(ch chan<- struct{}) {
	if ch == nil {
		return
	}
	select {
	case ch <- struct{}{}:
	default:
	}
}

func (c *stdioConn) writeLine(data []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if _, err := c.stdin.Write(append(data, '\n')); err != nil {
		return fmt.Errorf("writing to the server's stdin: %w", err)
	}
	return nil
}

// Close implements [mcp.Connection]: the SDK is done with the connection.
// The pipes stay open until shutdown: the SDK closes on its own errors and
// on a failed handshake, and what the server does after that (exit?) must
// still be seen before the handshake is judged.
func (c *stdioConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.sdkDone {
		c.sdkDone = true
		close(c.sdkClosed)
	}
	return nil
}

// sdkGone is the channel closed when the SDK session now using the pipes
// is done with them.
func (c *stdioConn) sdkGone() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sdkClosed
}

// reopen lets a new SDK session use the pipes after the last one closed
// (a refused initialize, followed by server/discover). The SDK's Close
// returns only once its reader stopped, so no message goes to the old one.
func (c *stdioConn) reopen() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sdkDone {
		c.sdkClosed, c.sdkDone = make(chan struct{}), false
	}
}

// answeredLate reports whether a server/discover mcptray answered for got
// a result from the server after all. While such a discover still waits
// for its reply, it waits for it, at most wait on the connection's clock
// (or until ctx ends or stdout does): a server answers the discover and
// the initialize that followed it in either order.
func (c *stdioConn) answeredLate(ctx context.Context, wait time.Duration) bool {
	known := func() (late, ok bool) {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.lateDiscover, c.lateDiscover || len(c.abandoned) == 0
	}
	if late, ok := known(); ok {
		return late
	}
	timeout := make(chan struct{})
	stop := clock.AfterFunc(c.clock, wait, func() { close(timeout) })
	defer stop()
	for {
		select {
		case <-c.lateReply:
			if late, ok := known(); ok {
				return late
			}
		case <-timeout:
			return false
		case <-ctx.Done():
			return false
		case <-c.done:
			return false
		}
	}
}

// shutdown closes both pipes: from now on an end of the server is
// mcptray's doing. It does not wait for the process: the supervisor owns it.
func (c *stdioConn) shutdown() {
	c.Close()
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closedByUs = true
		if c.stopDiscover != nil {
			c.stopDiscover()
		}
		c.mu.Unlock()
		close(c.closed)
		// stdin first: its end is what tells the server to exit, which ends
		// a read blocked on its stdout. Closing stdout first can wait for
		// that read for ever where closing a pipe waits for its pending
		// reads (Windows' synchronous pipes under Wine).
		c.stdin.Close()
		c.stdout.Close()
	})
}

func (c *stdioConn) noteCall(req *jsonrpc.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending[req.ID] = req.Method
	if c.firstMethod == "" {
		c.firstMethod = req.Method
	}
	switch req.Method {
	case "server/discover":
		if c.discoverPend {
			return
		}
		c.discoverID, c.discoverPend = req.ID, true
		if c.stopDiscover != nil {
			c.stopDiscover()
		}
		id := req.ID
		c.stopDiscover = clock.AfterFunc(c.clock, c.discoverTimeout, func() { c.abandonDiscover(id) })
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if json.Unmarshal(req.Params, &p) == nil {
			c.offered = p.ProtocolVersion
		}
	}
}

// abandonDiscover answers a server/discover the server left unanswered,
// with "method not found", which the SDK takes as "legacy: initialize".
// A late real reply is dropped.
func (c *stdioConn) abandonDiscover(id jsonrpc.ID) {
	c.mu.Lock()
	if !c.discoverPend || c.discoverID != id || c.ended || c.closedByUs {
		c.mu.Unlock()
		return
	}
	c.discoverPend = false
	c.outcome = discoverUnanswered
	c.abandoned[id] = true
	delete(c.pending, id)
	c.mu.Unlock()
	c.deliver(&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{
		Code:    jsonrpc.CodeMethodNotFound,
		Message: fmt.Sprintf("no answer to server/discover within %s", c.discoverTimeout),
	}})
}

// deliver hands msg to Read; false when the pipes are closed. Once the
// SDK is done, messages are dropped, but stdout is still read to its end.
func (c *stdioConn) deliver(msg jsonrpc.Message) bool {
	select {
	case c.in <- msg:
		return true
	case <-c.sdkGone():
		return true
	case <-c.closed:
		return false
	}
}

func (c *stdioConn) readLoop() {
	br := bufio.NewReaderSize(c.stdout, 64<<10)
	var long []byte // holds a line longer than br's buffer
	var err error
	for {
		var line []byte
		var size int
		line, size, err = readLine(br, &long)
		if size > maxLine {
			c.oversize(line, size)
		} else if line = bytes.TrimSpace(line); len(line) > 0 {
			if !c.take(line) {
				break // closed
			}
		}
		if err != nil {
			break
		}
	}
	if errors.Is(err, io.EOF) {
		err = nil
	}
	c.readErr = err
	c.serverEnded()
	close(c.done)
}

// readLine reads one line (its newline included, if any). A line longer
// than maxLine is skipped: line holds its start and size its length.
func readLine(br *bufio.Reader, long *[]byte) (line []byte, size int, err error) {
	frag, err := br.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return frag, len(frag), err
	}
	buf := append((*long)[:0], frag...)
	size = len(frag)
	for err == bufio.ErrBufferFull {
		frag, err = br.ReadSlice('\n')
		size += len(frag)
		if size <= maxLine {
			buf = append(buf, frag...)
		}
	}
	if cap(buf) > 1<<20 {
		*long = nil // a rare giant line does not pin its buffer
	} else {
		*long = buf
	}
	return buf, size, err
}

// take handles one stdout line; false when the connection is closed.
func (c *stdioConn) take(line []byte) bool {
	switch line[0] {
	case '{':
	case '[':
		return c.takeBatch(line)
	default:
		c.noteNoise(line, "")
		return true
	}
	var h frameHeader
	if json.Unmarshal(line, &h) != nil {
		c.noteNoise(line, "") // not JSON
		return true
	}
	if !c.passAll && h.isDroppedNotification() {
		c.messages.Add(1)
		return true
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		c.noteNoise(line, notJSONRPC(line, err))
		return true
	}
	return c.route(msg, line)
}

// frameHeader is the top of a frame: enough to recognise a notification
// without decoding it in full.
type frameHeader struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
}

// isDroppedNotification reports a notification the SDK would do nothing
// with in a health check's session. A health check registers no handlers (logging, progress, list
// changes), so of all notifications only notifications/cancelled acts: it
// cancels a request of the server's the SDK is answering. Dropping the rest
// here spares the SDK's per-message work (a full decode and a goroutine
// each), which a server flooding notifications would otherwise turn into a
// busy core.
func (h *frameHeader) isDroppedNotification() bool {
	return h.JSONRPC == "2.0" && len(h.ID) == 0 && len(h.Method) > 2 && h.Method[0] == '"' &&
		!bytes.ContainsRune(h.Method, '\\') && string(h.Method) != `"notifications/cancelled"`
}

// takeBatch takes a JSON array: MCP before 2025-06-18 allowed batches.
func (c *stdioConn) takeBatch(line []byte) bool {
	var raws []json.RawMessage
	if err := json.Unmarshal(line, &raws); err != nil || len(raws) == 0 {
		c.noteNoise(line, notJSONRPC(line, errors.New("not a batch of messages")))
		return true
	}
	for _, raw := range raws {
		msg, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			c.noteNoise(raw, notJSONRPC(raw, err))
			continue
		}
		if !c.route(msg, raw) {
			return false
		}
	}
	return true
}

// notJSONRPC says why a line is not a message, or "" for a line that is
// not JSON at all (plain noise).
func notJSONRPC(line []byte, err error) string {
	if !json.Valid(line) {
		return ""
	}
	why := err.Error()
	if we := (*jsonrpc.Error)(nil); errors.As(err, &we) && we.Code == jsonrpc.CodeInvalidRequest {
		why = "it has no method and no usable id"
	}
	return "JSON, but not a JSON-RPC message: " + why + "; dropped"
}

// route hands one decoded message on; false when the connection is closed.
func (c *stdioConn) route(msg jsonrpc.Message, line []byte) bool {
	c.messages.Add(1)
	resp, ok := msg.(*jsonrpc.Response)
	if !ok { // a notification, or a request from the server
		return c.deliver(msg)
	}
	c.mu.Lock()
	if ch, ok := c.probes[resp.ID]; ok {
		delete(c.probes, resp.ID)
		c.mu.Unlock()
		ch <- probeReply{result: resp.Result, err: resp.Error}
		return true
	}
	if s, ok := resp.ID.Raw().(string); ok && strings.HasPrefix(s, probeIDPrefix) {
		c.mu.Unlock()
		return true // a late reply to a probe that gave up
	}
	if c.abandoned[resp.ID] {
		// A late reply to a server/discover answered for: dropped, but
		// kept as evidence when it cannot be one (a canned reply). Once
		// the real one came, the id is free again: a session made anew on
		// these pipes (see connectStdio) numbers its requests from 1 too.
		_, why := checkHandshakeReply("server/discover", resp)
		if why == "" {
			delete(c.abandoned, resp.ID)
			c.replies++
			c.lateDiscover = c.lateDiscover || resp.Error == nil
		}
		c.mu.Unlock()
		signal(c.lateReply)
		if why != "" {
			c.noteNoise(line, why)
		}
		return true
	}
	method, ok := c.pending[resp.ID]
	if !ok {
		c.mu.Unlock()
		c.noteNoise(line, fmt.Sprintf("a reply to id %s, which matches no request mcptray sent; dropped", idText(resp.ID)))
		return true
	}
	hs, why := checkHandshakeReply(method, resp)
	if why != "" {
		// The request stays pending: this is not its answer (a server
		// that prints a canned reply at start-up, before reading).
		c.mu.Unlock()
		c.noteNoise(line, why)
		return true
	}
	if (method == "initialize" || method == "server/discover") && resp.Error == nil {
		c.answered, c.capabilities = hs.ProtocolVersion, hs.Capabilities
	}
	delete(c.pending, resp.ID)
	c.replies++
	if c.discoverPend && resp.ID == c.discoverID {
		c.discoverPend = false
		c.stopDiscover()
		c.outcome = discoverResult
		if resp.Error != nil {
			c.outcome = discoverError
		}
	}
	c.mu.Unlock()
	return c.deliver(resp)
}

// handshakeReply is what mcptray reads itself from a handshake result.
type handshakeReply struct {
	ProtocolVersion   string          `json:"protocolVersion"`
	SupportedVersions []string        `json:"supportedVersions"`
	Capabilities      json.RawMessage `json:"capabilities"`
}

// checkHandshakeReply decodes the reply to method when it is a handshake
// request (initialize, server/discover) answered with a result; why says
// why the reply cannot be that result, or is "".
func checkHandshakeReply(method string, resp *jsonrpc.Response) (r handshakeReply, why string) {
	if (method != "initialize" && method != "server/discover") || resp.Error != nil {
		return r, ""
	}
	err := json.Unmarshal(resp.Result, &r)
	switch {
	case err != nil:
	case method == "initialize" && r.ProtocolVersion == "":
		err = errors.New("no protocolVersion")
	case method == "server/discover" && len(r.SupportedVersions) == 0:
		err = errors.New("no supportedVersions")
	}
	if err != nil {
		return r, fmt.Sprintf("a reply to id %s that cannot be the result of %s (%v); dropped", idText(resp.ID), method, err)
	}
	return r, ""
}

// oversize handles a line over maxLine: noise, and when its start names a
// request in flight, that request fails with the reason.
func (c *stdioConn) oversize(head []byte, size int) {
	c.noteNoise(head, fmt.Sprintf("a line of %.1f MiB, over the %d MiB limit for one message; dropped", float64(size)/(1<<20), maxLine>>20))
	id, ok := leadingID(head)
	if !ok {
		return
	}
	err := &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("the reply was %.1f MiB, over mcptray's %d MiB limit for one message", float64(size)/(1<<20), maxLine>>20)}
	c.mu.Lock()
	if ch, ok := c.probes[id]; ok {
		delete(c.probes, id)
		c.mu.Unlock()
		ch <- probeReply{err: err}
		return
	}
	_, pending := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if pending {
		c.deliver(&jsonrpc.Response{ID: id, Error: err})
	}
}

// leadingID finds the id of a message from its first bytes, when "id"
// comes before any large member.
func leadingID(head []byte) (jsonrpc.ID, bool) {
	dec := json.NewDecoder(bytes.NewReader(head))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return jsonrpc.ID{}, false
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return jsonrpc.ID{}, false
		}
		if key == "id" {
			var v any
			if dec.Decode(&v) != nil {
				return jsonrpc.ID{}, false
			}
			id, err := jsonrpc.MakeID(v)
			return id, err == nil && id.IsValid()
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return jsonrpc.ID{}, false
		}
	}
	return jsonrpc.ID{}, false
}

// probeID is the id of mcptray's own n-th request.
func probeID(n int64) jsonrpc.ID {
	id, _ := jsonrpc.MakeID(fmt.Sprintf("%s%d", probeIDPrefix, n)) // a string is always an ID
	return id
}

func idText(id jsonrpc.ID) string {
	if s, ok := id.Raw().(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprint(id.Raw())
}

// noteNoise keeps a line that is not a message for this session as
// evidence, with why when it is JSON.
func (c *stdioConn) noteNoise(line []byte, why string) {
	text := string(line[:min(len(line), maxQuotedLine*2)])
	ev := quote(text)
	if why != "" {
		ev += ": " + why
	}
	c.mu.Lock()
	c.noiseTotal++
	if len(c.noise) < maxQuotedLines {
		c.noise = append(c.noise, ev)
	}
	report := c.afterHandshake && c.onNoise != nil
	c.mu.Unlock()
	if report {
		c.onNoise(text)
	}
}

// serverEnded records that the server is gone (stdout ended or the process
// exited) unless mcptray ended the session first: it closed the pipes, or
// the caller ended Connect's context for a reason of its own (a deadline,
// or a cancel with a cause), after which it may well stop the process or
// close its stdin, and most servers then exit. It also records whether the
// server died on
// server/discover: while it was pending, or after mcptray gave up on it
// without the server having answered anything (a slow reader that read it
// late, after initialize had gone out).
func (c *stdioConn) serverEnded() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended || c.closedByUs || (c.caller != nil && endedByCaller(c.caller)) {
		return
	}
	c.ended = true
	if c.firstMethod == "server/discover" && (c.discoverPend || (c.outcome == discoverUnanswered && c.replies == 0)) {
		c.diedInDiscover = true
	}
	c.discoverPend = false
	if c.stopDiscover != nil {
		c.stopDiscover()
	}
}

// endState is how the connection ended, as far as a diagnosis needs it.
type endState struct {
	ended, diedInDiscover bool
	offered, answered     string
}

func (c *stdioConn) endState() endState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return endState{c.ended, c.diedInDiscover, c.offered, c.answered}
}

func (c *stdioConn) stats() wireStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := wireStats{messages: int(c.messages.Load()), noise: slices.Clone(c.noise), noiseTotal: c.noiseTotal}
	methods := slices.Sorted(maps.Values(c.pending))
	st.waitingOn = "none"
	if len(methods) > 0 {
		st.waitingOn = fmt.Sprint(slices.Compact(methods))
	}
	return st
}

func (c *stdioConn) handshakeDone() {
	c.mu.Lock()
	c.afterHandshake, c.caller = true, nil
	c.mu.Unlock()
}

// call sends a request of mcptray's own (not through the SDK) and waits for
// its reply. The SDK refuses to send custom methods named like standard
// ones, and exposes no server/discover call of its own.
func (c *stdioConn) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	id := probeID(c.probeSeq.Add(1))
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	data, err := jsonrpc.EncodeMessage(&jsonrpc.Request{ID: id, Method: method, Params: raw})
	if err != nil {
		return nil, err
	}
	ch := make(chan probeReply, 1)
	c.mu.Lock()
	if c.ended || c.closedByUs {
		c.mu.Unlock()
		return nil, errStdoutClosed
	}
	c.probes[id] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.probes, id)
		c.mu.Unlock()
	}
	if err := c.writeLine(data); err != nil {
		forget()
		return nil, err
	}
	select {
	case r := <-ch:
		return r.result, r.err
	case <-ctx.Done():
		forget()
		return nil, ctx.Err()
	case <-c.done:
		forget()
		return nil, errStdoutClosed
	}
}
