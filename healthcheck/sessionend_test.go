package healthcheck

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// server-everything restarted under a live Streamable HTTP session: the
// first request after the restart fails, and at that answer (HTTP 400 "No
// valid session ID", or 404) the session says it has ended, with how.
func TestEverythingRestartEndsTheSession(t *testing.T) {
	dir := testServers(t)
	port := freePort(t)
	env := []string{fmt.Sprintf("PORT=%d", port)}
	first := startProc(t, env, "node", everythingJS(dir), "streamableHttp")
	waitListening(t, port, first)
	s, err := Connect(ctxTimeout(t, 60*time.Second), remote("everything", fmt.Sprintf("http://127.0.0.1:%d/mcp", port), "", nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Probe(ctxTimeout(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Ended():
		t.Fatalf("the session says it ended while the server serves it: %+v", s.EndedDiagnosis())
	default:
	}

	killGroup(first.cmd)
	<-first.exited
	second := startProc(t, env, "node", everythingJS(dir), "streamableHttp")
	waitListening(t, port, second)

	if _, err := s.Probe(ctxTimeout(t, 10*time.Second)); err == nil {
		t.Fatal("a probe on the old session succeeded after the server restarted")
	}
	select {
	case <-s.Ended():
	default:
		t.Fatal("the first failed request after the restart did not end the session")
	}
	d := s.EndedDiagnosis()
	if d == nil || d.Code != CodeSessionEnded || !strings.Contains(d.Message, "ended the session") || len(d.Evidence) == 0 {
		t.Fatalf("diagnosis %+v", d)
	}
	t.Logf("%s; %s", d.Message, d.Evidence[0])
}
