//go:build unix

// Unix only: these run the built mcptray and its daemon as daemonEnv
// (daemon_test.go) does, ending processes with signals and finding the
// daemon by its Unix socket; the Windows daemon's named pipe and Job
// Objects are tested in control and supervisor.

package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"mcptray/control"
	"mcptray/gateway"
	"mcptray/healthcheck"
)

// rawBridge is `mcptray connect NAME` spoken to line by line, ids as
// written.
type rawBridge struct {
	t   *testing.T
	in  io.WriteCloser
	got chan map[string]json.RawMessage
	cmd *exec.Cmd
}

func (d *daemonEnv) rawBridge(name string) *rawBridge {
	d.t.Helper()
	cmd := exec.Command(d.bin, "connect", name)
	cmd.Env = d.env
	in, err := cmd.StdinPipe()
	if err != nil {
		d.t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		d.t.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		d.t.Fatal(err)
	}
	b := &rawBridge{t: d.t, in: in, got: make(chan map[string]json.RawMessage, 1000), cmd: cmd}
	d.t.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if s := stderr.String(); strings.Contains(s, "panic") {
			d.t.Errorf("the bridge panicked:\n%s", s)
		}
	})
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]json.RawMessage
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				d.t.Errorf("the bridge wrote a line that is not JSON: %q", sc.Text())
				continue
			}
			b.got <- m
		}
		close(b.got)
	}()
	b.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if m := b.next(); string(m["id"]) != "0" || m["result"] == nil {
		d.t.Fatalf("initialize answered %v (stderr %s)", m, stderr.String())
	}
	b.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return b
}

func (b *rawBridge) send(line string) {
	b.t.Helper()
	if _, err := io.WriteString(b.in, line+"\n"); err != nil {
		b.t.Fatal(err)
	}
}

// next is the next answer (notifications and the server's requests
// skipped).
func (b *rawBridge) next() map[string]json.RawMessage {
	b.t.Helper()
	for {
		select {
		case m, ok := <-b.got:
			if !ok {
				b.t.Fatal("the bridge ended")
			}
			if m["method"] != nil {
				continue
			}
			return m
		case <-time.After(60 * time.Second):
			b.t.Fatal("no answer from the bridge")
		}
	}
}

// echoText is the text of an echo tool's result.
func echoText(m map[string]json.RawMessage) string {
	var res struct {
		Content []struct{ Text string } `json:"content"`
	}
	if json.Unmarshal(m["result"], &res) != nil || len(res.Content) == 0 {
		return ""
	}
	return res.Content[0].Text
}

// Through `mcptray connect`, every id is answered under itself byte for
// byte (past 2^53, fractions, 2^63, strings like the bridge's own replay
// ids), a null id is an invalid request, and after the daemon is killed
// the session goes on with its replayed state sent once: one
// logging/setLevel however many the client sent.
func TestConnectKeepsIDsAndReplaysOnce(t *testing.T) {
	d := newDaemonEnv(t)
	d.stopDetachedDaemon()
	b := d.rawBridge("demo")
	ids := []string{"9007199254741009", "9007199254741008", "1.5", "9223372036854775808", "-3", `"mcptray-replay-0"`, `"mcptray-replay-2"`, `"x"`}
	for _, id := range ids {
		b.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"echo","arguments":{"message":%q}}}`, id, id))
	}
	answers := map[string]string{}
	for range ids {
		m := b.next()
		answers[string(m["id"])] = echoText(m)
	}
	for _, id := range ids {
		if !strings.Contains(answers[id], id) {
			t.Errorf("request %s: answered %q under it; want its own echo (answers %v)", id, answers[id], answers)
		}
	}
	b.send(`{"jsonrpc":"2.0","id":null,"method":"ping"}`)
	if m := b.next(); string(m["id"]) != "null" || !strings.Contains(string(m["error"]), "-32600") {
		t.Fatalf("a null id was answered %v; want an invalid-request error", m)
	}
	const levels = 300
	for i := range levels {
		b.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"lv%d","method":"logging/setLevel","params":{"level":"info"}}`, i))
	}
	for range levels {
		if m := b.next(); m["error"] != nil {
			t.Fatalf("logging/setLevel answered %v", m)
		}
	}

	first := d.daemonPID()
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for n := 0; ; n++ {
		b.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"mcptray-replay-%d","method":"tools/call","params":{"name":"echo","arguments":{"message":"after"}}}`, n))
		m := b.next()
		if string(m["id"]) != fmt.Sprintf(`"mcptray-replay-%d"`, n) {
			t.Fatalf("answered %v; want id mcptray-replay-%d", m, n)
		}
		if echoText(m) == "after" {
			break
		}
		if !strings.Contains(string(m["error"]), "went away") || time.Now().After(deadline) {
			t.Fatalf("after the daemon was killed: %v", m)
		}
		time.Sleep(100 * time.Millisecond)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := control.Dial(ctx, &control.ClientOptions{Socket: d.sock()})
	if err != nil {
		t.Fatal(err)
	}
	page, err := c.Trace(ctx, "demo", 0)
	if err != nil {
		t.Fatal(err)
	}
	sent := map[string]int{}
	for _, f := range page.Frames {
		if f.Dir == healthcheck.DirClientIn && f.Kind == "request" {
			sent[f.Method]++
		}
	}
	if sent["initialize"] != 1 || sent["logging/setLevel"] != 1 {
		t.Fatalf("the new daemon was sent %v; want the handshake and one logging/setLevel replayed", sent)
	}
}

// A message over the limit is answered by the bridge with an error for its
// request and never reaches the daemon (which neither restarts nor hears
// of it again); the session goes on.
func TestConnectAnswersOversizeMessages(t *testing.T) {
	d := newDaemonEnv(t)
	d.stopDetachedDaemon()
	b := d.rawBridge("demo")
	pid := d.daemonPID()
	big := `{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"echo","arguments":{"message":"` + strings.Repeat("x", gateway.MaxMessage+6<<20) + `"}}}`
	b.send(big)
	m := b.next()
	if string(m["id"]) != `"big"` || !strings.Contains(string(m["error"]), "over the limit of 64 MiB") || strings.Contains(string(m["error"]), "went away") {
		t.Fatalf("a 70 MiB message was answered %v; want an error saying it is over the limit", m)
	}
	b.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"small"}}}`)
	if m := b.next(); echoText(m) != "small" {
		t.Fatalf("after the big message: %v", m)
	}
	if now := d.daemonPID(); now != pid {
		t.Fatalf("the daemon changed (pid %d, was %d)", now, pid)
	}
}
