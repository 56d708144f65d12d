//go:build unix

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"mcptray/control"
	"mcptray/registry"
)

// The window's idle cost: the desktop app with its window open and every
// server ready, doing nothing but showing them.
//
//	GUI, window open, 30 demo servers vs 1: CPU of the app process   target ≤ 2x and ≤ 5 % of a core

// guiCPUBench measures the app's CPU with its window open at one demo
// server and at 30, over d each, and says whether it meets the targets
// (missed is true when it does not).
func guiCPUBench(bin, dir string, env []string, d time.Duration) (missed bool) {
	if os.Getenv("DISPLAY") == "" || os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		fmt.Println("| GUI idle CPU, window open | – | – | – | skipped: needs DISPLAY and a D-Bus session (run under xvfb-run and dbus-run-session) |")
		return false
	}
	one, err := guiIdleCPU(bin, dir, env, 1, d)
	if err != nil {
		fmt.Printf("| GUI idle CPU, window open, 1 demo server | – | – | – | failed: %v |\n", err)
		return true
	}
	thirty, err := guiIdleCPU(bin, dir, env, 30, d)
	if err != nil {
		fmt.Printf("| GUI idle CPU, window open, 30 demo servers | – | – | – | failed: %v |\n", err)
		return true
	}
	ratio := thirty / max(one, 0.01)
	verdict := "met"
	if ratio > 2 || thirty > 5 {
		verdict, missed = "MISSED", true
	}
	fmt.Printf("| GUI idle CPU over %s, window open, 30 demo servers vs 1 | %.1f %% of a core | %.1f %% | %.2fx | ≤ 2x and ≤ 5 %%: %s |\n",
		d, thirty, one, ratio, verdict)
	return missed
}

// guiIdleCPU runs `mcptray gui` (window open) on n demo servers in a home of
// its own, waits until every server is ready, and returns the app's CPU use
// (percent of one core) over d. The daemon the app started is stopped.
func guiIdleCPU(bin, dir string, env []string, n int, d time.Duration) (float64, error) {
	home := filepath.Join(dir, fmt.Sprintf("gui-cpu-%d", n))
	for _, sub := range []string{"config", "run", "cache"} {
		if err := os.MkdirAll(filepath.Join(home, sub), 0o700); err != nil {
			return 0, err
		}
	}
	cfg := writeConfig(dir, fmt.Sprintf("gui-cpu-%d.toml", n), demoServers(bin, n))
	env = append(env, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, "config"),
		"XDG_RUNTIME_DIR="+filepath.Join(home, "run"), "XDG_CACHE_HOME="+filepath.Join(home, "cache"))
	cmd := exec.Command(bin, "gui", "--config", cfg)
	cmd.Env = env
	logf, err := os.Create(filepath.Join(dir, fmt.Sprintf("gui-cpu-%d.log", n)))
	if err != nil {
		return 0, err
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	// The app first: it starts a daemon again when its own goes away.
	defer func() {
		stopGUI(cmd)
		stopHomeDaemon(home)
	}()
	if err := waitAllReady(env, bin, n); err != nil {
		return 0, err
	}
	time.Sleep(10 * time.Second) // past the window's first layout and the servers' first probes
	c0, t0 := procCPU(cmd.Process.Pid), time.Now()
	time.Sleep(d)
	c1, wall := procCPU(cmd.Process.Pid), time.Since(t0)
	return 100 * (c1 - c0).Seconds() / wall.Seconds(), nil
}

// stopHomeDaemon stops the daemon the app started in home (its servers
// outlive the app otherwise).
func stopHomeDaemon(home string) {
	// The runtime folder follows HOME (registry.RuntimeDir), not
	// XDG_CACHE_HOME.
	sock := filepath.Join(home, ".cache", registry.RuntimeDirName, control.SocketName)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := control.Dial(ctx, &control.ClientOptions{Socket: sock})
	if err != nil {
		return
	}
	pid := c.Info().PID
	_ = c.Shutdown(ctx)
	for pid > 0 && ctx.Err() == nil {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}
