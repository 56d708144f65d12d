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
	"mcptray/supervisor"
)

// newGUIEngine attaches to this user's daemon when one answers on the
// control socket: the servers are the daemon's and keep running when the
// app quits. Otherwise the engine runs in this process and the app's Quit
// stops its servers. run follows the engine until its ctx ends.
func newGUIEngine(ctx context.Context, env *app.Env, cfg *registry.Config) (Engine, func(context.Context), error) {
	dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	c, err := control.Dial(dctx, nil)
	cancel()
	if err == nil {
		info := c.Info()
		fmt.Fprintf(env.Stderr, "mcptray: attached to the daemon (pid %d) on %s; its servers keep running when this app quits\n", info.PID, c.Socket())
		if info.ConfigPath != "" && filepath.Clean(info.ConfigPath) != filepath.Clean(cfg.Path) {
			fmt.Fprintf(env.Stderr, "mcptray: warning: the daemon runs %s, this app edits %s; edits apply to the daemon only when both are the same file\n", info.ConfigPath, cfg.Path)
		}
		return c, func(ctx context.Context) { c.Run(ctx) }, nil
	}
	if errors.Is(err, control.ErrNoDaemon) {
		fmt.Fprintln(env.Stderr, "mcptray: no daemon running; the servers run in this app and stop when it quits")
	} else {
		fmt.Fprintf(env.Stderr, "mcptray: the daemon did not answer (%v); the servers run in this app and stop when it quits\n", err)
	}
	sup := supervisor.New(cfg.Servers, app.EngineOptions(cfg))
	return sup, func(ctx context.Context) { sup.Run(ctx) }, nil
}
