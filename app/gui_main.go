package app

import (
	"context"
	"flag"
	"fmt"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	fyneapp "fyne.io/fyne/v2/app"

	"mcptray/assets"
)

// AppID is the desktop app's identifier (FyneApp.toml, preferences folder).
const AppID = "dev.mcptray.app"

func init() {
	guiMain = func(ctx context.Context, env *Env) int { return runGUI(ctx, env, "", false) }
	register(&command{
		name:    "gui",
		summary: "start the desktop app (what mcptray does with no command)",
		help: `The tray icon shows the health of every enabled server; its menu restarts,
stops and inspects each one. Closing the window keeps mcptray in the tray;
"Quit" in the tray menu stops every server it started.`,
		flags: func(fs *flag.FlagSet) func(context.Context, *Env, []string) error {
			cfgPath := configFlag(fs)
			hide := fs.Bool("hide", false, "start in the tray without opening the window (for login autostart)")
			return func(ctx context.Context, env *Env, args []string) error {
				if len(args) > 0 {
					return usagef("takes no arguments")
				}
				if code := runGUI(ctx, env, *cfgPath, *hide); code != 0 {
					return ExitError{code}
				}
				return nil
			}
		},
	})
}

// runGUI runs the desktop app until Quit (or SIGINT/SIGTERM), then stops
// every server the engine started.
func runGUI(ctx context.Context, env *Env, cfgFlag string, hide bool) int {
	cfg, err := loadConfig(env, cfgFlag, false)
	if err != nil {
		fmt.Fprintf(env.Stderr, "mcptray: %v\n", err)
		return 2
	}
	eng, run, err := newGUIEngine(ctx, env, cfg)
	if err != nil {
		fmt.Fprintf(env.Stderr, "mcptray: %v\n", err)
		return 1
	}
	a := fyneapp.NewWithID(AppID)
	a.SetIcon(assets.AppIcon)
	c := newController(a, eng, cfg.Path, env)

	bg, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { run(bg) })
	wg.Go(func() { c.watch(bg, 250*time.Millisecond) })
	wg.Go(func() {
		if err := c.watchConfig(bg); err != nil {
			fmt.Fprintf(env.Stderr, "mcptray: not watching %s for changes: %v\n", cfg.Path, err)
		}
	})
	wg.Go(func() {
		select {
		case <-ctx.Done():
			fyne.Do(a.Quit)
		case <-bg.Done():
		}
	})
	// The tray must exist before Run: Fyne starts it as the loop begins.
	c.setUp()
	a.Lifecycle().SetOnStarted(func() {
		if !hide {
			c.openMain()
		}
	})
	a.Run()
	cancel()
	wg.Wait()
	return 0
}
