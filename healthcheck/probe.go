package healthcheck

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Probe checks the server is alive and answering: ping for legacy servers,
// server/discover for modern ones (2026-07-28 removed ping). A failure is a
// *Diagnosis: probe-timeout when ctx's deadline passed, probe-failed
// otherwise.
func (s *Session) Probe(ctx context.Context) (time.Duration, error) {
	start := s.opts.Clock.Now()
	var err error
	switch {
	case s.report.Era == EraLegacy:
		err = s.cs.Ping(ctx, nil)
	case s.wire != nil:
		_, err = s.wire.call(ctx, "server/discover", s.discoverParams())
	default:
		id := probeID(s.probeSeq.Add(1))
		_, err = modernHTTPCall(ctx, s.httpClient, s.url, s.report.ProtocolVersion, "server/discover", id, s.discoverParams())
	}
	took := s.opts.Clock.Now().Sub(start)
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
