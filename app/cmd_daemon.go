package app

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"mcptray/control"
	"mcptray/gateway"
	"mcptray/supervisor"
)

func init() {
	register(&command{
		name:    "daemon",
		summary: "run the servers headless and serve the local control API",
		help: `Runs every configured server like the desktop app does, without a window,
and answers the control API on a Unix socket private to you
(/run/user/UID/mcptray/mcptray.sock when that folder is yours, else
~/.cache/mcptray/ on Linux, ~/Library/Caches/mcptray/ on macOS; found from
your user id and home folder alone, so a client that strips the environment
finds the same daemon; folder 0700, socket 0600, other users refused). "mcptray status", "logs", "start",
"stop", "restart", "reload" and the desktop app talk to it; servers keep
running when the desktop app quits.

One daemon runs per user: a second one says where the first is and exits 1.
--detach starts it in the background, outside the caller's process tree
(what a bridge and the desktop app do), its output appended to daemon.log
beside the socket; the reason it stopped is that log's last line.
State changes are printed on stderr. SIGINT or SIGTERM, or the desktop
app's "Stop all servers and quit" (POST /v1/shutdown on the socket), stops
every server, and everything they started, and exits 0. To start it at login, run
"mcptray service install".`,
		flags: func(fs *flag.FlagSet) func(context.Context, *Env, []string) error {
			cfgPath := configFlag(fs)
			asService := fs.Bool("service", false, "run under the system's service manager (set by `mcptray service install`)")
			detached := fs.Bool("detach", false, "start the daemon in the background, in a session of its own outside this process's tree, and return; its log is daemon.log beside the socket")
			return func(ctx context.Context, env *Env, args []string) error {
				if len(args) > 0 {
					return usagef("takes no arguments")
				}
				if *detached {
					return launchDaemon(env, *cfgPath)
				}
				if *asService {
					return runAsService(ctx, env, *cfgPath)
				}
				return runDaemon(ctx, env, *cfgPath)
			}
		},
	})
}

// runDaemon runs the engine and the control server until ctx ends.
func runDaemon(ctx context.Context, env *Env, cfgFlag string) error {
	run, err := prepareDaemon(env, cfgFlag)
	if err != nil {
		return err
	}
	return run(ctx)
}

// prepareDaemon loads the config and takes the control socket (so that a
// second daemon fails here, before any server starts); run then runs the
// engine and serves the API until ctx ends.
func prepareDaemon(env *Env, cfgFlag string) (run func(context.Context) error, err error) {
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
	opts := EngineOptions(cfg)
	opts.Logger = warningLogger(env.Stderr, "mcptray daemon: ")
	var gwMu sync.Mutex
	var dg *daemonGateway
	withGateway(opts, func() *gateway.Gateway {
		gwMu.Lock()
		defer gwMu.Unlock()
		if dg == nil {
			return nil
		}
		return dg.gw
	})
	eng := control.NewLocal(cfg, &control.LocalOptions{Supervisor: opts, Logf: logf})
	g, err := startGateway(cfg, eng, logf)
	if err != nil {
		ln.Close()
		return nil, err
	}
	gwMu.Lock()
	dg = g
	gwMu.Unlock()
	p := &upPrinter{w: env.Stderr, last: map[string]supervisor.ServerState{}}
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
		OnChange:    p.print,
		Logf:        logf,
		Gateway:     g.gw,
		GatewayInfo: func() control.GatewayInfo { return g.info(eng) },
	})
	return func(ctx context.Context) error {
		defer ln.Close()
		stopSig, stopWatching := watchStopSignal()
		defer stopWatching()
		logf("%s, pid %d, %d servers from %s, listening on %s", Version, os.Getpid(), len(cfg.Servers), cfg.Path, sock)
		if g.ln != nil {
			logf("clients reach the servers at http://127.0.0.1:%d/mcp/NAME/KEY (`mcptray gateway` prints each URL) and through `mcptray connect NAME`", g.port)
		}
		// Servers about to start need no line of their own.
		first := eng.Snapshot()
		for _, st := range first.Servers {
			if st.State == supervisor.StateStopped && st.Reason == supervisor.ReasonNotStarted {
				p.last[st.Name] = st
			}
		}
		p.print(first)

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
