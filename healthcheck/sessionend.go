package healthcheck

import (
	"bytes"
	"fmt"
	"net/http"
	"sync"
)

// CodeSessionEnded: a remote server ended the Streamable HTTP session
// (restarted, or dropped it): every later request on it fails.
const CodeSessionEnded Code = "session-ended"

// sessionEnd is closed the first time a remote server answers a request
// of an established session in the way the transport says a session that
// is gone is answered: HTTP 404 for its Mcp-Session-Id, or the HTTP 400
// "No valid session ID" some servers (server-everything after a restart)
// send instead. The SDK keeps such a session open and fails each request
// alone, so without this the session looks alive until probes fail.
type sessionEnd struct {
	once sync.Once
	done chan struct{}
	mu   sync.Mutex // protects diag
	diag *Diagnosis
}

func newSessionEnd() *sessionEnd { return &sessionEnd{done: make(chan struct{})} }

// saw looks at one exchange; head is the start of the response body.
func (e *sessionEnd) saw(req *http.Request, status int, head []byte) {
	id := req.Header.Get("Mcp-Session-Id")
	if e == nil || id == "" || req.Method == http.MethodDelete {
		return
	}
	gone := status == http.StatusNotFound ||
		(status == http.StatusBadRequest && bytes.Contains(bytes.ToLower(head), []byte("session")))
	if !gone {
		return
	}
	e.once.Do(func() {
		e.mu.Lock()
		e.diag = &Diagnosis{
			Code:     CodeSessionEnded,
			Message:  fmt.Sprintf("the server ended the session (HTTP %d for its session id): it restarted or dropped it", status),
			Evidence: []string{fmt.Sprintf("%s %s with Mcp-Session-Id → HTTP %d: %s", req.Method, safeURL(req.URL.String()), status, quote(string(bytes.TrimSpace(head))))},
		}
		e.mu.Unlock()
		close(e.done)
	})
}

// Ended is closed when the server has ended a remote Streamable HTTP
// session (nil for other sessions: never closed).
func (s *Session) Ended() <-chan struct{} {
	if s.ended == nil {
		return nil
	}
	return s.ended.done
}

// EndedDiagnosis says how the server ended the session (nil before
// [Session.Ended] is closed).
func (s *Session) EndedDiagnosis() *Diagnosis {
	if s.ended == nil {
		return nil
	}
	s.ended.mu.Lock()
	defer s.ended.mu.Unlock()
	return s.ended.diag
}

func (r *recorder) setEnded(e *sessionEnd) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ended = e
}
