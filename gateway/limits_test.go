//go:build unix

package gateway_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/gateway"
)

// serveLimited runs the endpoint as the daemon does: [gateway.HTTPServer].
func (e *env) serveLimited(opts gateway.HTTPOptions) (addr string) {
	e.t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		e.t.Fatal(err)
	}
	opts.Key = testKey
	srv := e.gw.HTTPServer(e.ctx, opts)
	go func() { _ = srv.Serve(ln) }()
	e.t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// readClosed reports whether the server closes c within d.
func readClosed(c net.Conn, d time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c)
	return err == nil // io.Copy ends without error at EOF
}

// A refused request's connection is closed after its answer, and a body
// that does not come in time ends its connection.
func TestHTTPRefusedConnectionsClose(t *testing.T) {
	e := newEnv(t)
	addr := e.serveLimited(gateway.HTTPOptions{SameUser: gateway.PeerIsSameUser, BodyTimeout: time.Second})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /mcp/t HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 || !resp.Close {
		t.Fatalf("status %d, close %v; want 401 and the connection closed", resp.StatusCode, resp.Close)
	}
	if !readClosed(c, 10*time.Second) {
		t.Fatal("the refused connection stays open")
	}

	// With the key, a body that stops coming.
	s, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fmt.Fprintf(s, "POST /mcp/t/%s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\":", testKey)
	start := time.Now()
	if !readClosed(s, 30*time.Second) {
		t.Fatal("a request whose body stopped coming holds its connection")
	}
	t.Logf("a stalled body was ended after %s", time.Since(start).Round(time.Millisecond))
}

// The endpoint keeps at most MaxSessions HTTP sessions: a new one evicts
// the one idle longest, which then answers that it is gone; the others go
// on.
func TestHTTPSessionCap(t *testing.T) {
	e := newEnv(t)
	addr := e.serveLimited(gateway.HTTPOptions{MaxSessions: 3})
	url := "http://" + addr + "/mcp/t/" + testKey
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var sessions []*mcp.ClientSession
	for i := range 4 {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: fmt.Sprint("s", i)}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatalf("session %d: %v", i, err)
		}
		defer cs.Close()
		if got := callText(t, cs, "echo", map[string]any{"message": "hi"}); got != "hi" {
			t.Fatalf("session %d: echo = %q", i, got)
		}
		sessions = append(sessions, cs)
	}
	if n := e.gw.Clients("t"); n != 3 {
		t.Fatalf("%d sessions kept; want 3", n)
	}
	if _, err := sessions[0].CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "x"}}); err == nil {
		t.Fatal("the session idle longest still answers; want it evicted")
	}
	for i, cs := range sessions[1:] {
		if got := callText(t, cs, "echo", map[string]any{"message": "still"}); got != "still" {
			t.Fatalf("session %d after the eviction: %q", i+1, got)
		}
	}
}

// Another user's flood of idle connections: all but a few are closed on
// accept, the rest when their headers do not come, and the owner's
// requests are answered meanwhile. Only root can run a process as
// another user.
func TestHTTPStrangerFlood(t *testing.T) {
	if gateway.PeerIsSameUser == nil {
		t.Skip("this system cannot tell a TCP peer's user")
	}
	if os.Getuid() != 0 {
		t.Skip("only root can open connections as another user")
	}
	// The system's python: another user cannot run one under root's home.
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		t.Fatal("/usr/bin/python3 is needed to open connections as another user")
	}
	e := newEnv(t)
	addr := e.serveLimited(gateway.HTTPOptions{SameUser: gateway.PeerIsSameUser})
	host, port, _ := net.SplitHostPort(addr)
	// Opens 60 connections, sends nothing, and prints how many the
	// server closed within 5 seconds, then holds the rest.
	script := `
import socket, sys, time, select
socks = [socket.create_connection((sys.argv[1], int(sys.argv[2]))) for _ in range(60)]
closed = set()
deadline = time.time() + 5
while time.time() < deadline and len(closed) < len(socks):
    r, _, _ = select.select([s for s in socks if s not in closed], [], [], 0.2)
    for s in r:
        if s.recv(1) == b"":
            closed.add(s)
print(len(closed), flush=True)
sys.stdin.read()
`
	cmd := exec.Command(py, "-c", script, host, port)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the flood script: %v", err)
	}
	closed, _ := strconv.Atoi(strings.TrimSpace(line))
	if closed < 60-8 {
		t.Fatalf("the server closed %d of another user's 60 idle connections at once; want all but 8", closed)
	}
	if status, body := post(t, "http://"+addr+"/mcp/t/"+testKey, nil); status != 200 {
		t.Fatalf("the owner's request during the flood: %d %s", status, body)
	}
}
