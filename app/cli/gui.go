package cli

import (
	"context"
	"flag"
	"fmt"

	"mcptray/app"
)

const guiHelp = `The tray icon shows the health of every enabled server; its menu restarts,
stops and inspects each one. Closing the window keeps mcptray in the tray;
"Quit" in the tray menu stops every server it started (servers run by a
daemon keep running). The headless build (-tags nogui, for servers and
containers) has every other command but not this one.`

func guiFlags(fs *flag.FlagSet) runFunc {
	cfgPath := configFlag(fs)
	hide := fs.Bool("hide", false, "start in the tray without opening the window (for login autostart)")
	return func(_ context.Context, env *app.Env, args []string) error {
		if len(args) > 0 {
			return app.Usagef("takes no arguments")
		}
		var argv []string
		if *cfgPath != "" {
			argv = append(argv, "--config", *cfgPath)
		}
		if *hide {
			argv = append(argv, "--hide")
		}
		if code := launchDesktop(env, argv); code != 0 {
			return ExitError{Code: code}
		}
		return nil
	}
}

// launchDesktop runs the desktop app, or says how to get it where this binary
// is the headless build.
func launchDesktop(env *app.Env, args []string) int {
	if env.Desktop == nil {
		fmt.Fprintf(env.Stderr, "mcptray: this is the headless build (-tags %s): it has no desktop app. "+
			"For the tray and windows, install the desktop build of mcptray (`make build` makes bin/mcptray; "+
			"`make package` a desktop package); every command below works here without it.\n\n", app.HeadlessBuild)
		printUsage(env.Stderr, nil, commands)
		return 1
	}
	return env.Desktop(args, env)
}
