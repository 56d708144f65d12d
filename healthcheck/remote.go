package healthcheck

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"mcptray/registry"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func connectRemote(ctx context.Context, t Target, o Options, legacyFirst bool) (*Session, error) {
	srv := t.Server
	client, rec := newHTTPClient(o.HTTPClient, srv.Headers, o.Clock)
	cancelSent := make(chan struct{}, 1)
	if o.Client != nil {
		rec.cancelSent = cancelSent
	}
	var authz auth.OAuthHandler
	if o.Authorizer != nil {
		authz = o.Authorizer(srv.URL)
	}
	sseClient := client
	if authz != nil {
		// The SSE transport has no authorization hook: send the token.
		sseClient = &http.Client{Timeout: client.Timeout, Transport: &bearerTransport{base: client.Transport, auth: authz}}
	}
	s := &Session{opts: o, transport: srv.Transport(), httpClient: sseClient, url: srv.URL, cancelSent: cancelSent, authz: authz}
	start := o.Clock.Now()
	var err error
	refused := "" // how the server refused initialize, tried first
	if s.transport == registry.TransportSSE {
		err = s.connectSSE(ctx, sseClient)
	} else {
		// A health check needs no stream of server-initiated messages; a
		// call does: servers send requests and notifications not tied to
		// a request (elicitation, logs) there.
		transport := func() *mcp.StreamableClientTransport {
			return &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: client, DisableStandaloneSSE: o.Client == nil, OAuthHandler: authz}
		}
		hint := t.EraHint
		if legacyFirst {
			hint = EraLegacy
		}
		s.client = newClient(o)
		s.cs, err = s.client.Connect(ctx, transport(), sessionOptions(hint))
		if legacyFirst && err != nil && ctx.Err() == nil {
			// A server of the stateless revision alone refuses
			// initialize with a JSON-RPC error, or with a bare 400.
			if werr, ok := refusedInitialize(err); ok {
				refused = refusal(werr)
			} else if last := rec.latest(); last != nil && last.status == http.StatusBadRequest {
				refused = "HTTP 400"
			}
			if refused != "" {
				s.cs, err = s.client.Connect(ctx, transport(), sessionOptions(EraModern))
			}
		}
		if err != nil {
			if d := signInDiagnosis(srv, err, authz != nil); d != nil {
				return nil, d
			}
			d := withSignInFix(ctx, remoteFailure(ctx, err, rec, srv.URL, o.Clock.Now().Sub(start)), srv, rec, o.HTTPClient)
			last := rec.latest()
			if ctx.Err() != nil || last == nil || (last.status != 400 && last.status != 404 && last.status != 405) {
				return nil, d
			}
			// Maybe an old HTTP+SSE endpoint: POST is refused there, GET
			// opens the event stream.
			if sseErr := s.connectSSE(ctx, sseClient); sseErr != nil {
				return nil, d
			}
			s.transport, err = registry.TransportSSE, nil
			s.report.Diagnoses = append(s.report.Diagnoses, deprecatedTransport(srv.URL))
		}
	}
	latency := o.Clock.Now().Sub(start)
	if err != nil {
		if d := signInDiagnosis(srv, err, authz != nil); d != nil {
			return nil, d
		}
		return nil, withSignInFix(ctx, remoteFailure(ctx, err, rec, srv.URL, latency), srv, rec, o.HTTPClient)
	}
	s.fillHandshake(s.cs.InitializeResult(), latency)
	if s.transport != registry.TransportSSE {
		// From now on an answer that the session is gone ends it.
		s.ended = newSessionEnd()
		rec.setEnded(s.ended)
	}
	switch {
	case s.transport == registry.TransportSSE:
		s.report.EraSource = "HTTP+SSE transport (legacy only); initialize"
	case refused != "" && s.report.Era == EraModern:
		s.report.EraSource = initializeRefusedSource(refused)
	case legacyFirst && s.report.Era == EraLegacy:
		s.report.EraSource = legacyFirstSource
	case t.EraHint == EraLegacy:
		s.report.EraSource = "remembered from an earlier start; initialize"
	case s.report.Era == EraModern:
		s.report.EraSource = "server/discover answered"
	default:
		s.report.EraSource = "server/discover refused; initialize"
		if ex := rec.firstDiscover(); ex != nil && ex.status != 0 && ex.status != http.StatusOK {
			s.report.EraSource = fmt.Sprintf("server/discover refused (HTTP %d); initialize", ex.status)
		}
	}
	o.Logger.Debug("handshake done", "server", srv.Name, "era", s.report.Era, "version", s.report.ProtocolVersion, "how", s.report.EraSource)
	return s, nil
}

func (s *Session) connectSSE(ctx context.Context, client *http.Client) error {
	tr := &detachedSSE{inner: &mcp.SSEClientTransport{Endpoint: s.url, HTTPClient: client}}
	// HTTP+SSE predates server/discover: go straight to initialize.
	mc := newClient(s.opts)
	cs, err := mc.Connect(ctx, tr, sessionOptions(EraLegacy))
	if err != nil {
		if tr.stop != nil {
			tr.stop()
		}
		return err
	}
	s.cs, s.client, s.stopSSE = cs, mc, tr.stop
	return nil
}

// remoteFailure explains a failed remote handshake from what the recorder
// saw, since the SDK's error keeps little more than a status text.
func remoteFailure(ctx context.Context, err error, rec *recorder, rawURL string, after time.Duration) error {
	last := rec.latest()
	switch {
	case timedOut(ctx):
		return remoteTimeout(after, safeURL(rawURL), last)
	case ctx.Err() != nil:
		return fmt.Errorf("connecting: %w", context.Cause(ctx))
	}
	// The recorded round trip says it plainest; the SDK's error wraps it.
	if last != nil && last.err != nil {
		if d := networkDiagnosis(last.err, rawURL); d != nil {
			return d
		}
	}
	if d := networkDiagnosis(err, rawURL); d != nil {
		return d
	}
	if last != nil && last.status >= 400 {
		return httpDiagnosis(last)
	}
	if _, ok := unsupportedVersion(err); ok {
		return handshakeError(err, LatestLegacyVersion, "")
	}
	var werr *jsonrpc.Error
	if errors.As(err, &werr) {
		return handshakeError(err, "", "")
	}
	if last != nil && last.status >= 200 && last.status < 300 {
		return notMCP(last)
	}
	return handshakeError(err, "", "")
}
