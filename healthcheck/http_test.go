package healthcheck

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/demo"
	"mcptray/internal/clock/fakeclock"
	"mcptray/registry"
)

func remote(name, url string, transport registry.Transport, headers map[string]string) Target {
	return Target{Server: &registry.Server{Name: name, URL: url, TransportName: transport, Headers: headers}}
}

func demoHandler(stateless bool) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return demo.NewServer("", nil) },
		&mcp.StreamableHTTPOptions{Stateless: stateless})
}

// diagnosisText is everything a diagnosis shows a person.
func diagnosisText(d *Diagnosis) string {
	return d.Message + " " + strings.Join(d.Evidence, " ") + " " + d.Fix
}

func TestDemoOverHTTP(t *testing.T) {
	tests := []struct {
		name      string
		stateless bool
		hint      Era
		era       Era
		source    string
	}{
		{"stateless, detect", true, "", EraModern, "server/discover answered"},
		{"stateful, detect", false, "", EraLegacy, "initialize"},
		{"stateless, legacy remembered", true, EraLegacy, EraLegacy, "remembered"},
		{"stateless, initialize preferred", true, "", EraLegacy, "initialize: tried first"},
		{"modern only, initialize preferred", true, "", EraModern, "initialize refused (-32600 initialize is not supported; this server speaks 2026-07-28); server/discover answered"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			modernOnly := strings.HasPrefix(tt.name, "modern only")
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return demo.NewServer("", &demo.Options{ModernOnly: modernOnly}) },
				&mcp.StreamableHTTPOptions{Stateless: tt.stateless})
			srv := httptest.NewServer(h)
			defer srv.Close()
			tg := remote("demo", srv.URL, "", nil)
			tg.EraHint = tt.hint
			s, err := Connect(ctxTimeout(t, 20*time.Second), tg, &Options{PreferLegacy: strings.HasSuffix(tt.name, "initialize preferred")})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			r := s.Report()
			if r.Era != tt.era || !strings.Contains(r.EraSource, tt.source) {
				t.Errorf("era %s source %q", r.Era, r.EraSource)
			}
			checkDemoReport(t, r)
			if s.Transport() != registry.TransportHTTP {
				t.Errorf("transport %s", s.Transport())
			}
			for range 3 {
				if _, err := s.Probe(ctxTimeout(t, 5*time.Second)); err != nil {
					t.Fatalf("probe: %v", err)
				}
			}
		})
	}
}

// authGate lets a request through only with the right bearer token.
func authGate(token string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", resource_metadata="https://auth.example.com/.well-known/oauth-protected-resource"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func TestHeadersAndAuth(t *testing.T) {
	const token = "s3cret-token-value"
	srv := httptest.NewServer(authGate(token, demoHandler(true)))
	defer srv.Close()

	s, err := Connect(ctxTimeout(t, 20*time.Second), remote("a", srv.URL, "", map[string]string{"Authorization": "Bearer " + token}), nil)
	if err != nil {
		t.Fatalf("with the right header: %v", err)
	}
	if _, err := s.Probe(ctxTimeout(t, 5*time.Second)); err != nil {
		t.Fatalf("probe with the right header: %v", err)
	}
	s.Close()

	const wrong = "wrong-secret-do-not-print"
	for name, headers := range map[string]map[string]string{
		"no header":    nil,
		"wrong header": {"Authorization": "Bearer " + wrong},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Connect(ctxTimeout(t, 20*time.Second), remote("a", srv.URL, "", headers), nil)
			d := asDiagnosis(t, err)
			if d.Code != CodeAuthRequired || !strings.Contains(d.Message, "https://auth.example.com/.well-known/oauth-protected-resource") ||
				!strings.Contains(d.Message, "401") {
				t.Fatalf("got %+v", d)
			}
			if strings.Contains(diagnosisText(d), wrong) || strings.Contains(fmt.Sprint(err), wrong) {
				t.Errorf("the header value leaked into the diagnosis: %+v", d)
			}
		})
	}
}

func TestRemoteFailures(t *testing.T) {
	statusSrv := func(code int, ctype, body string) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", ctype)
			w.WriteHeader(code)
			io.WriteString(w, body)
		}))
	}
	s500 := statusSrv(500, "text/plain", "database down")
	defer s500.Close()
	s404 := statusSrv(404, "text/plain", "no such page")
	defer s404.Close()
	page := statusSrv(200, "text/html; charset=utf-8", "<!doctype html><html><body>Welcome to my blog</body></html>")
	defer page.Close()
	rest := statusSrv(200, "application/json", `{"status":"ok"}`)
	defer rest.Close()
	tlsSrv := httptest.NewTLSServer(demoHandler(true))
	defer tlsSrv.Close()
	arrived := make(chan struct{}, 16)
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Reading the body lets the server notice the client going away.
		_, _ = io.Copy(io.Discard, r.Body)
		arrived <- struct{}{}
		<-r.Context().Done()
	}))
	defer hang.Close()
	refused := fmt.Sprintf("http://127.0.0.1:%d/mcp", freePort(t))

	tests := []struct {
		name    string
		url     string
		tr      registry.Transport
		timeout time.Duration
		code    Code
		says    []string
	}{
		{"server error", s500.URL + "/mcp?key=query-secret", "", 0, CodeHTTPStatus, []string{"500", "database down"}},
		{"not found", s404.URL + "/mcp", "", 0, CodeHTTPStatus, []string{"404", "/mcp"}},
		{"web page", page.URL, "", 0, CodeNotMCP, []string{"web page", "Welcome to my blog"}},
		{"plain JSON API", rest.URL, "", 0, CodeNotMCP, []string{"application/json", `{\"status\":\"ok\"}`}},
		{"web page over sse", page.URL, registry.TransportSSE, 0, CodeNotMCP, []string{"text/html"}},
		{"connection refused", refused, "", 0, CodeConnectionRefused, []string{"127.0.0.1"}},
		{"connection refused over sse", refused, registry.TransportSSE, 0, CodeConnectionRefused, []string{"127.0.0.1"}},
		{"dns error", "http://mcptray-test-host.invalid/mcp", "", 0, CodeDNSError, []string{"mcptray-test-host.invalid"}},
		{"tls error", tlsSrv.URL, "", 0, CodeTLSError, []string{"not trusted"}},
		{"no answer", hang.URL, "", time.Second, CodeHandshakeTimeout, []string{hang.URL, "within 1s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := ctxTimeout(t, 20*time.Second)
			clock := fakeclock.New()
			var err error
			if tt.timeout == 0 {
				_, err = Connect(ctx, remote("r", tt.url, tt.tr, nil), &Options{Clock: clock})
			} else {
				// The deadline passes once the request is in.
				ctx, deadline := deadlineCtx(t)
				res := connectAsync(ctx, remote("r", tt.url, tt.tr, nil), &Options{Clock: clock})
				<-arrived
				clock.Advance(tt.timeout)
				deadline()
				err = (<-res).err
			}
			d := asDiagnosis(t, err)
			t.Logf("%s\n  evidence: %q\n  fix: %s", d.Message, d.Evidence, d.Fix)
			if d.Code != tt.code {
				t.Fatalf("code %s, want %s: %+v", d.Code, tt.code, d)
			}
			text := diagnosisText(d)
			for _, s := range tt.says {
				if !strings.Contains(text, s) {
					t.Errorf("diagnosis does not say %q: %s", s, text)
				}
			}
			if strings.Contains(text, "query-secret") {
				t.Errorf("the query string leaked: %s", text)
			}
		})
	}
}

// hangOnProbe passes everything to next except mcptray's own probes,
// which it never answers.
func hangOnProbe(arrived chan<- struct{}, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(probeIDPrefix)) {
			arrived <- struct{}{}
			<-r.Context().Done()
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

func TestRemoteProbeHangs(t *testing.T) {
	arrived := make(chan struct{}, 1)
	srv := httptest.NewServer(hangOnProbe(arrived, demoHandler(true)))
	defer srv.Close()
	clock := fakeclock.New()
	s, err := Connect(ctxTimeout(t, 20*time.Second), remote("h", srv.URL, "", nil), &Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Report().Era != EraModern {
		t.Fatalf("era %s", s.Report().Era)
	}
	ctx, deadline := deadlineCtx(t)
	errc := make(chan error, 1)
	go func() {
		_, err := s.Probe(ctx)
		errc <- err
	}()
	<-arrived
	clock.Advance(3 * time.Second)
	deadline()
	if d := asDiagnosis(t, <-errc); d.Code != CodeProbeTimeout || !strings.Contains(d.Message, "did not answer server/discover within 3s") {
		t.Fatalf("got %+v", d)
	}
}

func TestRemoteProbeServerGone(t *testing.T) {
	for _, stateless := range []bool{true, false} {
		t.Run(fmt.Sprint("stateless=", stateless), func(t *testing.T) {
			srv := httptest.NewServer(demoHandler(stateless))
			s, err := Connect(ctxTimeout(t, 20*time.Second), remote("g", srv.URL, "", nil), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			srv.CloseClientConnections()
			srv.Close()
			_, err = s.Probe(ctxTimeout(t, 5*time.Second))
			if d := asDiagnosis(t, err); d.Code != CodeProbeFailed {
				t.Fatalf("got %+v", d)
			}
		})
	}
}
