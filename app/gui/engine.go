package gui

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"mcptray/app"
	"mcptray/control"
	"mcptray/registry"
)

// daemonStartWait bounds how long the app waits for a daemon it started.
const daemonStartWait = 15 * time.Second

// engineHost is where the app's servers run: in this user's daemon (the
// one engine the AI clients reach through `mcptray connect` and the local
// URL), or, when no daemon could be had, in this process.
type engineHost struct {
	// daemonPID is the daemon's pid (0: the servers run in this process).
	daemonPID int
	// fallback is why the servers run in this process ("" when attached).
	fallback string
	// start finds this user's daemon, starting one when none answers (nil
	// for an in-process engine).
	start func(context.Context) (*control.Client, error)
}

func (h engineHost) attached() bool { return h.daemonPID > 0 }

// newGUIEngine attaches to this user's daemon, starting it (detached: it
// outlives the app) when none answers: its servers are the ones the AI
// clients use, and they keep running when the app quits. Only when no
// daemon can be had does the engine run in this process, and the host
// says why. run follows the engine until its ctx ends. Either way the
// engine applies edits of its config file itself: the app edits that file
// (the daemon's, when attached) and never reloads on top.
func newGUIEngine(ctx context.Context, env *app.Env, cfgFlag string, cfg *registry.Config) (control.Engine, func(context.Context), engineHost) {
	var host engineHost
	sock, err := control.DefaultSocket()
	if err == nil {
		host.start = func(ctx context.Context) (*control.Client, error) {
			return app.DialOrStartDaemon(ctx, sock, cfgFlag, daemonStartWait)
		}
		var c *control.Client
		if c, err = host.start(ctx); err == nil {
			info := c.Info()
			host.daemonPID = info.PID
			fmt.Fprintf(env.Stderr, "mcptray: attached to the daemon (pid %d) on %s; its servers keep running for the AI clients when this app quits\n", info.PID, c.Socket())
			if info.ConfigPath != "" && filepath.Clean(info.ConfigPath) != filepath.Clean(cfg.Path) {
				fmt.Fprintf(env.Stderr, "mcptray: warning: the daemon runs %s, not %s: this app shows and edits the daemon's file\n", info.ConfigPath, cfg.Path)
			}
			return c, func(ctx context.Context) { c.Run(ctx) }, host
		}
	}
	host.start = nil
	host.fallback = err.Error()
	fmt.Fprintf(env.Stderr, "mcptray: the background service could not be had (%v); the servers run in this app and stop when it quits\n", err)
	eng := control.NewLocal(cfg, &control.LocalOptions{Supervisor: app.EngineOptions(cfg), Logf: func(format string, args ...any) {
		fmt.Fprintf(env.Stderr, "mcptray: "+format+"\n", args...)
	}})
	return eng, func(ctx context.Context) { eng.Run(ctx) }, host
}
