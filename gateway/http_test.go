//go:build unix

package gateway_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/gateway"
)

const testKey = "k3y-0123456789abcdefghijklmnopqrstuvwxyz"

// serveHTTP runs the gateway's endpoint on a loopback port.
func (e *env) serveHTTP(sameUser func(local, remote net.Addr) (bool, error)) (base string) {
	e.t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		e.t.Fatal(err)
	}
	srv := &http.Server{Handler: e.gw.HTTPHandler(gateway.HTTPOptions{Key: testKey, SameUser: sameUser}), ConnContext: gateway.ConnContext}
	go func() { _ = srv.Serve(ln) }()
	e.t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}

func TestHTTPEndpoint(t *testing.T) {
	e := newEnv(t)
	base := e.serveHTTP(gateway.PeerIsSameUser)
	url := base + "/mcp/t/" + testKey
	c := mcp.NewClient(&mcp.Implementation{Name: "http-client"}, &mcp.ClientOptions{CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "over http"}}, nil
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connecting to %s: %v", url, err)
	}
	defer cs.Close()
	if got := callText(t, cs, "echo", map[string]any{"message": "hi"}); got != "hi" {
		t.Fatalf("echo over http = %q", got)
	}
	if got := callText(t, cs, "sample", map[string]any{"message": "x"}); got != "sampled: over http" {
		t.Fatalf("sampling over http = %q", got)
	}
	// A bearer header works as well as the path.
	bearer := &http.Client{Transport: headerRT{"Authorization", "Bearer " + testKey}}
	cs2, err := mcp.NewClient(&mcp.Implementation{Name: "bearer"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp/t", HTTPClient: bearer}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	if err != nil {
		t.Fatalf("connecting with a bearer header: %v", err)
	}
	defer cs2.Close()
	if got := callText(t, cs2, "echo", map[string]any{"message": "b"}); got != "b" {
		t.Fatalf("echo with a bearer header = %q", got)
	}
	if n := e.gw.Clients("t"); n != 2 {
		t.Fatalf("gateway counts %d sessions of t; want 2", n)
	}
}

// A 2026-07-28 client without a session is served statelessly.
func TestHTTPStateless(t *testing.T) {
	e := newEnv(t)
	base := e.serveHTTP(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "modern"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp/t/" + testKey}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %s; want 2026-07-28 (the upstream speaks the initialize era: bridged)", v)
	}
	if got := callText(t, cs, "echo", map[string]any{"message": "stateless"}); got != "stateless" {
		t.Fatalf("echo = %q", got)
	}
}

type headerRT struct{ k, v string }

func (h headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.k, h.v)
	return http.DefaultTransport.RoundTrip(r)
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`

func post(t *testing.T, url string, hdr map[string]string) (int, string) {
	t.Helper()
	status, body, _ := postBody(t, url, hdr, initBody)
	return status, body
}

func postBody(t *testing.T, url string, hdr map[string]string, msg string) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(msg))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// Requests without the key, with a wrong one, or naming a foreign host or
// origin are refused before they reach a server.
func TestHTTPRefuses(t *testing.T) {
	e := newEnv(t)
	base := e.serveHTTP(gateway.PeerIsSameUser)
	for _, tc := range []struct {
		name, url string
		hdr       map[string]string
		status    int
		says      string
	}{
		{"no key", base + "/mcp/t", nil, 401, "key is missing"},
		{"wrong key", base + "/mcp/t/wrong-key-wrong-key-wrong-key-wrong", nil, 401, "wrong gateway key"},
		{"wrong bearer", base + "/mcp/t", map[string]string{"Authorization": "Bearer nope"}, 401, "wrong gateway key"},
		{"foreign host", base + "/mcp/t/" + testKey, map[string]string{"Host": "evil.example"}, 403, `evil.example`},
		{"foreign origin", base + "/mcp/t/" + testKey, map[string]string{"Origin": "http://evil.example"}, 403, `http://evil.example`},
		{"other path", base + "/x", nil, 404, "/mcp/NAME/KEY"},
		{"good", base + "/mcp/t/" + testKey, map[string]string{"Origin": "http://localhost:3000"}, 200, "gateway-test"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := post(t, tc.url, tc.hdr)
			if status != tc.status || !strings.Contains(body, tc.says) {
				t.Fatalf("status %d, body %q; want %d saying %q", status, body, tc.status, tc.says)
			}
		})
	}
	if n := e.gw.Clients("t"); n != 1 {
		t.Fatalf("%d sessions made; want only the good request's", n)
	}
}

// A connection from another user is refused even with the key. Only root
// can run a process as another user; elsewhere the check is run on this
// user's own connection, which passes.
func TestHTTPRefusesOtherUsers(t *testing.T) {
	if gateway.PeerIsSameUser == nil {
		t.Skip("this system cannot tell a TCP peer's user; the key alone keeps others out")
	}
	if os.Getuid() != 0 {
		t.Log("not root: checking the same-user test on this user's connection only")
	}
	e := newEnv(t)
	base := e.serveHTTP(gateway.PeerIsSameUser)
	if status, _ := post(t, base+"/mcp/t/"+testKey, nil); status != 200 {
		t.Fatalf("this user's request: status %d", status)
	}
	if os.Getuid() != 0 {
		return
	}
	// curl as nobody: the binary must be reachable by that user.
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Fatal("curl is needed to make a request as another user (apt install curl)")
	}
	dir, err := os.MkdirTemp("", "gw-other-user")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	out := filepath.Join(dir, "out")
	cmd := exec.Command(curl, "-s", "-o", out, "-w", "%{http_code}", "-X", "POST", "-H", "Content-Type: application/json",
		"-H", "Accept: application/json, text/event-stream", "--data", initBody, base+"/mcp/t/"+testKey)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	cmd.Dir = dir
	os.Chmod(dir, 0o777)
	code, err := cmd.Output()
	if err != nil {
		t.Fatalf("curl as nobody: %v", err)
	}
	body, _ := os.ReadFile(out)
	if string(code) != "403" || !strings.Contains(string(body), "not from the user mcptray runs as") {
		t.Fatalf("a request from uid 65534: status %s, body %q; want 403", code, body)
	}
}
