package cli

import (
	"context"
	"flag"
	"time"

	"mcptray/app"
)

// start, stop and restart: the commands that change a running daemon's
// servers, and wait for the change to show.

const startHelp = `Waits (up to --timeout) until each server has started and prints where it
is; exits 1 if one did not get there (failed, crash-looping, in backoff).
--no-wait returns once the daemon has the command.`

const stopHelp = `Waits (up to --timeout) until each server has stopped and prints where it
is; exits 1 if one did not get there (failed, crash-looping, in backoff).
--no-wait returns once the daemon has the command.`

const restartHelp = `Waits (up to --timeout) until each server has restarted and prints where it
is; exits 1 if one did not get there (failed, crash-looping, in backoff).
--no-wait returns once the daemon has the command.`

func startFlags(fs *flag.FlagSet) runFunc   { return verbFlags(fs, "start", "started") }
func stopFlags(fs *flag.FlagSet) runFunc    { return verbFlags(fs, "stop", "stopped") }
func restartFlags(fs *flag.FlagSet) runFunc { return verbFlags(fs, "restart", "restarted") }

// verbFlags are the flags of start, stop and restart; verb is the command
// and past what a server has done when it is over.
func verbFlags(fs *flag.FlagSet, verb, past string) runFunc {
	noWait := fs.Bool("no-wait", false, "return without waiting for the servers")
	timeout := fs.Duration("timeout", 60*time.Second, "how long to wait for each server")
	return func(ctx context.Context, env *app.Env, args []string) error {
		if len(args) == 0 {
			return app.Usagef("name at least one server")
		}
		return runCommandVerb(ctx, env, verb, past, args, !*noWait, *timeout)
	}
}
