package gui

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"mcptray/app"
	"mcptray/control"
	"mcptray/registry"
)

// newGUIEngine attaches to this user's daemon when one answers on the
// control socket: the servers are the daemon's and keep running when the
// app quits. Otherwise the engine runs in this process and the app's Quit
// stops its servers. run follows the engine until its ctx ends. Either way
// the engine applies edits of its config file itself: the app edits that
// file (the daemon's, when attached) and never reloads on top.
func newGUIEngine(ctx context.Context, env *app.Env, cfg *registry.Config) (control.Engine, func(context.Context), error) {
	dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	c, err := control.Dial(dctx, nil)
	cancel()
	if err == nil {
		info := c.Info()
		fmt.Fprintf(env.Stderr, "mcptray: attached to the daemon (pid %d) on %s; its servers keep running when this app quits\n", info.PID, c.Socket())
		if info.ConfigPath != "" && filepath.Clean(info.ConfigPath) != filepath.Clean(cfg.Path) {
			fmt.Fprintf(env.Stderr, "mcptray: warning: the daemon runs %s, not %s: this app shows and edits the daemon's file\n", info.ConfigPath, cfg.Path)
		}
		return c, func(ctx context.Context) { c.Run(ctx) }, nil
	}
	if errors.Is(err, control.ErrNoDaemon) {
		fmt.Fprintln(env.Stderr, "mcptray: no daemon running; the servers run in this app and stop when it quits")
	} else {
		fmt.Fprintf(env.Stderr, "mcptray: the daemon did not answer (%v); the servers run in this app and stop when it quits\n", err)
	}
	eng := control.NewLocal(cfg, &control.LocalOptions{Supervisor: app.EngineOptions(cfg), Logf: func(format string, args ...any) {
		fmt.Fprintf(env.Stderr, "mcptray: "+format+"\n", args...)
	}})
	return eng, func(ctx context.Context) { eng.Run(ctx) }, nil
}
