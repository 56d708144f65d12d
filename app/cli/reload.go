package cli

import (
	"context"
	"flag"
	"fmt"

	"mcptray/app"
	"mcptray/app/present"
)

const reloadHelp = `Added servers start, removed ones stop, changed ones restart, the rest are
left alone. A file with a syntax error changes nothing; servers with errors
are kept but not started (exit 1). Changed [settings] apply at once: the
timeouts, probe interval and log limits from each server's next handshake,
probe and log line; gateway_port moves the local HTTP endpoint (entries
written with its URL then need writing again). Each change is said in the
daemon's log (daemon.log beside its socket) and, when this reload is the
one that finds it, here; the daemon applies a saved file by itself too.`

func reloadFlags(fs *flag.FlagSet) runFunc {
	return func(ctx context.Context, env *app.Env, args []string) error {
		if len(args) > 0 {
			return app.Usagef("takes no arguments")
		}
		c, err := app.DialDaemon(ctx)
		if err != nil {
			return err
		}
		res, err := c.Reload(ctx)
		if err != nil {
			return err
		}
		for _, d := range res.Diagnostics {
			fmt.Fprintln(env.Stderr, present.Visible(d))
		}
		fmt.Fprintf(env.Stdout, "reloaded %s: %d servers\n", res.ConfigPath, res.Servers)
		for _, n := range res.Notes {
			fmt.Fprintln(env.Stdout, present.Visible(n))
		}
		if res.Errors > 0 {
			fmt.Fprintf(env.Stderr, "mcptray reload: %d errors; those servers do not run (fix them: mcptray config validate)\n", res.Errors)
			return ExitError{Code: 1}
		}
		return nil
	}
}
