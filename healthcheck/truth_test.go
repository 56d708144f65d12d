package healthcheck

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"mcptray/internal/clock/fakeclock"
	"mcptray/internal/wine"
)

// TestDeadlineThenExitOnEOF: the caller's deadline ends a handshake the
// server never answered; closing the pipes makes the server exit (code 0,
// on EOF). The cause is the deadline, not the exit.
func TestDeadlineThenExitOnEOF(t *testing.T) {
	for _, tt := range []struct{ mode, message string }{
		{"silent", "The server wrote nothing on stdout within 4.5s"},
		{"banner,silent", "The server wrote only lines that are not MCP messages on stdout (1 line(s)) within 4.5s"},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			p := startHelper(t, tt.mode)
			clock := fakeclock.New()
			ctx, deadline := deadlineCtx(t)
			tg := p.target("x", "")
			writes := watchWrites(&tg)
			reads := watchReads(&tg)
			res := connectAsync(ctx, tg, &Options{Clock: clock})
			waitWrite(t, writes, "server/discover")
			if tt.mode != "silent" {
				waitTaken(t, reads, int64(len("fake server 0.1 listening on stdio\n")))
			}
			clock.Advance(4500 * time.Millisecond)
			deadline()
			r := <-res
			d := asDiagnosis(t, r.err)
			if d.Code != CodeHandshakeTimeout || errors.Is(r.err, ErrDiedDuringDiscover) || !strings.Contains(d.Message, tt.message) {
				t.Fatalf("got %+v", d)
			}
			// The server did exit on the EOF mcptray caused: that is what
			// must not be blamed.
			<-p.exited
		})
	}
}

// TestDiedOnDiscoverWhenCallerCancels plays the supervisor, which cancels
// the handshake as soon as it sees the process exit. The answer must still
// be "died on server/discover", however the two race.
func TestDiedOnDiscoverWhenCallerCancels(t *testing.T) {
	for i := range 20 {
		p := startHelper(t, "exit-on-discover")
		ctx, cancel := context.WithCancel(ctxTimeout(t, 20*time.Second))
		go func() {
			<-p.exited
			cancel()
		}()
		_, err := Connect(ctx, p.target("x", ""), nil)
		cancel()
		if !errors.Is(err, ErrDiedDuringDiscover) {
			t.Fatalf("run %d: err = %v, want ErrDiedDuringDiscover", i, err)
		}
	}
}

// TestDiedOnDiscoverSlowReader: the server reads server/discover only after
// mcptray gave up on it and sent initialize, then exits. It died on
// server/discover all the same (it never answered anything).
func TestDiedOnDiscoverSlowReader(t *testing.T) {
	if r := connectPastDiscoverTimeout(t, "exit-on-discover-late"); !errors.Is(r.err, ErrDiedDuringDiscover) {
		t.Fatalf("err = %v, want ErrDiedDuringDiscover", r.err)
	}
	p := startHelper(t, "exit-on-discover-late")
	s, err := Connect(ctxTimeout(t, 30*time.Second), p.target("x", EraLegacy), nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}

// connectLegacyDier connects to a server that exits on server/discover the
// way the supervisor does: detect (cancelling as soon as the process is
// seen to exit), and on ErrDiedDuringDiscover start it again with the
// legacy hint.
func connectLegacyDier(t *testing.T, mode string) error {
	p := startHelper(t, mode)
	ctx, cancel := context.WithCancel(ctxTimeout(t, 30*time.Second))
	defer cancel()
	go func() {
		select {
		case <-p.exited:
			cancel()
		case <-ctx.Done():
		}
	}()
	_, err := Connect(ctx, p.target("x", ""), nil)
	if !errors.Is(err, ErrDiedDuringDiscover) {
		return fmt.Errorf("first start: %w", err)
	}
	again := startHelper(t, mode)
	tg := again.target("x", EraLegacy)
	writes := watchWrites(&tg)
	s, err := Connect(ctxTimeout(t, 30*time.Second), tg, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	for len(writes) > 0 {
		if l := <-writes; strings.Contains(l, "server/discover") {
			return fmt.Errorf("server/discover sent despite the legacy hint: %s", l)
		}
	}
	if r := s.Report(); r.Era != EraLegacy || r.ProtocolVersion != "2025-06-18" {
		return errors.New("era " + string(r.Era) + " version " + r.ProtocolVersion)
	}
	return nil
}

func TestDiedOnDiscoverEveryTime(t *testing.T) {
	if testing.Short() {
		wine.Skip(t, "takes seconds to start a process: the 240 starts here take over 5 minutes (run without -short)")
	}
	t.Run("100 in a row", func(t *testing.T) {
		for i := range 100 {
			if err := connectLegacyDier(t, "exit-on-discover"); err != nil {
				t.Fatalf("run %d: %v", i, err)
			}
		}
	})
	t.Run("20 at once", func(t *testing.T) {
		var wg sync.WaitGroup
		errs := make(chan error, 20)
		for range 20 {
			wg.Go(func() { errs <- connectLegacyDier(t, "exit-on-discover") })
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Error(err)
			}
		}
	})
}

// TestServerFramesThatAreNotReplies: frames that are JSON but no reply to
// anything mcptray sent are noise, quoted, and the session carries on.
func TestServerFramesThatAreNotReplies(t *testing.T) {
	tests := []struct {
		mode     string
		evidence string // in the stdout-noise evidence
	}{
		{"invalid-frame", `{\"jsonrpc\":\"2.0\"}`},
		{"stray-reply", `a reply to id 1 that cannot be the result of`},
		{"unmatched-reply", `id 999`},
		{"huge-line", "17.0 MiB"},
	}
	for _, tt := range tests {
		for _, hint := range []Era{"", EraLegacy} {
			t.Run(tt.mode+"/hint="+string(hint), func(t *testing.T) {
				p := startHelper(t, tt.mode)
				s, err := Connect(ctxTimeout(t, 30*time.Second), p.target("x", hint), nil)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				r := s.Report()
				if r.Era != EraLegacy || r.ProtocolVersion != "2025-06-18" || len(r.Tools) != 1 {
					t.Errorf("era %s version %q tools %d", r.Era, r.ProtocolVersion, len(r.Tools))
				}
				d := findDiagnosis(r, CodeStdoutNoise)
				if d == nil {
					t.Fatalf("no stdout-noise diagnosis in %+v", r.Diagnoses)
				}
				if ev := strings.Join(d.Evidence, "\n"); !strings.Contains(ev, tt.evidence) {
					t.Errorf("evidence %s lacks %s", ev, tt.evidence)
				}
				if _, err := s.Probe(ctxTimeout(t, 10*time.Second)); err != nil {
					t.Errorf("probe: %v", err)
				}
			})
		}
	}
}

// TestCannedReplyAfterDiscoverGaveUp: mcptray answered an ignored
// server/discover itself; a canned reply to its id that comes later is
// noise with evidence, not silently taken for the late answer.
func TestCannedReplyAfterDiscoverGaveUp(t *testing.T) {
	r := connectPastDiscoverTimeout(t, "ignore-discover,stray-on-init")
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer r.s.Close()
	rep := r.s.Report()
	d := findDiagnosis(rep, CodeStdoutNoise)
	if rep.Era != EraLegacy || d == nil || !strings.Contains(strings.Join(d.Evidence, " "), "a reply to id 1 that cannot be the result of server/discover") {
		t.Fatalf("era %s, noise %+v", rep.Era, d)
	}
}

// TestReplyOverLimit: a reply over 16 MiB fails its request (the list is
// reported failed, with the size) and the session carries on.
func TestReplyOverLimit(t *testing.T) {
	p := startHelper(t, "huge-reply")
	s, err := Connect(ctxTimeout(t, 30*time.Second), p.target("x", ""), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := s.Report()
	d := findDiagnosis(r, CodeListFailed)
	if d == nil || !strings.Contains(d.Message, "tools") || !strings.Contains(d.Message, "17.0 MiB, over mcptray's 16 MiB limit") {
		t.Fatalf("list-failed diagnosis %+v", d)
	}
	if n := findDiagnosis(r, CodeStdoutNoise); n == nil || !strings.Contains(strings.Join(n.Evidence, " "), `{\"jsonrpc\":\"2.0\",\"id\":`) {
		t.Errorf("noise diagnosis %+v", n)
	}
	if _, err := s.Probe(ctxTimeout(t, 10*time.Second)); err != nil {
		t.Errorf("probe: %v", err)
	}
}

// TestProbeWithinCallersTime: a probe that is never answered fails as
// probe-timeout when the caller's time runs out, saying how long it waited.
func TestProbeWithinCallersTime(t *testing.T) {
	for _, tt := range []struct{ mode, method string }{{"hang-probes", "ping"}, {"hang-probes,modern", "server/discover"}} {
		t.Run(tt.mode, func(t *testing.T) {
			p := startHelper(t, tt.mode)
			clock := fakeclock.New()
			tg := p.target("x", "")
			writes := watchWrites(&tg)
			s, err := Connect(ctxTimeout(t, 30*time.Second), tg, &Options{Clock: clock})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ctx, deadline := deadlineCtx(t)
			errc := make(chan error, 1)
			go func() {
				_, err := s.Probe(ctx)
				errc <- err
			}()
			if tt.method == "ping" {
				waitWrite(t, writes, `"method":"ping"`)
			} else {
				waitWrite(t, writes, probeIDPrefix+"1")
			}
			clock.Advance(2 * time.Second)
			deadline()
			d := asDiagnosis(t, <-errc)
			if d.Code != CodeProbeTimeout || !strings.Contains(d.Message, "did not answer "+tt.method+" within 2s") {
				t.Fatalf("got %+v", d)
			}
			// The session survives a timed-out probe: the SDK still works.
			if _, err := s.cs.ListTools(ctxTimeout(t, 10*time.Second), nil); err != nil {
				t.Errorf("after a probe timeout: %v", err)
			}
		})
	}
}

// TestCallerCauseWins: a caller that ends the handshake for a reason of its
// own (a deadline, a stop) and at once kills the process (as the supervisor
// does at startup_timeout or on stop) gets its cause back, not the exit it
// caused, however the exit races the handshake's end.
func TestCallerCauseWins(t *testing.T) {
	errStop := errors.New("stopped by the user")
	for _, cause := range []error{context.DeadlineExceeded, errStop} {
		t.Run(cause.Error(), func(t *testing.T) {
			for range 10 {
				p := startHelper(t, "silent")
				ctx, cancel := context.WithCancelCause(context.Background())
				tg := p.target("x", "")
				writes := watchWrites(&tg)
				res := connectAsync(ctx, tg, nil)
				waitWrite(t, writes, "server/discover")
				cancel(cause)
				_ = p.cmd.Process.Kill()
				<-p.exited
				r := <-res
				want := errors.Is(r.err, errStop)
				if cause != errStop {
					d, ok := r.err.(*Diagnosis)
					want = ok && d.Code == CodeHandshakeTimeout
				}
				if !want || errors.Is(r.err, ErrDiedDuringDiscover) {
					t.Fatalf("err = %v, want the caller's cause", r.err)
				}
			}
		})
	}
}
