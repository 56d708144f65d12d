//go:build unix

package gateway_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcptray/gateway"
)

// rawSession is a client session spoken line by line, ids as written.
type rawSession struct {
	t   testing.TB
	w   io.Writer
	got chan map[string]json.RawMessage
}

func (e *env) rawSession() *rawSession {
	e.t.Helper()
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	e.t.Cleanup(func() { cw.Close(); cr.Close() })
	go func() {
		_ = e.gw.Serve(e.ctx, "t", gateway.LineTransport(sr, sw, sw), gateway.Peer{Via: "stdio", PID: 3})
	}()
	s := &rawSession{t: e.t, w: cw, got: make(chan map[string]json.RawMessage, 100)}
	go func() {
		sc := bufio.NewScanner(cr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]json.RawMessage
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				e.t.Errorf("the gateway wrote a line that is not JSON: %q", sc.Text())
				continue
			}
			s.got <- m
		}
	}()
	s.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if m := s.next(); string(m["id"]) != "0" || m["result"] == nil {
		e.t.Fatalf("initialize answered %v", m)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s
}

func (s *rawSession) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.w, line+"\n"); err != nil {
		s.t.Fatal(err)
	}
}

// next is the next answer (notifications skipped).
func (s *rawSession) next() map[string]json.RawMessage {
	s.t.Helper()
	for {
		select {
		case m := <-s.got:
			if m["method"] != nil {
				continue
			}
			return m
		case <-time.After(2 * time.Minute): // a 64 MiB line under -race on a loaded machine
			s.t.Fatal("no answer from the gateway")
		}
	}
}

// Every id a client may send is answered under itself, byte for byte:
// numbers the SDK would merge or cut (above 2^53, fractions, 2^63), and
// strings like the bridge's own; a null id is an invalid request.
func TestIDsAnsweredAsSent(t *testing.T) {
	e := newEnv(t)
	s := e.rawSession()
	ids := []string{"9007199254741009", "9007199254741008", "1.5", "1", "9223372036854775808", "-3", "1e2", `"mcptray-replay-0"`, `"x"`, `""`}
	for _, id := range ids {
		s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"echo","arguments":{"message":%q}}}`, id, id))
	}
	answers := map[string]string{}
	for range ids {
		m := s.next()
		var res struct {
			Content []struct{ Text string } `json:"content"`
		}
		if err := json.Unmarshal(m["result"], &res); err != nil || len(res.Content) != 1 {
			t.Fatalf("answer %v", m)
		}
		answers[string(m["id"])] = res.Content[0].Text
	}
	for _, id := range ids {
		if answers[id] != id {
			t.Errorf("request %s: answered %q under it; want its own echo (answers %v)", id, answers[id], answers)
		}
	}

	s.send(`{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"echo","arguments":{"message":"null"}}}`)
	m := s.next()
	var e1 struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	if string(m["id"]) != "null" || json.Unmarshal(m["error"], &e1) != nil || e1.Code != -32600 || !strings.Contains(e1.Message, "id is null") {
		t.Fatalf("a null id was answered %v; want an invalid-request error with id null", m)
	}
	s.send(`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`)
	if m := s.next(); string(m["id"]) != "null" || !bytes.Contains(m["error"], []byte("-32600")) {
		t.Fatalf("an object id was answered %v", m)
	}
	s.send(`{"jsonrpc":"2.0","id":7,`)
	if m := s.next(); string(m["id"]) != "null" || !bytes.Contains(m["error"], []byte("-32700")) {
		t.Fatalf("a cut line was answered %v; want a parse error", m)
	}
	s.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if m := s.next(); string(m["id"]) != "2" || m["result"] == nil {
		t.Fatalf("after bad lines, ping answered %v", m)
	}
}

// notifications/cancelled names the request by the client's id: of two
// in flight whose ids differ past 2^53, only the one named is cancelled.
func TestCancelByExactID(t *testing.T) {
	e := newEnv(t)
	s := e.rawSession()
	dir := t.TempDir()
	for _, id := range []string{"9007199254741009", "9007199254741008"} {
		s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"slow","arguments":{"steps":-1,"mark":%q}}}`, id, filepath.Join(dir, id)))
	}
	waitFor(t, "both calls in flight", func() bool { return e.gw.Servers()[0].Sessions[0].InFlight == 2 })
	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9007199254741009}}`)
	waitFor(t, "the named call to be cancelled", func() bool {
		_, err := os.Stat(filepath.Join(dir, "9007199254741009"))
		return err == nil
	})
	if _, err := os.Stat(filepath.Join(dir, "9007199254741008")); err == nil {
		t.Fatal("cancelling 9007199254741009 cancelled 9007199254741008 too")
	}
	if n := e.gw.Servers()[0].Sessions[0].InFlight; n != 1 {
		t.Fatalf("%d calls in flight after one was cancelled; want 1", n)
	}
}

// A line over the limit is answered with an error for its request, and
// the session goes on.
func TestOversizeLineIsAnswered(t *testing.T) {
	e := newEnv(t)
	s := e.rawSession()
	big := `{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"echo","arguments":{"message":"` + strings.Repeat("x", gateway.MaxMessage) + `"}}}`
	s.send(big)
	m := s.next()
	if string(m["id"]) != `"big"` || !bytes.Contains(m["error"], []byte("over the limit of 64 MiB")) {
		t.Fatalf("a line over the limit was answered %v", m)
	}
	s.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if m := s.next(); string(m["id"]) != "3" || m["result"] == nil {
		t.Fatalf("after a line over the limit, ping answered %v", m)
	}
}

// Over HTTP too, ids the SDK would merge or cut are answered under
// themselves, and a null id is an invalid request.
func TestHTTPIDsAnsweredAsSent(t *testing.T) {
	e := newEnv(t)
	base := e.serveHTTP(nil)
	url := base + "/mcp/t/" + testKey
	status, body, h := postBody(t, url, nil, initBody)
	if status != 200 {
		t.Fatalf("initialize: %d %s", status, body)
	}
	hdr := map[string]string{"Mcp-Session-Id": h.Get("Mcp-Session-Id"), "MCP-Protocol-Version": "2025-11-25"}
	postBody(t, url, hdr, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	call := func(id string) (int, string) {
		status, body, _ := postBody(t, url, hdr, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"echo","arguments":{"message":%q}}}`, id, id))
		return status, body
	}
	for _, id := range []string{"9007199254741009", "9007199254741008", "1.5", "9223372036854775808", `"mcptray-id-x-1"`, "7"} {
		status, body := call(id)
		if status != 200 || !strings.Contains(body, `"id":`+id+`,`) && !strings.Contains(body, `"id":`+id+`}`) || !strings.Contains(body, `"text":"`+strings.ReplaceAll(id, `"`, `\"`)+`"`) {
			t.Errorf("id %s: %d %s", id, status, body)
		}
	}
	status, body = call("null")
	if status != 400 || !strings.Contains(body, `"id":null`) || !strings.Contains(body, "-32600") {
		t.Fatalf("a null id: %d %s", status, body)
	}
}
