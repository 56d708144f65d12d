package gui

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"fyne.io/fyne/v2"
	fyneapp "fyne.io/fyne/v2/app"
	"fyne.io/fyne/v2/theme"

	"mcptray/app"
	"mcptray/assets"
	"mcptray/registry"
	"mcptray/supervisor"
)

// AppID is the desktop app's identifier (FyneApp.toml, preferences folder).
const AppID = "dev.mcptray.app"

// Main runs the desktop app with the command-line arguments args (without
// the program name) and returns the exit code. `mcptray` with no command, and
// `mcptray gui`, start it (the root main.go hands it to app as Env.Desktop).
func Main(args []string, env *app.Env) int {
	fs := flag.NewFlagSet("mcptray gui", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	cfgPath := fs.String("config", "", "the servers.toml to use (default: $MCPTRAY_CONFIG, else the user config folder)")
	hide := fs.Bool("hide", false, "start in the tray without opening the window (for login autostart)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "mcptray gui: takes no arguments\n")
		return 2
	}
	if err := checkDisplay(); err != nil {
		fmt.Fprintf(env.Stderr, "mcptray: %v\n", err)
		return 1
	}
	if env.Exe == "" {
		// The demo server of a first-run config runs this binary.
		env.Exe, _ = os.Executable()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runGUI(ctx, env, *cfgPath, *hide)
}

// runGUI runs the desktop app until Quit (or SIGINT/SIGTERM). The servers
// run in this user's daemon, started when none runs, and keep serving the
// AI clients after Quit; only when no daemon can be had do they run here,
// and stop with the app.
func runGUI(ctx context.Context, env *app.Env, cfgFlag string, hide bool) int {
	cfg, err := app.LoadConfig(env, cfgFlag, false)
	var broken *registry.SyntaxError
	if errors.As(err, &broken) {
		// Open anyway, with no servers and the window's banner saying
		// where the file breaks: the fix is made in the file, not here.
		fmt.Fprintf(env.Stderr, "mcptray: %v\n", err)
		cfg = &registry.Config{Path: broken.File}
		hide = false
	} else if err != nil {
		fmt.Fprintf(env.Stderr, "mcptray: %v\n", err)
		return 2
	}
	// The daemon this app starts, and what a daemon killed under it
	// leaves, end as its children: reaped at once (never <defunct> for
	// the next daemon's cleaner to look at), and the app can say how its
	// daemon ended.
	supervisor.AdoptOrphans()
	eng, run, host := newGUIEngine(ctx, env, cfgFlag, cfg)
	// The app lives in the tray all day: collect its garbage sooner (the
	// heap it keeps is about 30 MB with 20 servers; by default it grows to
	// twice that between collections). The collector's CPU stays near 0 %.
	debug.SetGCPercent(50)
	a := fyneapp.NewWithID(AppID)
	// The tray's title (and notifications' sender) is the app's name; a
	// build that is not packaged has none, and Fyne would show the ID.
	md := a.Metadata()
	if md.Name == "" {
		md.Name = "mcptray"
		if md.ID == "" {
			md.ID = AppID
		}
	}
	// Every UI change goes through fyne.Do (FyneApp.toml says so for
	// packaged builds). Without the migration set, Fyne checks the calling
	// goroutine on every refresh by formatting a stack trace: that was 40 %
	// of the app's CPU with its window open, idle.
	if md.Migrations == nil {
		md.Migrations = map[string]bool{}
	}
	md.Migrations["fyneDo"] = true
	fyneapp.SetMetadata(md)
	a.SetIcon(assets.AppIcon)
	a.Settings().SetTheme(appTheme{theme.DefaultTheme()})
	// The app edits the file its engine runs (a daemon's may differ).
	cfgPath := eng.Status().ConfigPath
	if cfgPath == "" {
		cfgPath = cfg.Path
	}
	c := newController(a, eng, cfgPath, env)
	c.host = host
	if broken != nil {
		// Have the engine read the file: it reports where it breaks, and
		// the window's banner shows it.
		_, _ = eng.Reload(ctx)
	}

	bg, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { c.watch(bg, 250*time.Millisecond) })
	wg.Go(func() { c.followGateway(bg, gatewayPoll) })
	wg.Go(func() { stayInTray(bg) })
	wg.Go(func() {
		select {
		case <-ctx.Done():
			fyne.Do(c.quit)
		case <-bg.Done():
		}
	})
	// The tray must exist before Run: Fyne starts it as the loop begins.
	c.setUp()
	a.Lifecycle().SetOnStarted(func() {
		// Servers start once the tray is up, so spawning them does not
		// compete with it: start-up time does not grow with their number.
		wg.Go(func() { run(bg) })
		if !hide {
			c.openMain()
		}
	})
	end := func() {
		cancel()
		waitAtMost(env.Stderr, &wg, quitGrace, "the app's background work (the servers it runs, following the daemon, the tray's registration)")
	}
	c.ender = func() {
		started := time.Now()
		end()
		// The tray host's click that chose Quit is answered over D-Bus
		// after the click reached the app: ended at once, the process
		// can leave the host's call unanswered (NoReply).
		if d := quitReplyGrace - time.Since(started); d > 0 {
			time.Sleep(d)
		}
		os.Exit(0)
	}
	a.Run()
	// Fyne quit by a way of its own (none of the app's Quits: they end
	// the process).
	c.stopTrials()()
	end()
	return 0
}
