//go:build unix

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// memoryBench compares the desktop app's RSS with 20 demo servers, window
// open and then closed, with the floor: a minimal Fyne app showing one
// window and a tray icon (app/gui/floor), built and run in the
// same run on the same display.
func memoryBench(bin, dir string, env []string, wait time.Duration) {
	if os.Getenv("DISPLAY") == "" || os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		return // guiBench said why
	}
	floor := filepath.Join(dir, "floor")
	if out, err := exec.Command("go", "build", "-o", floor, "mcptray/app/gui/floor").CombinedOutput(); err != nil {
		fmt.Printf("| GUI memory vs Fyne floor | – | – | – | skipped: building the floor app failed: %v %s |\n", err, out)
		return
	}
	run := func(argv ...string) *exec.Cmd {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = env
		check(cmd.Start())
		start := time.Now()
		for !trayUp(cmd.Process.Pid) {
			if time.Since(start) > 30*time.Second {
				fmt.Fprintln(os.Stderr, "bench: the tray never appeared")
				os.Exit(2)
			}
			time.Sleep(10 * time.Millisecond)
		}
		return cmd
	}

	f := run(floor)
	time.Sleep(wait)
	floorRSS := rssKB(f.Process.Pid)
	closeWindow("floor")
	time.Sleep(wait / 2)
	floorClosed := rssKB(f.Process.Pid)
	stopGUI(f)

	cfg := writeConfig(dir, "mem20.toml", "[settings]\nprobe_interval = \"5s\"\n\n"+demoServers(bin, 20))
	g := run(bin, "gui", "--config", cfg)
	time.Sleep(wait)
	open := rssKB(g.Process.Pid)
	closed := 0
	if closeWindow("mcptray") {
		time.Sleep(wait / 2)
		closed = rssKB(g.Process.Pid)
	}
	stopGUI(g)

	mb := func(kb int) string { return fmt.Sprintf("%.0f MB", float64(kb)/1024) }
	fmt.Printf("| GUI RSS, 20 demo servers, window open %s, vs Fyne floor (one window, tray) | %s | %s | %.2fx | ≤ 1.3x (reported) |\n",
		wait, mb(open), mb(floorRSS), float64(open)/float64(floorRSS))
	if closed > 0 {
		fmt.Printf("| GUI RSS, same, %s after closing the window, vs floor after closing its window | %s | %s | %.2fx | ≤ 1.3x (reported) |\n",
			wait/2, mb(closed), mb(floorClosed), float64(closed)/float64(floorClosed))
	}
}
