package healthcheck

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

	"mcptray/internal/clock"
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
	// Clock runs every timeout of the package and measures latencies
	// (nil: the real clock). The caller's context bounds the rest.
	Clock Clock
	// Authorizer returns the stored sign-in for a remote server's URL (see
	// [StoredAuth]), or nil when there is none. Nil means no sign-ins.
	Authorizer func(serverURL string) auth.OAuthHandler
	// Client, when set, makes a session for calling tools: it declares
	// what the handlers answer and passes notifications on to them. Nil
	// is a health check's session.
	Client *ClientHandlers
	// Trace, when set, receives every request, result and notification
	// the session exchanges with the server.
	Trace Tracer
	// Skip names the lists discovery does not read, of those the server
	// declares (zero: it reads them all). A call needs only the tools; a
	// read, none.
	Skip Lists
	// PreferLegacy speaks the initialize era (2025-11-25 and older) to a
	// server of no known era, without trying server/discover first; a
	// server that refuses initialize is then asked server/discover.
	// mcptray's sessions all do (the engine's, for the gateway and for
	// check alike, and call's): that is the era today's clients speak, and
	// a server that speaks both eras may offer its own requests (sampling,
	// elicitation) and session logging only in it.
	PreferLegacy bool
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
	if r.Clock == nil {
		r.Clock = clock.Real
	}
	return r
}

// Session is a live connection to one server: what it reported, and a way
// to probe it. Close it when done; it never waits on the server's process.
type Session struct {
	opts      Options
	transport registry.Transport // the transport actually used
	cs        *mcp.ClientSession
	client    *mcp.Client // cs's

	wire *stdioConn // stdio only

	tools      map[string]*mcp.Tool // as discovery listed them
	cancelSent chan struct{}        // a notifications/cancelled went out

	httpClient *http.Client           // remote only
	authz      auth.OAuthHandler      // remote only: the stored sign-in, if any
	savedErr   atomic.Pointer[string] // the token-save failure last logged
	url        string
	stopSSE    context.CancelFunc // sse only: ends the event stream
	probeSeq   atomic.Int64       // numbers the HTTP probes
	ended      *sessionEnd        // streamable HTTP only: the server ended the session

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
//
// When ctx ends the handshake, who ended it decides the answer. A deadline
// is a handshake-timeout, whatever the process does after mcptray closed
// its pipes. A cancel with a cause (context.WithCancelCause) returns an
// error wrapping that cause. A bare cancel after the process exited (the
// supervisor cancels so when it sees the exit) is the exit's diagnosis.
func Connect(ctx context.Context, t Target, opts *Options) (*Session, error) {
	prepare()
	o := opts.withDefaults()
	if t.Server == nil {
		return nil, &Diagnosis{Code: CodeInvalidConfig, Message: "No server given to connect to."}
	}
	var (
		s   *Session
		err error
	)
	// A remembered era is what the server answered last time; with none,
	// a preference for initialize tries it first, and server/discover
	// when the server refuses it (it speaks only 2026-07-28).
	legacyFirst := o.PreferLegacy && t.EraHint == ""
	switch t.Server.Transport() {
	case registry.TransportStdio:
		s, err = connectStdio(ctx, t, o, legacyFirst)
	case registry.TransportHTTP, registry.TransportSSE:
		s, err = connectRemote(ctx, t, o, legacyFirst)
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

// refusedInitialize reports whether a handshake that offered initialize
// failed because the server answered it with an error: a server of the
// stateless revision alone may, and then speaks server/discover.
func refusedInitialize(err error) (*jsonrpc.Error, bool) {
	var werr *jsonrpc.Error
	if errors.As(err, &werr) {
		return werr, true
	}
	return nil, false
}

// initializeRefusedSource is the era source of a session made with
// server/discover after initialize was refused with why.
func initializeRefusedSource(why string) string {
	return "initialize refused (" + why + "); server/discover answered"
}

// refusal says how the server refused initialize.
func refusal(werr *jsonrpc.Error) string {
	return fmt.Sprintf("%d %s", werr.Code, firstLine(werr.Message))
}

// legacyFirstSource is the era source of a session whose initialize,
// tried first by preference, was accepted.
const legacyFirstSource = "initialize: tried first, the era in which a server can ask its client (sampling, elicitation) and send logs"

// sessionOptions picks the version offered: a remembered legacy era goes
// straight to initialize; otherwise the SDK tries server/discover first.
func sessionOptions(hint Era) *mcp.ClientSessionOptions {
	if hint == EraLegacy {
		return &mcp.ClientSessionOptions{ProtocolVersion: LatestLegacyVersion}
	}
	return &mcp.ClientSessionOptions{ProtocolVersion: ModernVersion}
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
	if d := s.tokenNotSaved(); d != nil {
		r.Diagnoses = append(r.Diagnoses, *d)
	}
	return &r
}

// tokenNotSaved explains a refreshed token that the secret store refused,
// logged once per distinct failure; nil when there is none.
func (s *Session) tokenNotSaved() *Diagnosis {
	sa, ok := s.authz.(interface{ SaveError() error })
	if !ok {
		return nil
	}
	err := sa.SaveError()
	if err == nil {
		return nil
	}
	msg := err.Error()
	if last := s.savedErr.Swap(&msg); last == nil || *last != msg {
		s.opts.Logger.Warn("a refreshed sign-in token could not be saved", "server", safeURL(s.url), "err", msg)
	}
	return &Diagnosis{
		Code:     CodeTokenNotSaved,
		Message:  fmt.Sprintf("The sign-in's refreshed token for %s could not be saved; it serves this run only, and the next start may need a new sign-in.", safeURL(s.url)),
		Evidence: []string{msg},
		Fix:      "Check the secret store (`mcptray secret list`); then sign in again with `mcptray auth login` if the server asks.",
	}
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

// Close ends the session. For stdio it closes the pipes (the server sees
// EOF on stdin); it never waits for the process, which the supervisor owns,
// and waits at most about a second for the SDK to wind down.
func (s *Session) Close() error {
	s.closeOnce.Do(func() {
		if s.wire != nil {
			// Pipes first, so nothing in flight can hold the SDK's Close.
			s.wire.shutdown()
		}
		var err error
		done := make(chan struct{})
		go func() {
			err = s.cs.Close()
			close(done)
		}()
		if !clock.Sleep(s.opts.Clock, closeWait, done) && s.wire == nil {
			s.closeErr = err // a closed pipe is the expected stdio outcome
		}
		if s.stopSSE != nil {
			s.stopSSE()
		}
	})
	return s.closeErr
}

// endedByCaller reports whether ctx ended for a reason the caller gave: a
// deadline, or a cancel with a cause. A bare cancel says nothing about
// why (the supervisor cancels so when it has seen the process exit).
func endedByCaller(ctx context.Context) bool {
	return ctx.Err() != nil && (timedOut(ctx) || context.Cause(ctx) != ctx.Err())
}

// timedOut reports whether ctx ended because its time ran out: a deadline,
// or a cancellation whose cause is one (the supervisor's timers run on an
// injectable clock and cancel with such a cause).
func timedOut(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), context.DeadlineExceeded)
}
