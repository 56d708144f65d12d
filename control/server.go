// Package control holds mcptray's one engine contract and what speaks it.
// [Engine] is what the desktop app and the command line drive; [Local] is
// the engine in this process (a supervisor following one config file); the
// daemon serves its engine as versioned JSON over HTTP on a Unix socket
// private to its user ([Server]), and [Client] is that engine on the other
// side of the socket, so the front ends drive a daemon without knowing it.
// No TCP listener exists.
//
// API v1 (every path starts with /v1):
//
//	GET  /v1/info                          the daemon: pid, version, socket, config
//	GET  /v1/snapshot                      every server's state, and the engine's status
//	GET  /v1/changes?since=N               NDJSON: a snapshot now, then one per change (coalesced); each
//	                                       carries the transitions since the previous one (from N when given)
//	GET  /v1/transitions?since=N           state transitions from N: {"transitions":[…],"next":N}
//	POST /v1/servers/NAME/start|stop|restart|check
//	POST /v1/check                         probe every server now
//	POST /v1/reload                        re-read the daemon's servers.toml and apply it
//	GET  /v1/servers/NAME/log?since=N      stderr lines after N: {"lines":[…],"next":N}
//	GET  /v1/servers/NAME/log?since=N&follow=1   NDJSON, one line object per line, until closed
//	POST /v1/shutdown                      stop every server and exit (the daemon answers first)
//
// A snapshot carries the engine's [Status] beside the servers: the config
// file and, when it does not load, where and why. Errors are {"error": "…",
// "code": "…"} with a 4xx or 5xx status; a config that does not load adds
// "problem", the diagnostic.
package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"mcptray/gateway"
	"mcptray/supervisor"
)

// ServerOptions tunes a [Server]. Zero fields mean defaults.
type ServerOptions struct {
	// Version and Socket are reported by /v1/info.
	Version string
	Socket  string
	// OnChange is called with each new snapshot, from one goroutine, after
	// the engine signals a change (for the daemon's own log).
	OnChange func(supervisor.Snapshot)
	// StreamInterval is the least time between two snapshots on one change
	// stream, so that a burst of changes costs one message (default 50 ms).
	StreamInterval time.Duration
	// LogPoll is how often a followed log looks for new lines (default 200 ms).
	LogPoll time.Duration
	// ShutdownGrace is how long Serve waits for requests in flight once ctx
	// ends (default 2 s).
	ShutdownGrace time.Duration
	// Logf reports failures the client cannot see; nil: silent.
	Logf func(format string, args ...any)
	// Gateway, when set, serves client sessions (connect) and traces.
	Gateway *gateway.Gateway
	// GatewayInfo answers /v1/gateway.
	GatewayInfo func() GatewayInfo
	// OnShutdown is called once /v1/shutdown has been answered: the daemon
	// stops every server and exits. Nil: the endpoint refuses.
	OnShutdown func()
}

// Server serves an engine on the control API. Create it with [NewServer] and
// run it with [Server.Serve].
type Server struct {
	eng     Engine
	opts    ServerOptions
	started time.Time
}

// NewServer serves eng. opts may be nil.
func NewServer(eng Engine, opts *ServerOptions) *Server {
	s := &Server{eng: eng, started: time.Now()}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.StreamInterval <= 0 {
		s.opts.StreamInterval = 50 * time.Millisecond
	}
	if s.opts.LogPoll <= 0 {
		s.opts.LogPoll = 200 * time.Millisecond
	}
	if s.opts.ShutdownGrace <= 0 {
		s.opts.ShutdownGrace = 2 * time.Second
	}
	return s
}

// Serve answers requests on ln until ctx ends, then closes ln, ends the
// streams and waits (a short grace) for the requests in flight. Streams
// watch the engine's broadcast ([Engine.Watch]); its Changes channel is
// left to others.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	if s.opts.OnChange != nil {
		wg.Go(func() { s.reportChanges(hctx) })
	}
	hs := &http.Server{
		Handler:           s.Handler(),
		BaseContext:       func(net.Listener) context.Context { return hctx },
		ReadHeaderTimeout: 10 * time.Second,
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	// Streams end with hctx; then Shutdown waits for the short requests.
	cancel()
	sctx, scancel := context.WithTimeout(context.Background(), s.opts.ShutdownGrace)
	defer scancel()
	if serr := hs.Shutdown(sctx); serr != nil {
		hs.Close()
	}
	wg.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// reportChanges calls OnChange after each change of the engine.
func (s *Server) reportChanges(ctx context.Context) {
	ch := s.eng.Watch()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ch:
		}
		// The next channel before the snapshot: a change in between is
		// then not missed.
		ch = s.eng.Watch()
		s.opts.OnChange(s.eng.Snapshot())
	}
}

// Handler is the API's HTTP handler (for tests and other listeners).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/info", s.info)
	mux.HandleFunc("GET /v1/snapshot", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, toWire(s.eng.Snapshot(), s.eng.Status()))
	})
	mux.HandleFunc("GET /v1/changes", s.changes)
	mux.HandleFunc("GET /v1/transitions", func(w http.ResponseWriter, r *http.Request) {
		since, ok := sinceParam(w, r)
		if !ok {
			return
		}
		trs, next := s.eng.Transitions(since)
		writeJSON(w, http.StatusOK, TransitionPage{Transitions: orEmpty(trs), Next: next})
	})
	mux.HandleFunc("POST /v1/servers/{name}/{action}", s.command)
	mux.HandleFunc("POST /v1/check", func(w http.ResponseWriter, r *http.Request) {
		s.reply(w, s.eng.CheckNow(r.Context(), ""))
	})
	mux.HandleFunc("POST /v1/reload", s.reload)
	mux.HandleFunc("POST /v1/shutdown", s.shutdown)
	mux.HandleFunc("GET /v1/servers/{name}/log", s.log)
	s.gatewayRoutes(mux)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, codeBadRequest, fmt.Sprintf("no such API endpoint: %s %s (this daemon speaks v1)", r.Method, r.URL.Path))
	})
	return mux
}

func (s *Server) info(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, Info{
		PID: os.Getpid(), Version: s.opts.Version, Socket: s.opts.Socket,
		ConfigPath: s.eng.Status().ConfigPath, Started: s.started, API: "v1",
	})
}

// changes streams a snapshot at once and then one after each change, at
// most one per StreamInterval, until the client goes or the daemon stops.
// Each message carries the transitions since the one before (the first,
// those from ?since=N; none without it).
func (s *Server) changes(w http.ResponseWriter, r *http.Request) {
	var tnext uint64
	if r.URL.Query().Has("since") {
		n, ok := sinceParam(w, r)
		if !ok {
			return
		}
		tnext = n
	} else {
		_, tnext = s.eng.Transitions(^uint64(0))
	}
	fl, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	for {
		// Take the channel before the snapshot: a change in between is
		// then not missed.
		ch := s.eng.Watch()
		msg := streamMessage{wireSnapshot: toWire(s.eng.Snapshot(), s.eng.Status())}
		msg.Transitions, tnext = s.eng.Transitions(tnext)
		msg.NextTransition = tnext
		if err := enc.Encode(msg); err != nil {
			return
		}
		if fl != nil {
			fl.Flush()
		}
		select {
		case <-r.Context().Done():
			return
		case <-ch:
		}
		select {
		case <-r.Context().Done():
			return
		case <-time.After(s.opts.StreamInterval):
		}
	}
}

// sinceParam reads ?since=N; a bad value is answered with 400.
func sinceParam(w http.ResponseWriter, r *http.Request) (uint64, bool) {
	v := r.URL.Query().Get("since")
	if v == "" {
		return 0, true
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		writeError(w, http.StatusBadRequest, codeBadRequest, fmt.Sprintf("since=%q: want a sequence number", v))
		return 0, false
	}
	return n, true
}

func (s *Server) command(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	var err error
	switch action := r.PathValue("action"); action {
	case "start":
		err = s.eng.Start(r.Context(), name)
	case "stop":
		err = s.eng.Stop(r.Context(), name)
	case "restart":
		err = s.eng.Restart(r.Context(), name)
	case "check":
		err = s.eng.CheckNow(r.Context(), name)
	default:
		writeError(w, http.StatusNotFound, codeBadRequest, fmt.Sprintf("unknown action %q (start, stop, restart or check)", action))
		return
	}
	s.reply(w, err)
}

func (s *Server) reply(w http.ResponseWriter, err error) {
	if err == nil {
		writeJSON(w, http.StatusOK, struct{}{})
		return
	}
	code := errorCode(err)
	status := http.StatusConflict
	switch code {
	case codeUnknownServer:
		status = http.StatusNotFound
	case codeInternal:
		status = http.StatusInternalServerError
	}
	writeError(w, status, code, err.Error())
}

func (s *Server) reload(w http.ResponseWriter, r *http.Request) {
	res, err := s.eng.Reload(r.Context())
	var ce *ConfigError
	switch {
	case errors.Is(err, ErrNoConfig):
		writeError(w, http.StatusConflict, codeNoConfig, err.Error())
	case errors.As(err, &ce):
		// Keep running what runs; the file is what needs fixing.
		writeJSON(w, http.StatusUnprocessableEntity, errorBody{Error: err.Error(), Code: codeConfig, Problem: &ce.Diagnostic})
	case err != nil:
		s.reply(w, err)
	default:
		writeJSON(w, http.StatusOK, res)
	}
}

// shutdown answers, then has the daemon stop: the answer must reach the
// client before Serve's shutdown closes its connection.
func (s *Server) shutdown(w http.ResponseWriter, r *http.Request) {
	if s.opts.OnShutdown == nil {
		writeError(w, http.StatusNotFound, codeBadRequest, "this engine cannot be stopped over the API")
		return
	}
	s.logf("asked over the control API to stop every server and exit")
	writeJSON(w, http.StatusOK, struct{}{})
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
	s.opts.OnShutdown()
}

func (s *Server) log(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	var since uint64
	if v := r.URL.Query().Get("since"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			writeError(w, http.StatusBadRequest, codeBadRequest, fmt.Sprintf("since=%q: want a line number", v))
			return
		}
		since = n
	}
	lines, next, err := s.eng.Log(r.Context(), name, since)
	if err != nil {
		s.reply(w, err)
		return
	}
	if r.URL.Query().Get("follow") == "" {
		writeJSON(w, http.StatusOK, LogPage{Lines: orEmpty(lines), Next: next})
		return
	}
	fl, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	if fl != nil {
		fl.Flush()
	}
	enc := json.NewEncoder(w)
	tick := time.NewTicker(s.opts.LogPoll)
	defer tick.Stop()
	for {
		since = next
		for _, l := range lines {
			if err := enc.Encode(l); err != nil {
				return
			}
		}
		if len(lines) > 0 && fl != nil {
			fl.Flush()
		}
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
		if lines, next, err = s.eng.Log(r.Context(), name, since); err != nil {
			return // the server was removed
		}
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, errorBody{Error: msg, Code: code})
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
