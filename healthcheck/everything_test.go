package healthcheck

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"mcptray/registry"
)

// checkEverything checks what server-everything offers, by shape rather
// than by exact counts, which change between its releases.
func checkEverything(t *testing.T, r *Report) {
	t.Helper()
	if !strings.Contains(r.ServerInfo.Name, "everything") || r.ServerInfo.Version == "" {
		t.Errorf("serverInfo = %+v", r.ServerInfo)
	}
	if len(r.Tools) < 3 || len(r.Prompts) < 1 || len(r.Resources) < 1 || len(r.ResourceTemplates) < 1 {
		t.Errorf("tools %d prompts %d resources %d templates %d", len(r.Tools), len(r.Prompts), len(r.Resources), len(r.ResourceTemplates))
	}
	echo := false
	for _, tool := range r.Tools {
		if tool.Name == "echo" {
			echo = strings.Contains(string(tool.InputSchema), "message")
		}
	}
	if !echo {
		t.Errorf("no echo tool with a message argument among %d tools", len(r.Tools))
	}
	if r.ProtocolVersion == "" || r.Era == "" || r.EraSource == "" || !measured(r.ConnectLatency) {
		t.Errorf("version %q era %q source %q latency %v", r.ProtocolVersion, r.Era, r.EraSource, r.ConnectLatency)
	}
	if r.Degraded() {
		t.Errorf("degraded: %+v", r.Diagnoses)
	}
	t.Logf("%s %s: %s %s (%s), %d tools, %d resources, %d templates, %d prompts, connect %v",
		r.ServerInfo.Name, r.ServerInfo.Version, r.Era, r.ProtocolVersion, r.EraSource,
		len(r.Tools), len(r.Resources), len(r.ResourceTemplates), len(r.Prompts), r.ConnectLatency)
}

func TestEverythingStdio(t *testing.T) {
	dir := testServers(t)
	// server-everything does not exit on EOF: startProc kills its group.
	p := startProc(t, nil, "node", everythingJS(dir), "stdio")
	s, err := Connect(ctxTimeout(t, 60*time.Second), p.target("everything", ""), nil)
	if err != nil {
		t.Fatal(err)
	}
	checkEverything(t, s.Report())
	for range 3 {
		if _, err := s.Probe(ctxTimeout(t, 10*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	s.Close()
	// Not asserted (shared machine); the figure shows Close does not wait
	// for a server that ignores EOF.
	t.Logf("Close took %v", time.Since(start))
}

// startEverythingHTTP runs server-everything in an HTTP mode and returns
// its base URL.
func startEverythingHTTP(t *testing.T, mode string) string {
	t.Helper()
	dir := testServers(t)
	port := freePort(t)
	p := startProc(t, []string{fmt.Sprintf("PORT=%d", port)}, "node", everythingJS(dir), mode)
	waitListening(t, port, p)
	return fmt.Sprintf("http://127.0.0.1:%d", port)
}

func TestEverythingRemote(t *testing.T) {
	httpBase := startEverythingHTTP(t, "streamableHttp")
	sseBase := startEverythingHTTP(t, "sse")
	tests := []struct {
		name       string
		url        string
		transport  registry.Transport
		want       registry.Transport
		deprecated bool
	}{
		{"streamable http", httpBase + "/mcp", "", registry.TransportHTTP, false},
		{"sse", sseBase + "/sse", registry.TransportSSE, registry.TransportSSE, false},
		{"http url that is an old sse endpoint", sseBase + "/sse", "", registry.TransportSSE, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Connect(ctxTimeout(t, 60*time.Second), remote("everything", tt.url, tt.transport, nil), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			r := s.Report()
			if s.Transport() != tt.want {
				t.Errorf("transport %s, want %s", s.Transport(), tt.want)
			}
			if d := findDiagnosis(r, CodeDeprecatedTransport); (d != nil) != tt.deprecated {
				t.Errorf("deprecated-transport diagnosis = %+v, want present=%v", d, tt.deprecated)
			}
			if tt.deprecated {
				r.Diagnoses = nil // checkEverything wants no others
			}
			checkEverything(t, r)
			for range 3 {
				if _, err := s.Probe(ctxTimeout(t, 10*time.Second)); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
