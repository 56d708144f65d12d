package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxMessage bounds one message of a client session's stream, both in the
// daemon and in the `mcptray connect` bridge (which refuses a longer one
// itself, so the daemon is never sent it).
const MaxMessage = 64 << 20

// LineTransport is a client session's stream (a `mcptray connect`
// bridge's): one JSON-RPC message per line both ways.
//
// It reads line by line, so a large message costs its own size and no
// more; a bad line is answered with a parse error, a line over
// [MaxMessage] with an error for its request, and the session goes on.
//
// Request ids are kept exactly as the client sent them: the SDK turns
// every number into an int64 (2^53+1 and 2^53 become one id, 1.5 becomes
// 1), so each request is given an id of the connection's own on the way
// in, and its answer gets the client's id back, byte for byte, on the way
// out.
//
// Each connection has its own bounded queue, written by its own
// goroutine: a client that does not read makes only its own session's
// writers wait (see fanout.go for what the hub then drops).
func LineTransport(r io.Reader, w io.Writer, closer io.Closer) mcp.Transport {
	return &lineTransport{r: r, w: w, c: closer}
}

type lineTransport struct {
	r io.Reader
	w io.Writer
	c io.Closer

	mu   sync.Mutex
	conn *lineConn // made by Connect
}

// Limits of a connection's outbound queue: a writer waits while it is
// full (a message alone in it may be larger).
const (
	queueLen   = 256
	queueBytes = 16 << 20
)

func (t *lineTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &lineConn{
		r: NewLineReader(t.r, MaxMessage), w: t.w, c: t.c,
		wake: make(chan struct{}, 1), space: make(chan struct{}, 1), closed: make(chan struct{}), flushed: make(chan struct{}),
		ids: map[int64]json.RawMessage{}, byRaw: map[string]int64{},
	}
	go c.writeLoop()
	t.mu.Lock()
	t.conn = c
	t.mu.Unlock()
	return c, nil
}

// connection is the connection Connect made (nil before).
func (t *lineTransport) connection() *lineConn {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.conn
}

type lineConn struct {
	r *LineReader // read by one goroutine (the SDK's reader)
	w io.Writer   // written by writeLoop only
	c io.Closer

	mu       sync.Mutex // protects the fields below
	queue    [][]byte   // encoded messages, each with its newline
	queued   int        // bytes in queue
	why      string     // why the connection was closed by the gateway
	nextID   int64
	ids      map[int64]json.RawMessage    // the client's id of each request in flight, by the id the SDK sees
	byRaw    map[string]int64             // and back (for notifications/cancelled)
	onClose  func(why string)             // called once when the gateway closes the connection
	onCancel func(params json.RawMessage) // called at each notifications/cancelled

	wake      chan struct{} // something was queued
	space     chan struct{} // writeLoop took the queue
	closeOnce sync.Once
	closed    chan struct{}
	flushed   chan struct{} // writeLoop is done
}

func (c *lineConn) SessionID() string { return "" }

func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		line, err := c.r.Next()
		var big *OversizeError
		if errors.As(err, &big) {
			c.queueFrame(big.Reply())
			continue
		}
		if len(line) > 0 {
			msg, reply := c.decode(line)
			if reply != nil {
				c.queueFrame(reply)
			} else if msg != nil {
				return msg, nil
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, io.EOF
			}
			return nil, err
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
}

// wireHead is what the connection reads of a message besides the SDK:
// the id exactly as sent.
type wireHead struct {
	ID json.RawMessage `json:"id"`
}

// decode turns one line into the message the SDK is given, or into the
// answer the line gets instead.
func (c *lineConn) decode(line []byte) (jsonrpc.Message, []byte) {
	msg, err := jsonrpc.DecodeMessage(line)
	var head wireHead
	herr := json.Unmarshal(line, &head)
	if err != nil || herr != nil {
		if herr != nil || !json.Valid(line) {
			return nil, ErrorFrame(nil, jsonrpc.CodeParseError, "mcptray: not a JSON-RPC message: "+errText(err, herr))
		}
		return nil, ErrorFrame(answerID(head.ID), jsonrpc.CodeInvalidRequest, "mcptray: not a valid JSON-RPC message: "+err.Error())
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return msg, nil // an answer to one of the server's requests: its id is the SDK's own
	}
	switch {
	case bytes.Equal(head.ID, []byte("null")):
		return nil, ErrorFrame(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("mcptray: invalid request %s: its id is null (MCP requests must have a string or number id; a message without one is a notification)", req.Method))
	case head.ID != nil:
		if !validID(head.ID) {
			return nil, ErrorFrame(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("mcptray: invalid request %s: its id %s is neither a string nor a number", req.Method, cut(head.ID)))
		}
		c.mu.Lock()
		c.nextID++
		id := c.nextID
		c.ids[id] = bytes.Clone(head.ID)
		c.byRaw[string(head.ID)] = id
		c.mu.Unlock()
		// Ids count up from 1: well inside what a float64 (MakeID's
		// argument) keeps exactly.
		req.ID, _ = jsonrpc.MakeID(float64(id))
	case req.Method == "notifications/cancelled":
		c.mu.Lock()
		onCancel := c.onCancel
		c.mu.Unlock()
		if onCancel != nil {
			onCancel(req.Params) // the SDK handles it before any middleware
		}
		req.Params = c.cancelledParams(req.Params)
	}
	return req, nil
}

// cancelledParams are a client's notifications/cancelled params with the
// request's id as the SDK knows it.
func (c *lineConn) cancelledParams(params json.RawMessage) json.RawMessage {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
		Reason    string          `json:"reason,omitempty"`
	}
	if json.Unmarshal(params, &p) != nil || p.RequestID == nil {
		return params
	}
	c.mu.Lock()
	id, ok := c.byRaw[string(p.RequestID)]
	c.mu.Unlock()
	if !ok {
		return params // not in flight: the SDK ignores it
	}
	out, err := json.Marshal(struct {
		RequestID int64  `json:"requestId"`
		Reason    string `json:"reason,omitempty"`
	}{id, p.Reason})
	if err != nil {
		return params
	}
	return out
}

func errText(errs ...error) string {
	for _, e := range errs {
		if e != nil {
			return e.Error()
		}
	}
	return ""
}

// validID reports whether raw is an id a request may have: a string or
// a number.
func validID(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	switch v.(type) {
	case string, float64:
		return true
	}
	return false
}

// answerID is raw when it is an id a message can be answered under, else
// nil (null).
func answerID(raw json.RawMessage) json.RawMessage {
	if validID(raw) {
		return raw
	}
	return nil
}

func cut(raw []byte) string {
	if len(raw) > 40 {
		return string(raw[:40]) + "…"
	}
	return string(raw)
}

func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	data, err := c.encode(msg)
	if err != nil {
		return err
	}
	return c.enqueue(ctx, append(data, '\n'))
}

// wireResponse is a response with the client's id as it sent it.
type wireResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *jsonrpc.Error  `json:"error,omitempty"`
}

// encode is msg's wire form; an answer to a client's request carries the
// client's id.
func (c *lineConn) encode(msg jsonrpc.Message) ([]byte, error) {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return nil, err
	}
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return data, nil
	}
	n, ok := resp.ID.Raw().(int64)
	if !ok {
		return data, nil
	}
	c.mu.Lock()
	raw, ok := c.ids[n]
	if ok {
		delete(c.ids, n)
		if c.byRaw[string(raw)] == n {
			delete(c.byRaw, string(raw))
		}
	}
	c.mu.Unlock()
	if !ok {
		return data, nil
	}
	if resp.Error == nil && len(resp.Result) > 0 && json.Valid(raw) {
		// A result is put together around the client's id: encoding it
		// again would compact a large result (a long tools/list) twice.
		out := make([]byte, 0, len(resp.Result)+len(raw)+32)
		out = append(out, `{"jsonrpc":"2.0","id":`...)
		out = append(out, raw...)
		out = append(out, `,"result":`...)
		out = append(out, resp.Result...)
		return append(out, '}'), nil
	}
	var w wireResponse
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, err
	}
	w.ID = raw
	if w.Result == nil && w.Error == nil {
		w.Result = json.RawMessage("null")
	}
	return json.Marshal(w)
}

// queueFrame queues an answer the connection gives itself.
func (c *lineConn) queueFrame(frame []byte) {
	_ = c.enqueue(context.Background(), append(frame, '\n'))
}

// enqueue queues one encoded message for writeLoop, waiting while the
// queue is full: the caller is the goroutine of one session (its queue
// in the hub, or the SDK's handler of its request), and ctx bounds the
// wait of the SDK's own notifications.
func (c *lineConn) enqueue(ctx context.Context, data []byte) error {
	for {
		c.mu.Lock()
		select {
		case <-c.closed:
			c.mu.Unlock()
			return mcp.ErrConnectionClosed
		default:
		}
		if len(c.queue) == 0 || (len(c.queue) < queueLen && c.queued+len(data) <= queueBytes) {
			c.queue = append(c.queue, data)
			c.queued += len(data)
			c.mu.Unlock()
			select {
			case c.wake <- struct{}{}:
			default:
			}
			return nil
		}
		c.mu.Unlock()
		select {
		case <-c.space:
		case <-c.closed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// writeLoop writes the queue to the client until the connection closes.
func (c *lineConn) writeLoop() {
	defer close(c.flushed)
	for {
		c.mu.Lock()
		batch := c.queue
		c.queue, c.queued = nil, 0
		c.mu.Unlock()
		select {
		case c.space <- struct{}{}:
		default:
		}
		for _, data := range batch {
			if err := c.write(data); err != nil {
				why := ""
				if errors.Is(err, os.ErrDeadlineExceeded) {
					why = fmt.Sprintf("closed by mcptray: the client read nothing for %s", writeStall)
				}
				c.closeWith(why)
				return
			}
		}
		if len(batch) > 0 {
			continue
		}
		select {
		case <-c.wake:
		case <-c.closed:
			// What was queued before the close still goes out.
			c.mu.Lock()
			batch = c.queue
			c.queue = nil
			c.mu.Unlock()
			for _, data := range batch {
				if _, err := c.w.Write(data); err != nil {
					return
				}
			}
			return
		}
	}
}

// writeStall is how long a write to a client that reads nothing may wait
// before its session is closed (where the stream can tell).
const writeStall = 2 * time.Minute

func (c *lineConn) write(data []byte) error {
	if d, ok := c.w.(interface{ SetWriteDeadline(time.Time) error }); ok {
		_ = d.SetWriteDeadline(time.Now().Add(writeStall))
	}
	_, err := c.w.Write(data)
	return err
}

// watch sets what is called when the gateway closes the connection, and
// at each notifications/cancelled the client sends.
func (c *lineConn) watch(onClose func(why string), onCancel func(params json.RawMessage)) {
	c.mu.Lock()
	c.onClose, c.onCancel = onClose, onCancel
	c.mu.Unlock()
}

func (c *lineConn) closeWith(why string) {
	c.mu.Lock()
	if c.why == "" {
		c.why = why
	}
	onClose := c.onClose
	c.mu.Unlock()
	first := false
	c.closeOnce.Do(func() { first = true; close(c.closed) })
	if first && why != "" && onClose != nil {
		onClose(why)
	}
	if first && c.c != nil {
		// A writer stuck on a client that reads nothing is released by
		// the close.
		_ = c.c.Close()
	}
}

func (c *lineConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		// Answers queued before the session ended go out first, unless
		// the client reads nothing.
		select {
		case <-c.flushed:
		case <-time.After(closeFlush):
		}
		if c.c != nil {
			_ = c.c.Close()
		}
	})
	return nil
}

// closeFlush bounds how long Close waits for the queue to be written.
const closeFlush = 2 * time.Second

// ErrorFrame is a JSON-RPC error response for the request whose id is id
// as sent (nil or invalid: null, for a message whose id cannot be known).
func ErrorFrame(id json.RawMessage, code int64, message string) []byte {
	w := wireResponse{JSONRPC: "2.0", ID: id, Error: &jsonrpc.Error{Code: code, Message: message}}
	if len(id) == 0 {
		w.ID = json.RawMessage("null")
	}
	b, err := json.Marshal(w)
	if err != nil {
		// Only an id that is not JSON gets here.
		w.ID = json.RawMessage("null")
		b, _ = json.Marshal(w)
	}
	return b
}

// LineReader reads a stream of messages one per line, holding no more
// than about its limit of any line.
type LineReader struct {
	r   *bufio.Reader
	max int
}

// NewLineReader reads r's lines of up to max bytes.
func NewLineReader(r io.Reader, max int) *LineReader {
	return &LineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// OversizeError is a line over the reader's limit: it was read to its end
// and dropped.
type OversizeError struct {
	Size, Limit int
	// ID is the request's id as sent, when it came before the limit ("":
	// unknown).
	ID json.RawMessage
	// Method is the request's method, when it came before the limit.
	Method string
}

func (e *OversizeError) Error() string {
	what := "a message"
	if e.Method != "" {
		what = "the " + e.Method + " message"
	}
	return fmt.Sprintf("%s of %s is over the limit of %s per message; it was not sent on", what, sizeText(e.Size), sizeText(e.Limit))
}

// Reply is the answer to the dropped line: an invalid-request error for
// its request when its id is known, else a parse error.
func (e *OversizeError) Reply() []byte {
	if id := answerID(e.ID); id != nil {
		return ErrorFrame(id, jsonrpc.CodeInvalidRequest, "mcptray: "+e.Error())
	}
	return ErrorFrame(nil, jsonrpc.CodeParseError, "mcptray: "+e.Error())
}

func sizeText(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Next returns the next non-empty line without its end. A line over the
// limit is read to its end and dropped: Next returns an [*OversizeError]
// for it, and the next call goes on with the line after it.
func (l *LineReader) Next() ([]byte, error) {
	for {
		line, err := l.line()
		if len(bytes.TrimSpace(line)) > 0 || err != nil {
			return line, err
		}
	}
}

func (l *LineReader) line() ([]byte, error) {
	var buf []byte
	for {
		part, err := l.r.ReadSlice('\n')
		if len(buf)+len(part) > l.max {
			return nil, l.skip(buf, len(part), err)
		}
		buf = append(buf, part...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		for len(buf) > 0 && (buf[len(buf)-1] == '\n' || buf[len(buf)-1] == '\r') {
			buf = buf[:len(buf)-1]
		}
		return buf, err
	}
}

// skip reads the rest of a line over the limit, keeping only what the
// error names: the request's id and method, when they come first.
func (l *LineReader) skip(head []byte, n int, err error) error {
	e := &OversizeError{Size: len(head) + n, Limit: l.max}
	e.ID, e.Method = headOf(head)
	for errors.Is(err, bufio.ErrBufferFull) {
		var part []byte
		part, err = l.r.ReadSlice('\n')
		e.Size += len(part)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return e
}

// headOf reads the id and method of a message's start, as far as they
// come before the first value that does not end in it.
func headOf(head []byte) (id json.RawMessage, method string) {
	// A message's id and method come before its params: the start is
	// enough, and the rest of a long value is not scanned.
	if len(head) > 64<<10 {
		head = head[:64<<10]
	}
	d := json.NewDecoder(bytes.NewReader(head))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, ""
	}
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return
		}
		key, _ := t.(string)
		var v json.RawMessage
		if d.Decode(&v) != nil {
			return
		}
		switch key {
		case "id":
			id = v
		case "method":
			_ = json.Unmarshal(v, &method)
		}
	}
	return
}
