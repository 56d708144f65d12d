package cli

import (
	"context"
	"flag"
	"io"
	"sync"

	"mcptray/app"
	"mcptray/supervisor"
)

const daemonHelp = `Runs every configured server like the desktop app does, without a window,
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
"mcptray service install".`

func daemonFlags(fs *flag.FlagSet) runFunc {
	cfgPath := configFlag(fs)
	asService := fs.Bool("service", false, "run under the system's service manager (set by `mcptray service install`)")
	detached := fs.Bool("detach", false, "start the daemon in the background, in a session of its own outside this process's tree, and return; its log is daemon.log beside the socket")
	return func(ctx context.Context, env *app.Env, args []string) error {
		if len(args) > 0 {
			return app.Usagef("takes no arguments")
		}
		if *detached {
			return app.LaunchDaemon(env, *cfgPath)
		}
		if *asService {
			return runAsService(ctx, env, *cfgPath)
		}
		return runDaemon(ctx, env, *cfgPath)
	}
}

// runDaemon runs the engine and the control server until ctx ends.
func runDaemon(ctx context.Context, env *app.Env, cfgFlag string) error {
	run, err := app.PrepareDaemon(env, cfgFlag, daemonPrinter(env.Stderr))
	if err != nil {
		return err
	}
	return run(ctx)
}

// daemonPrinter prints the daemon's state changes on w, as `up` does; the
// servers about to start in its first snapshot need no line of their own.
func daemonPrinter(w io.Writer) func(supervisor.Snapshot) {
	p := &upPrinter{w: w, last: map[string]supervisor.ServerState{}}
	var first sync.Once
	return func(snap supervisor.Snapshot) {
		first.Do(func() {
			for _, st := range snap.Servers {
				if st.State == supervisor.StateStopped && st.Reason == supervisor.ReasonNotStarted {
					p.last[st.Name] = st
				}
			}
		})
		p.print(snap)
	}
}
