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
	"sync"
	"sync/atomic"
	"time"
)

// maxLine bounds one stdout line, as the SDK bounds one frame.
const maxLine = 16 << 20

// probeIDPrefix marks the requests mcptray writes itself (liveness probes).
// The SDK numbers its requests with integers, so a string id never clashes,
// and replies carrying it are taken off the stream before the SDK sees them.
const probeIDPrefix = "mcptray-probe-"

var errStdoutClosed = errors.New("server's stdout closed")

// wireStats is what the server wrote so far, for explaining a handshake
// that did not complete.
type wireStats struct {
	messages   int      // JSON-RPC messages received
	noise      []string // non-JSON lines kept (bounded)
	noiseTotal int      // non-JSON lines seen
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
	err    *wireError
}

type wireError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *wireError) Error() string { return fmt.Sprintf("error %d: %s", e.Code, e.Message) }

// stdioWire sits between the server's pipes and the SDK's IOTransport. On
// the way in it drops what is not JSON-RPC (the SDK session dies on such a
// line), answers for a server/discover left unanswered (so the SDK falls
// back to initialize instead of waiting forever), and takes the replies to
// mcptray's own probes off the stream. On the way out it serialises writes
// and notes which requests are pending.
type stdioWire struct {
	stdin           io.WriteCloser
	stdout          io.ReadCloser
	discoverTimeout time.Duration
	onNoise         func(string)

	pr *io.PipeReader // the SDK reads filtered lines here
	pw *io.PipeWriter

	writeMu sync.Mutex // serialises writes to stdin, so lines never interleave

	probeSeq  atomic.Int64
	done      chan struct{} // closed when stdout has ended
	closeOnce sync.Once

	mu sync.Mutex // protects the fields below
	st wireStats
	// afterHandshake: noise from now on also goes to onNoise.
	afterHandshake bool
	pending        map[string]string // id → method of SDK requests awaiting a reply
	discoverID     string            // id of the server/discover awaiting a reply
	discoverTimer  *time.Timer
	outcome        discoverOutcome
	abandoned      map[string]bool // ids of discovers answered by us; drop late replies
	offered        string          // protocolVersion offered in initialize
	answered       string          // protocolVersion in the last handshake result
	capabilities   json.RawMessage // capabilities in the last handshake result, verbatim
	probes         map[string]chan probeReply
	ended          bool // stdout ended or the process exited
	closed         bool // we closed the pipes: an end after that is ours
	diedInDiscover bool
}

func newStdioWire(stdin io.WriteCloser, stdout io.ReadCloser, discoverTimeout time.Duration, onNoise func(string)) *stdioWire {
	pr, pw := io.Pipe()
	w := &stdioWire{
		stdin:           stdin,
		stdout:          stdout,
		discoverTimeout: discoverTimeout,
		onNoise:         onNoise,
		pr:              pr,
		pw:              pw,
		done:            make(chan struct{}),
		pending:         map[string]string{},
		abandoned:       map[string]bool{},
		probes:          map[string]chan probeReply{},
	}
	go w.readLoop()
	return w
}

// sdkReader is what IOTransport reads; closing it ends the whole wire.
func (w *stdioWire) sdkReader() io.ReadCloser { return readCloser{w.pr, w.Close} }

// sdkWriter is what IOTransport writes.
func (w *stdioWire) sdkWriter() io.WriteCloser { return sdkWriter{w} }

type readCloser struct {
	io.Reader
	close func() error
}

func (r readCloser) Close() error { return r.close() }

type sdkWriter struct{ w *stdioWire }

func (s sdkWriter) Write(p []byte) (int, error) {
	s.w.noteOutgoing(p)
	return s.w.writeRaw(p)
}

func (s sdkWriter) Close() error { return s.w.Close() }

func (w *stdioWire) writeRaw(p []byte) (int, error) {
	w.writeMu.Lock()
	defer w.writeMu.Unlock()
	return w.stdin.Write(p)
}

// Close closes both pipes. It does not wait for the process: the
// supervisor owns it.
func (w *stdioWire) Close() error {
	w.closeOnce.Do(func() {
		w.mu.Lock()
		w.closed = true
		w.mu.Unlock()
		w.pr.Close()
		w.stdout.Close()
		w.stdin.Close()
		w.mu.Lock()
		if w.discoverTimer != nil {
			w.discoverTimer.Stop()
		}
		w.mu.Unlock()
	})
	return nil
}

type outgoing struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		ProtocolVersion string `json:"protocolVersion"`
	} `json:"params"`
}

// noteOutgoing records an SDK request before it is written, so its reply
// can never arrive before the record.
func (w *stdioWire) noteOutgoing(p []byte) {
	var m outgoing
	if json.Unmarshal(p, &m) != nil || len(m.ID) == 0 || m.Method == "" {
		return
	}
	id := string(m.ID)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pending[id] = m.Method
	switch m.Method {
	case "server/discover":
		if w.outcome == discoverNotSent || w.discoverID == "" {
			w.discoverID = id
			if w.discoverTimer != nil {
				w.discoverTimer.Stop()
			}
			w.discoverTimer = time.AfterFunc(w.discoverTimeout, func() { w.abandonDiscover(id) })
		}
	case "initialize":
		w.offered = m.Params.ProtocolVersion
	}
}

// abandonDiscover answers a server/discover the server left unanswered,
// with "method not found", which the SDK takes as "legacy: initialize".
// A late real reply is dropped.
func (w *stdioWire) abandonDiscover(id string) {
	w.mu.Lock()
	if w.discoverID != id || w.ended {
		w.mu.Unlock()
		return
	}
	w.discoverID = ""
	w.outcome = discoverUnanswered
	w.abandoned[id] = true
	delete(w.pending, id)
	w.mu.Unlock()
	line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no answer to server/discover within %s"}}`+"\n",
		id, w.discoverTimeout)
	_, _ = w.pw.Write([]byte(line))
}

type incoming struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Result  json.RawMessage `json:"result"`
	Error   *wireError      `json:"error"`
}

func (w *stdioWire) readLoop() {
	sc := bufio.NewScanner(w.stdout)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if !w.forward(line) {
			continue
		}
		if _, err := w.pw.Write(append(line, '\n')); err != nil {
			break // the SDK side is closed
		}
	}
	err := sc.Err()
	w.processEnded()
	close(w.done)
	w.pw.CloseWithError(err) // nil means EOF
}

// processEnded records that the server is gone (stdout ended or the
// process exited), and whether that happened during server/discover.
func (w *stdioWire) processEnded() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended || w.closed {
		return
	}
	w.ended = true
	if w.discoverID != "" {
		w.diedInDiscover = true
		w.discoverID = ""
	}
	if w.discoverTimer != nil {
		w.discoverTimer.Stop()
	}
}

// forward classifies one stdout line and reports whether the SDK gets it.
func (w *stdioWire) forward(line []byte) bool {
	var m incoming
	isJSON := (line[0] == '{' || line[0] == '[') && json.Unmarshal(line, &m) == nil
	if line[0] == '[' && isJSON {
		// MCP never batches, but the SDK understands batches: let it judge.
		w.mu.Lock()
		w.st.messages++
		w.mu.Unlock()
		return true
	}
	if !isJSON || m.JSONRPC != "2.0" {
		w.noise(string(line))
		return false
	}
	w.mu.Lock()
	w.st.messages++
	if len(m.ID) == 0 || m.Method != "" { // a notification or a request from the server
		w.mu.Unlock()
		return true
	}
	id := string(m.ID)
	if ch, ok := w.probes[id]; ok {
		delete(w.probes, id)
		w.mu.Unlock()
		ch <- probeReply{result: m.Result, err: m.Error}
		return false
	}
	if bytes.HasPrefix(m.ID, []byte(`"`+probeIDPrefix)) || w.abandoned[id] {
		delete(w.abandoned, id)
		w.mu.Unlock()
		return false // a reply nobody waits for any more
	}
	method := w.pending[id]
	delete(w.pending, id)
	if id == w.discoverID {
		w.discoverID = ""
		if w.discoverTimer != nil {
			w.discoverTimer.Stop()
		}
		if m.Error != nil {
			w.outcome = discoverError
		} else {
			w.outcome = discoverResult
		}
	}
	if (method == "initialize" || method == "server/discover") && m.Error == nil {
		var r struct {
			ProtocolVersion string          `json:"protocolVersion"`
			Capabilities    json.RawMessage `json:"capabilities"`
		}
		if json.Unmarshal(m.Result, &r) == nil {
			w.answered = r.ProtocolVersion
			w.capabilities = r.Capabilities
		}
	}
	w.mu.Unlock()
	return true
}

func (w *stdioWire) noise(line string) {
	w.mu.Lock()
	w.st.noiseTotal++
	if len(w.st.noise) < maxQuotedLines {
		if len(line) > maxQuotedLine*2 {
			line = line[:maxQuotedLine*2]
		}
		w.st.noise = append(w.st.noise, line)
	}
	report := w.afterHandshake && w.onNoise != nil
	w.mu.Unlock()
	if report {
		w.onNoise(line)
	}
}

func (w *stdioWire) stats() wireStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := w.st
	st.noise = slices.Clone(w.st.noise)
	methods := slices.Sorted(maps.Values(w.pending))
	st.waitingOn = "none"
	if len(methods) > 0 {
		st.waitingOn = fmt.Sprint(slices.Compact(methods))
	}
	return st
}

func (w *stdioWire) handshakeDone() {
	w.mu.Lock()
	w.afterHandshake = true
	w.mu.Unlock()
}

// call sends a request of mcptray's own (not through the SDK) and waits for
// its reply. The SDK refuses to send custom methods named like standard
// ones, and exposes no server/discover call of its own.
func (w *stdioWire) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	id := fmt.Sprintf("%q", fmt.Sprintf("%s%d", probeIDPrefix, w.probeSeq.Add(1)))
	line, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	ch := make(chan probeReply, 1)
	w.mu.Lock()
	if w.ended {
		w.mu.Unlock()
		return nil, errStdoutClosed
	}
	w.probes[id] = ch
	w.mu.Unlock()
	forget := func() {
		w.mu.Lock()
		delete(w.probes, id)
		w.mu.Unlock()
	}
	if _, err := w.writeRaw(append(line, '\n')); err != nil {
		forget()
		return nil, fmt.Errorf("writing to the server's stdin: %w", err)
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, r.err
		}
		return r.result, nil
	case <-ctx.Done():
		forget()
		return nil, ctx.Err()
	case <-w.done:
		forget()
		return nil, errStdoutClosed
	}
}
