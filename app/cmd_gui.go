package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// GUIBinary is the desktop app's executable, installed beside mcptray. The
// desktop app lives in its own binary so the command line, the daemon and the
// demo server stay pure Go: they start in a millisecond and run on machines
// without X11 or OpenGL libraries.
const GUIBinary = "mcptray-gui"

// EnvCLI tells the desktop app where the mcptray binary that started it is
// (the demo server of a first-run config runs it).
const EnvCLI = "MCPTRAY_CLI"

func init() {
	register(&command{
		name:    "gui",
		summary: "start the desktop app (what mcptray does with no command)",
		help: `The tray icon shows the health of every enabled server; its menu restarts,
stops and inspects each one. Closing the window keeps mcptray in the tray;
"Quit" in the tray menu stops every server it started (servers run by a
daemon keep running). The desktop app is the mcptray-gui binary installed
beside mcptray.`,
		flags: func(fs *flag.FlagSet) func(context.Context, *Env, []string) error {
			cfgPath := configFlag(fs)
			hide := fs.Bool("hide", false, "start in the tray without opening the window (for login autostart)")
			return func(_ context.Context, env *Env, args []string) error {
				if len(args) > 0 {
					return usagef("takes no arguments")
				}
				var argv []string
				if *cfgPath != "" {
					argv = append(argv, "--config", *cfgPath)
				}
				if *hide {
					argv = append(argv, "--hide")
				}
				if code := launchGUI(env, argv); code != 0 {
					return ExitError{code}
				}
				return nil
			}
		},
	})
}

// launchGUI runs the desktop app binary with args, in place of this process
// where the platform allows it.
func launchGUI(env *Env, args []string) int {
	path, err := findGUI(env.Exe)
	if err != nil {
		fmt.Fprintf(env.Stderr, "mcptray: %v\n\n", err)
		printUsage(env.Stderr, nil, commands)
		return 1
	}
	os.Setenv(EnvCLI, env.Exe)
	if err := execGUI(path, args); err != nil {
		fmt.Fprintf(env.Stderr, "mcptray: start the desktop app %s: %v\n", path, err)
		return 1
	}
	return 0
}

// findGUI looks for the desktop app beside the mcptray binary, then on PATH.
func findGUI(exe string) (string, error) {
	if exe != "" {
		p := filepath.Join(filepath.Dir(exe), GUIBinary+filepath.Ext(exe))
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath(GUIBinary); err == nil {
		return p, nil
	}
	return "", errors.New("the desktop app (" + GUIBinary + ") is not installed beside " + exe + " or on PATH; `make build` builds both, and every command below works without it")
}
