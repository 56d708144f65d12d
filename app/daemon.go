package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"mcptray/control"
	"mcptray/gateway"
	"mcptray/registry"
	"mcptray/supervisor"
)

// DialOrStartDaemon returns this user's daemon on socket sock, starting
// one (detached: it outlives the caller; cfgFlag is its --config) when
// none answers, and waiting up to wait for it.
func DialOrStartDaemon(ctx context.Context, sock, cfgFlag string, wait time.Duration) (*control.Client, error) {
	c, err := dialSocket(ctx, sock)
	if err == nil || !errors.Is(err, control.ErrNoDaemon) {
		return c, err
	}
	child, err := startDaemon(sock, cfgFlag)
	switch {
	case errors.Is(err, control.ErrAlreadyRunning):
		// Another process's daemon came up meanwhile: wait for it as for
		// one of ours.
		child = nil
	case err != nil:
		// Another process's daemon may have come up meanwhile.
		if c, derr := dialSocket(ctx, sock); derr == nil {
			return c, nil
		}
		return nil, fmt.Errorf("no daemon runs, and starting one failed: %w", err)
	}
	deadline := time.Now().Add(wait)
	for {
		c, err := dialSocket(ctx, sock)
		if err == nil || !errors.Is(err, control.ErrNoDaemon) {
			return c, err
		}
		if child == nil {
			if _, ok := control.RunningDaemon(sock); !ok {
				return nil, fmt.Errorf("the daemon another process started exited before it answered (its log: %s)", filepath.Join(filepath.Dir(sock), DaemonLogName))
			}
		} else if exited, why := child.exited(); exited {
			// Another process's daemon may have won the socket.
			if c, err := dialSocket(ctx, sock); err == nil {
				return c, nil
			}
			return nil, fmt.Errorf("the daemon it started exited: %s", why)
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the daemon it started did not answer within %s (its log: %s)", wait, filepath.Join(filepath.Dir(sock), DaemonLogName))
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func dialSocket(ctx context.Context, sock string) (*control.Client, error) {
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return control.Dial(dctx, &control.ClientOptions{Socket: sock})
}

// startedDaemon is a daemon process this process started.
type startedDaemon struct {
	log  string
	done chan struct{}
	err  error
}

func (d *startedDaemon) exited() (bool, string) {
	select {
	case <-d.done:
		tail := lastLines(d.log, 3)
		if tail == "" && d.err != nil {
			tail = d.err.Error()
		}
		return true, tail
	default:
		return false, ""
	}
}

// startDaemon starts `mcptray daemon` detached from this process's tree
// ([LaunchDaemon]), output appended to the log beside the socket.
func startDaemon(sock, cfgFlag string) (*startedDaemon, error) {
	exe, err := HeadlessBinary()
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(sock)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	args := []string{}
	if cfgFlag != "" {
		// The daemon runs in the home folder: a relative path would move.
		if abs, err := filepath.Abs(cfgFlag); err == nil {
			cfgFlag = abs
		}
		args = append(args, "--config", cfgFlag)
	}
	d, err := startDetachedDaemon(exe, args, filepath.Join(dir, DaemonLogName))
	if err != nil {
		// `daemon --detach` refuses when another process's daemon holds
		// the lock (it may not answer yet): that one is the daemon.
		if pid, ok := control.RunningDaemon(sock); ok {
			return nil, &control.AlreadyRunningError{Socket: sock, PID: pid}
		}
	}
	return d, err
}

func lastLines(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}

// DialDaemon connects to this user's daemon, or says how to start one.
func DialDaemon(ctx context.Context) (*control.Client, error) {
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return control.Dial(dctx, nil)
}

// PrepareDaemon loads the config and takes the control socket (so that a
// second daemon fails here, before any server starts); run then runs the
// engine and serves the API until ctx ends. onChange is told every
// snapshot of the engine, the first one before the API answers.
func PrepareDaemon(env *Env, cfgFlag string, onChange func(supervisor.Snapshot)) (run func(context.Context) error, err error) {
	cfg, err := LoadConfig(env, cfgFlag, false)
	if err != nil {
		return nil, err
	}
	sock, err := control.DefaultSocket()
	if err != nil {
		return nil, err
	}
	logf := func(format string, args ...any) { fmt.Fprintf(env.Stderr, "mcptray daemon: "+format+"\n", args...) }
	ln, err := control.Listen(sock, &control.ListenOptions{Logf: logf})
	if err != nil {
		return nil, err
	}
	control.ClearStopped(sock)
	rotateDaemonLog(filepath.Dir(sock))
	var gwMu sync.Mutex
	var dg *daemonGateway
	opts := NewEngineOptions(cfg, EngineSetup{Gateway: func() *gateway.Gateway {
		gwMu.Lock()
		defer gwMu.Unlock()
		if dg == nil {
			return nil
		}
		return dg.gw
	}})
	opts.Logger = WarningLogger(env.Stderr, "mcptray daemon: ")
	trust := openTrust(cfg, logf)
	eng := control.NewLocal(cfg, &control.LocalOptions{Supervisor: opts, Logf: logf, Trust: trust,
		OnSettings: func(was, now registry.Settings) []string {
			gwMu.Lock()
			g := dg
			gwMu.Unlock()
			if g == nil {
				return nil
			}
			return g.settingsChanged(&registry.Config{Path: cfg.Path, Settings: now}, was, now)
		}})
	g, err := startGateway(cfg, eng, trust, logf)
	if err != nil {
		ln.Close()
		return nil, err
	}
	gwMu.Lock()
	dg = g
	gwMu.Unlock()
	// POST /v1/shutdown ("Stop all servers and quit" in the tray) ends the
	// run as SIGTERM does.
	shutdown := make(chan struct{})
	srv := control.NewServer(eng, &control.ServerOptions{
		OnShutdown: sync.OnceFunc(func() {
			// Before any session drops: the bridges must not start another.
			if err := control.MarkStopped(sock); err != nil {
				logf("cannot mark the stop for the bridges: %v", err)
			}
			close(shutdown)
		}),
		Version:     Version,
		Socket:      sock,
		OnChange:    onChange,
		Logf:        logf,
		Gateway:     g.gw,
		GatewayInfo: func() control.GatewayInfo { return g.info(eng) },
	})
	return func(ctx context.Context) error {
		defer ln.Close()
		stopSig, stopWatching := watchStopSignal()
		defer stopWatching()
		logf("%s, pid %d, %d servers from %s, listening on %s", Version, os.Getpid(), len(cfg.Servers), cfg.Path, sock)
		if port := g.listening(); port != 0 {
			logf("clients reach the servers at http://127.0.0.1:%d/mcp/NAME/KEY (`mcptray gateway` prints each URL) and through `mcptray connect NAME`", port)
		}
		onChange(eng.Snapshot())

		runCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		var wg sync.WaitGroup
		wg.Go(func() {
			select {
			case <-shutdown:
				cancel()
			case <-runCtx.Done():
			}
		})
		var serveErr error
		wg.Go(func() {
			serveErr = srv.Serve(runCtx, ln)
			cancel() // a dead API means a daemon nobody can reach: stop it all
		})
		// The engine applies edits made to servers.toml as they are saved.
		wg.Go(func() { eng.Run(runCtx) })
		wg.Go(func() { g.run(runCtx) })
		wg.Wait()
		select {
		case <-shutdown:
			logf("stopped as asked over the control API; every server it started is stopped")
			return nil
		default:
		}
		if serveErr != nil && ctx.Err() == nil {
			logf("stopping: the control API failed: %v", serveErr)
			return fmt.Errorf("control API: %w", serveErr)
		}
		logf("stopped by %s; every server it started is stopped", stopSig.reason())
		return nil
	}, nil
}

// DaemonStopWords is what the daemon of pid, whose socket is sock, said
// in its log as it stopped ("stopped by signal SIGTERM (…)"), "" when it
// said nothing (killed with SIGKILL, or it crashed). The log is
// shared by the daemons that followed each other; a daemon's lines run
// from its start line, which names its pid, to the next start line.
func DaemonStopWords(sock string, pid int) string {
	dir := filepath.Dir(sock)
	start := fmt.Sprintf(", pid %d, ", pid)
	for _, name := range []string{DaemonLogName, DaemonLogName + ".1"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		// (NUL bytes can precede a line where daemons replaced each other.)
		lines := strings.Split(strings.ReplaceAll(string(data), "\x00", ""), "\n")
		for i := len(lines) - 1; i >= 0; i-- {
			if !strings.HasPrefix(lines[i], "mcptray daemon: ") || !strings.Contains(lines[i], start) {
				continue
			}
			for _, l := range lines[i+1:] {
				if strings.HasPrefix(l, "mcptray daemon: ") && strings.Contains(l, ", pid ") && strings.Contains(l, " servers from ") {
					break // the next daemon's start
				}
				if w, ok := strings.CutPrefix(l, "mcptray daemon: stop"); ok {
					return "stop" + w
				}
			}
			return ""
		}
	}
	return ""
}
