//go:build unix

package supervisor

import (
	"context"
	"errors"
	"testing"
	"time"

	"mcptray/healthcheck"
	"mcptray/registry"
)

// TestUse: Use waits for the handshake and hands out the live session;
// a server that cannot start fails with its diagnosis; an unknown name
// and an ended ctx are errors.
func TestUse(t *testing.T) {
	sess := &fakeSession{report: report(healthcheck.EraLegacy)}
	release := make(chan struct{})
	fc := &fakeChecker{connect: func(ctx context.Context, tg healthcheck.Target, n int) (Session, error) {
		if tg.Server.Name == "bad" { // its process exits first
			select {
			case <-tg.Exited:
				return nil, errors.New("the server process exited")
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		select {
		case <-release: // Use is already waiting
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return sess, nil
	}}
	o := healthOptions(t, fc)
	o.StartupTimeout = 20 * time.Second
	o.ProbeInterval = time.Hour
	s := New([]*registry.Server{childServer(t, "srv", "serve"), childServer(t, "bad", "crash")}, o)
	runSup(t, s)

	got := make(chan Session, 1)
	errc := make(chan error, 1)
	go func() {
		errc <- s.Use(context.Background(), "srv", func(ctx context.Context, se Session) error {
			got <- se
			return errors.New("from fn")
		})
	}()
	waitState(t, s, "srv", "starting", inState(StateStarting))
	close(release)
	if se := <-got; se != Session(sess) {
		t.Errorf("Use handed out %v, want the unit's session", se)
	}
	if err := <-errc; err == nil || err.Error() != "from fn" {
		t.Errorf("Use returned %v, want fn's error", err)
	}

	err := s.Use(context.Background(), "bad", func(context.Context, Session) error {
		t.Error("fn ran for a server that crashes")
		return nil
	})
	var nr *NotReadyError
	if !errors.As(err, &nr) || nr.Name != "bad" || nr.Diagnosis == nil || nr.LastExit == nil {
		t.Errorf("Use of a crashing server: %v (%+v)", err, nr)
	}

	if err := s.Use(context.Background(), "nope", nil); !errors.Is(err, ErrUnknownServer) {
		t.Errorf("Use of an unknown server: %v", err)
	}
	s.Stop("srv")
	waitState(t, s, "srv", "stopped", inState(StateStopped))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Use(ctx, "srv", nil); !errors.As(err, &nr) || nr.State != StateStopped {
		t.Errorf("Use of a stopped server: %v", err)
	}
}
