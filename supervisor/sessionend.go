package supervisor

import (
	"strings"

	"mcptray/healthcheck"
)

// endedSession is a session the server can end (a remote Streamable HTTP
// one): Ended is closed when the server answered that the session is gone.
type endedSession interface {
	Ended() <-chan struct{}
	EndedDiagnosis() *healthcheck.Diagnosis
}

// sessionEnded ends the attempt at the first answer that the server ended
// the session: every later request on it would fail, so the unit is not
// ready a moment longer, and a new session is opened now (no backoff when
// the session had served for StableRun), rather than after
// failure_threshold probes.
func (a *attempt) sessionEnded() ending {
	d := a.sess.(endedSession).EndedDiagnosis()
	if d == nil {
		d = &healthcheck.Diagnosis{Code: healthcheck.CodeSessionEnded, Message: "the server ended the session"}
	}
	a.u.set(StateUnhealthy, strings.TrimSuffix(d.Message, ".")+"; reconnecting", d, nil)
	return ending{by: endSessionEnded, diag: d}
}
