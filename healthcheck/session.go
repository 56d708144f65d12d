package healthcheck

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/registry"
)

// Protocol versions mcptray names when it chooses how to connect.
const (
	// ModernVersion is the first stateless revision (server/discover).
	ModernVersion = "2026-07-28"
	// LatestLegacyVersion is offered in initialize when the era is legacy.
	LatestLegacyVersion = "2025-11-25"
)

var supportedVersions = mcp.SupportedProtocolVersions()

// Defaults for [Options].
const (
	DefaultDiscoverTimeout = 2 * time.Second
	DefaultClientName      = "mcptray"
	DefaultClientVersion   = "dev"
)

// closeWait bounds how long Close waits for the SDK to wind a session down.
const closeWait = time.Second

// exitGrace is how long a handshake keeps reading stdout after the process
// exited, so a last reply already in the pipe is not lost.
const exitGrace = 100 * time.Millisecond

// Options tunes Connect. The zero value (or nil) is ready to use.
type Options struct {
	// HTTPClient is the base client for remote servers (proxies, timeouts,
	// CA pool). The server's configured headers are added on every request
	// by a RoundTripper wrapped around its transport. Nil means a default
	// client.
	HTTPClient *http.Client
	// ClientName and ClientVersion identify mcptray to the server.
	ClientName    string
	ClientVersion string
	// DiscoverTimeout is how long an unanswered server/discover waits before
	// the server is taken as legacy (initialize). Default 2 s.
	DiscoverTimeout time.Duration
	// OnNoise receives each non-JSON stdout line seen after the handshake
	// (lines seen before it are in Report.Diagnoses). It must not block.
	OnNoise func(line string)
	// Logger receives debug records about era detection; nil discards.
	Logger *slog.Logger
	// Now is the clock for latencies (nil: time.Now).
	Now func() time.Time
	// Authorizer returns the stored sign-in for a remote server's URL (see
	// [StoredAuth]), or nil when there is none. Nil means no sign-ins.
	Authorizer func(serverURL string) auth.OAuthHandler
}

func (o *Options) withDefaults() Options {
	var r Options
	if o != nil {
		r = *o
	}
	if r.ClientName == "" {
		r.ClientName = DefaultClientName
	}
	if r.ClientVersion == "" {
		r.ClientVersion = DefaultClientVersion
	}
	if r.DiscoverTimeout <= 0 {
		r.DiscoverTimeout = DefaultDiscoverTimeout
	}
	if r.Logger == nil {
		r.Logger = slog.New(slog.DiscardHandler)
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	return r
}

// Session is a live connection to one server: what it reported, and a way
// to probe it. Close it when done; it never waits on the server's process.
type Session struct {
	opts      Options
	transport registry.Transport // the transport actually used
	cs        *mcp.ClientSession

	wire *stdioWire // stdio only

	httpClient *http.Client // remote only
	url        string
	stopSSE    context.CancelFunc // sse only: ends the event stream
	probeSeq   atomic.Int64       // numbers the HTTP probes

	closeOnce sync.Once
	closeErr  error

	report Report // fixed after Connect; Report adds the noise seen since
}

// Transport is the transport the session uses: "sse" for an http server
// that turned out to be an old HTTP+SSE endpoint.
func (s *Session) Transport() registry.Transport { return s.transport }

// Connect connects to t, finds its protocol era, performs the handshake
// and discovers what the server offers (every page of every list it
// declares). It respects ctx: the supervisor bounds it with the server's
// startup_timeout.
//
// A failure is returned as a *Diagnosis. A stdio server that exited while
// answering server/discover yields an error wrapping ErrDiedDuringDiscover:
// start it again and connect with EraHint = EraLegacy. A failing list does
// not fail Connect: it is a list-failed diagnosis in the report.
func Connect(ctx context.Context, t Target, opts *Options) (*Session, error) {
	o := opts.withDefaults()
	if t.Server == nil {
		return nil, &Diagnosis{Code: CodeInvalidConfig, Message: "No server given to connect to."}
	}
	var (
		s   *Session
		err error
	)
	switch t.Server.Transport() {
	case registry.TransportStdio:
		s, err = connectStdio(ctx, t, o)
	case registry.TransportHTTP, registry.TransportSSE:
		s, err = connectRemote(ctx, t, o)
	default:
		return nil, &Diagnosis{
			Code:    CodeInvalidConfig,
			Message: fmt.Sprintf("Server %q has an unknown transport %q.", t.Server.Name, t.Server.TransportName),
			Fix:     `Use transport = "http" or "sse" with a url, or a command for stdio.`,
		}
	}
	if err != nil {
		return nil, err
	}
	if err := s.discover(ctx); err != nil {
		s.Close()
		return nil, err
	}
	if s.wire != nil {
		s.wire.handshakeDone()
	}
	return s, nil
}

func newClient(o Options) *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: o.ClientName, Version: o.ClientVersion}, &mcp.ClientOptions{
		// A health check offers nothing to the server: no roots, sampling
		// or elicitation.
		Capabilities: &mcp.ClientCapabilities{},
	})
}

// sessionOptions picks the version offered: a remembered legacy era goes
// straight to initialize; otherwise the SDK tries server/discover first.
func sessionOptions(hint Era) *mcp.ClientSessionOptions {
	if hint == EraLegacy {
		return &mcp.ClientSessionOptions{ProtocolVersion: LatestLegacyVersion}
	}
	return &mcp.ClientSessionOptions{ProtocolVersion: ModernVersion}
}

var errProcessExited = errors.New("the server process exited")

func connectStdio(ctx context.Context, t Target, o Options) (*Session, error) {
	if t.Stdin == nil || t.Stdout == nil {
		return nil, &Diagnosis{Code: CodeInvalidConfig, Message: fmt.Sprintf("Server %q is a stdio server but no pipes were handed over.", t.Server.Name)}
	}
	w := newStdioWire(t.Stdin, t.Stdout, o.DiscoverTimeout, o.OnNoise)
	hctx, cancel := context.WithCancelCause(ctx)
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		if t.Exited == nil {
			return
		}
		select {
		case <-t.Exited:
		case <-hctx.Done():
			return
		}
		// Let the reader drain what the process wrote before it died.
		select {
		case <-w.done:
		case <-time.After(exitGrace):
		case <-hctx.Done():
			return
		}
		w.processEnded()
		cancel(errProcessExited)
	}()
	start := o.Now()
	cs, err := newClient(o).Connect(hctx, &mcp.IOTransport{Reader: w.sdkReader(), Writer: w.sdkWriter()}, sessionOptions(t.EraHint))
	latency := o.Now().Sub(start)
	cancel(nil)
	<-watchDone
	if err != nil {
		w.Close()
		return nil, stdioFailure(ctx, err, w, latency)
	}
	res := cs.InitializeResult()
	s := &Session{opts: o, transport: registry.TransportStdio, cs: cs, wire: w}
	s.fillHandshake(res, latency)
	w.mu.Lock()
	caps, outcome := w.capabilities, w.outcome
	w.mu.Unlock()
	if len(caps) > 0 {
		s.report.Capabilities = slices.Clone(caps)
	}
	switch {
	case t.EraHint == EraLegacy:
		s.report.EraSource = "remembered from an earlier start; initialize"
	case s.report.Era == EraModern:
		s.report.EraSource = "server/discover answered"
	case outcome == discoverUnanswered:
		s.report.EraSource = fmt.Sprintf("server/discover unanswered within %s; initialize", o.DiscoverTimeout)
	case outcome == discoverError:
		s.report.EraSource = "server/discover refused; initialize"
	default:
		s.report.EraSource = "server/discover offered no modern version in common; initialize"
	}
	o.Logger.Debug("handshake done", "server", t.Server.Name, "era", s.report.Era, "version", s.report.ProtocolVersion, "how", s.report.EraSource)
	return s, nil
}

func stdioFailure(ctx context.Context, err error, w *stdioWire, latency time.Duration) error {
	st := w.stats()
	w.mu.Lock()
	died, ended, offered, answered := w.diedInDiscover, w.ended, w.offered, w.answered
	w.mu.Unlock()
	switch {
	case died:
		return exitedDuringHandshake(st, true)
	case ended:
		return exitedDuringHandshake(st, false)
	case timedOut(ctx):
		return handshakeTimeout(latency, st)
	case ctx.Err() != nil:
		return fmt.Errorf("connecting: %w", ctx.Err())
	}
	return handshakeError(err, offered, answered)
}

// handshakeError explains an error the server itself gave to the handshake.
func handshakeError(err error, offered, answered string) error {
	if got, ok := unsupportedVersion(err); ok {
		if answered == "" {
			answered = got
		}
		if offered == "" {
			offered = LatestLegacyVersion
		}
		return versionMismatch(offered, answered)
	}
	var werr *jsonrpc.Error
	if errors.As(err, &werr) {
		return handshakeRejected("the handshake", werr.Code, werr.Message)
	}
	return &Diagnosis{
		Code:     CodeHandshakeFailed,
		Message:  "The MCP handshake failed: " + firstLine(err.Error()),
		Evidence: []string{err.Error()},
		Fix:      "Read the server's stderr or logs for why it refused the session.",
		Err:      err,
	}
}

// unsupportedVersion recognises the SDK's refusal of a version it does not
// speak; its error type is unexported, so this reads its text.
func unsupportedVersion(err error) (string, bool) {
	const prefix = "unsupported protocol version: "
	msg := err.Error()
	i := strings.Index(msg, prefix)
	if i < 0 {
		return "", false
	}
	v := strings.Trim(msg[i+len(prefix):], `"`)
	return v, true
}

func connectRemote(ctx context.Context, t Target, o Options) (*Session, error) {
	srv := t.Server
	client, rec := newHTTPClient(o.HTTPClient, srv.Headers)
	var authz auth.OAuthHandler
	if o.Authorizer != nil {
		authz = o.Authorizer(srv.URL)
	}
	sseClient := client
	if authz != nil {
		// The SSE transport has no authorization hook: send the token.
		sseClient = &http.Client{Timeout: client.Timeout, Transport: &bearerTransport{base: client.Transport, auth: authz}}
	}
	s := &Session{opts: o, transport: srv.Transport(), httpClient: sseClient, url: srv.URL}
	start := o.Now()
	var err error
	if s.transport == registry.TransportSSE {
		err = s.connectSSE(ctx, sseClient)
	} else {
		tr := &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: client, DisableStandaloneSSE: true, OAuthHandler: authz}
		s.cs, err = newClient(o).Connect(ctx, tr, sessionOptions(t.EraHint))
		if err != nil {
			if d := signInDiagnosis(srv, err, authz != nil); d != nil {
				return nil, d
			}
			d := withSignInFix(remoteFailure(ctx, err, rec, srv.URL, o.Now().Sub(start)), srv, rec)
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
	latency := o.Now().Sub(start)
	if err != nil {
		if d := signInDiagnosis(srv, err, authz != nil); d != nil {
			return nil, d
		}
		return nil, withSignInFix(remoteFailure(ctx, err, rec, srv.URL, latency), srv, rec)
	}
	s.fillHandshake(s.cs.InitializeResult(), latency)
	switch {
	case s.transport == registry.TransportSSE:
		s.report.EraSource = "HTTP+SSE transport (legacy only); initialize"
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
	cs, err := newClient(s.opts).Connect(ctx, tr, sessionOptions(EraLegacy))
	if err != nil {
		if tr.stop != nil {
			tr.stop()
		}
		return err
	}
	s.cs, s.stopSSE = cs, tr.stop
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
		return fmt.Errorf("connecting: %w", ctx.Err())
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

// fillHandshake records what the handshake returned.
func (s *Session) fillHandshake(res *mcp.InitializeResult, latency time.Duration) {
	r := &s.report
	r.ConnectLatency = latency
	r.ProtocolVersion = res.ProtocolVersion
	r.Era = EraLegacy
	if res.ProtocolVersion >= ModernVersion {
		r.Era = EraModern
	}
	if res.ServerInfo != nil {
		r.ServerInfo = ServerInfo{Name: res.ServerInfo.Name, Version: res.ServerInfo.Version, Title: res.ServerInfo.Title}
	}
	r.Instructions = res.Instructions
	caps := res.Capabilities
	if caps == nil {
		caps = &mcp.ServerCapabilities{}
	}
	r.Capabilities, _ = json.Marshal(caps)
}

// maxPages stops a server that hands out cursors forever.
const maxPages = 1000

// discover lists what the server declared, every page. The lists go out
// at once (JSON-RPC allows requests in flight together), so discovery costs
// one round trip rather than four. A failing list is a list-failed diagnosis
// (the server is degraded), not an error.
func (s *Session) discover(ctx context.Context) error {
	caps := s.cs.InitializeResult().Capabilities
	if caps == nil {
		caps = &mcp.ServerCapabilities{}
	}
	r := &s.report
	r.Tools, r.Resources, r.ResourceTemplates, r.Prompts = []Tool{}, []Resource{}, []ResourceTemplate{}, []Prompt{}
	type list struct {
		what string
		page func(cursor string) (next string, err error)
	}
	var lists []list
	if caps.Tools != nil {
		lists = append(lists, list{"tools", func(cur string) (string, error) {
			res, err := s.cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cur})
			if err != nil {
				return "", err
			}
			for _, t := range res.Tools {
				schema, _ := json.Marshal(t.InputSchema)
				r.Tools = append(r.Tools, Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: schema})
			}
			return res.NextCursor, nil
		}})
	}
	if caps.Resources != nil {
		lists = append(lists, list{"resources", func(cur string) (string, error) {
			res, err := s.cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cur})
			if err != nil {
				return "", err
			}
			for _, x := range res.Resources {
				r.Resources = append(r.Resources, Resource{URI: x.URI, Name: x.Name, Title: x.Title, Description: x.Description, MIMEType: x.MIMEType})
			}
			return res.NextCursor, nil
		}}, list{"resource templates", func(cur string) (string, error) {
			res, err := s.cs.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cur})
			if err != nil {
				return "", err
			}
			for _, x := range res.ResourceTemplates {
				r.ResourceTemplates = append(r.ResourceTemplates, ResourceTemplate{URITemplate: x.URITemplate, Name: x.Name, Title: x.Title, Description: x.Description, MIMEType: x.MIMEType})
			}
			return res.NextCursor, nil
		}})
	}
	if caps.Prompts != nil {
		lists = append(lists, list{"prompts", func(cur string) (string, error) {
			res, err := s.cs.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cur})
			if err != nil {
				return "", err
			}
			for _, p := range res.Prompts {
				pr := Prompt{Name: p.Name, Title: p.Title, Description: p.Description}
				for _, a := range p.Arguments {
					pr.Arguments = append(pr.Arguments, PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
				}
				r.Prompts = append(r.Prompts, pr)
			}
			return res.NextCursor, nil
		}})
	}
	// Each list fills its own field of the report; errors keep list order.
	errs := make([]error, len(lists))
	var wg sync.WaitGroup
	for i, l := range lists {
		wg.Go(func() { errs[i] = paginate(ctx, l.page) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			r.Diagnoses = append(r.Diagnoses, listFailed(lists[i].what, err))
		}
	}
	if s.wire != nil {
		s.wire.mu.Lock()
		ended := s.wire.ended
		s.wire.mu.Unlock()
		if ended {
			return exitedDuringHandshake(s.wire.stats(), false)
		}
	}
	return nil
}

// paginate calls page with each cursor until the server gives none.
func paginate(ctx context.Context, page func(cursor string) (next string, err error)) error {
	seen := map[string]bool{}
	cursor := ""
	for range maxPages {
		next, err := page(cursor)
		if err != nil {
			return err
		}
		if next == "" {
			return nil
		}
		if seen[next] {
			return fmt.Errorf("the server returned cursor %q twice; its pagination loops", next)
		}
		seen[next] = true
		cursor = next
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return fmt.Errorf("more than %d pages; stopped", maxPages)
}

// Report returns what Connect found, plus the stdout noise seen so far.
// The caller owns the copy.
func (s *Session) Report() *Report {
	r := s.report
	r.Capabilities = slices.Clone(s.report.Capabilities)
	r.Tools = slices.Clone(s.report.Tools)
	r.Resources = slices.Clone(s.report.Resources)
	r.ResourceTemplates = slices.Clone(s.report.ResourceTemplates)
	r.Prompts = slices.Clone(s.report.Prompts)
	r.Diagnoses = slices.Clone(s.report.Diagnoses)
	if s.wire != nil {
		if st := s.wire.stats(); st.noiseTotal > 0 {
			r.Diagnoses = append([]Diagnosis{noiseDiagnosis(st.noise, st.noiseTotal)}, r.Diagnoses...)
		}
	}
	return &r
}

// Probe checks the server is alive and answering: ping for legacy servers,
// server/discover for modern ones (2026-07-28 removed ping). A failure is a
// *Diagnosis: probe-timeout when ctx's deadline passed, probe-failed
// otherwise.
func (s *Session) Probe(ctx context.Context) (time.Duration, error) {
	start := s.opts.Now()
	var err error
	switch {
	case s.report.Era == EraLegacy:
		err = s.cs.Ping(ctx, nil)
	case s.wire != nil:
		_, err = s.wire.call(ctx, "server/discover", s.discoverParams())
	default:
		id := fmt.Sprintf("%s%d", probeIDPrefix, s.probeSeq.Add(1))
		_, err = modernHTTPCall(ctx, s.httpClient, s.url, s.report.ProtocolVersion, "server/discover", id, s.discoverParams())
	}
	took := s.opts.Now().Sub(start)
	if err == nil {
		return took, nil
	}
	method := "server/discover"
	if s.report.Era == EraLegacy {
		method = "ping"
	}
	if timedOut(ctx) {
		return took, &Diagnosis{
			Code:     CodeProbeTimeout,
			Message:  fmt.Sprintf("The server did not answer %s within %s: it is alive but hung, or overloaded.", method, took.Round(time.Millisecond)),
			Evidence: []string{fmt.Sprintf("%s sent, no reply after %s", method, took.Round(time.Millisecond))},
			Fix:      "Restart the server; if it happens again, read its stderr for what it is stuck on, or raise probe_timeout.",
			Err:      err,
		}
	}
	msg := err.Error()
	if s.url != "" {
		msg = scrub(msg, s.url)
	}
	d := &Diagnosis{
		Code:     CodeProbeFailed,
		Message:  fmt.Sprintf("The liveness probe (%s) failed: %s", method, firstLine(msg)),
		Evidence: []string{msg},
		Fix:      "Restart the server; read its stderr or logs if it keeps failing.",
		Err:      err,
	}
	if errors.Is(err, errStdoutClosed) || errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) {
		d.Message = fmt.Sprintf("The liveness probe (%s) failed: the connection to the server is closed.", method)
	}
	return took, d
}

func (s *Session) discoverParams() map[string]any {
	return map[string]any{"_meta": map[string]any{
		mcp.MetaKeyProtocolVersion:    s.report.ProtocolVersion,
		mcp.MetaKeyClientCapabilities: map[string]any{},
		mcp.MetaKeyClientInfo:         map[string]any{"name": s.opts.ClientName, "version": s.opts.ClientVersion},
	}}
}

// Close ends the session. For stdio it closes the pipes (the server sees
// EOF on stdin); it never waits for the process, which the supervisor owns,
// and waits at most about a second for the SDK to wind down.
func (s *Session) Close() error {
	s.closeOnce.Do(func() {
		if s.wire != nil {
			// Pipes first, so nothing in flight can hold the SDK's Close.
			s.wire.Close()
		}
		done := make(chan error, 1)
		go func() { done <- s.cs.Close() }()
		select {
		case err := <-done:
			if s.wire == nil { // a closed pipe is the expected stdio outcome
				s.closeErr = err
			}
		case <-time.After(closeWait):
		}
		if s.stopSSE != nil {
			s.stopSSE()
		}
	})
	return s.closeErr
}

// timedOut reports whether ctx ended because its time ran out: a deadline,
// or a cancellation whose cause is one (the supervisor's timers run on an
// injectable clock and cancel with such a cause).
func timedOut(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), context.DeadlineExceeded)
}
