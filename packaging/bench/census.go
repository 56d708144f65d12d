//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The census rows: what supervising processes costs against what any
// client that starts the same servers must pay.
//
//	check, 1 demo server     vs a bare go-sdk client (start, connect, tools/list)          target ≤ 1.15x
//	check, 50 demo servers   vs a bare go-sdk client connecting to 50 at once (the floor)  target ≤ 1.3x
//	daemon, 100 idle demo servers: CPU of the daemon process                               target ≤ 0.2 % of a core

// censusBench prints the census rows; it reports whether a target was
// missed.
func censusBench(bareBin, bin, dir string, env []string, runs int, idleFor time.Duration) (missed bool) {
	row := func(name string, a, b time.Duration, target float64) {
		ratio := float64(a) / float64(b)
		t := fmt.Sprintf("≤ %gx", target)
		if ratio > target {
			t += " **missed**"
			missed = true
		}
		fmt.Printf("| %s | %s | %s | %.2fx | %s |\n", name, ms(a), ms(b), ratio, t)
	}
	one := writeConfig(dir, "census-one.toml", demoServers(bin, 1))
	fifty := writeConfig(dir, "census-fifty.toml", demoServers(bin, 50))
	a, b := pair(runs, env, []string{bin, "check", "--config", one}, []string{bareBin, "list", bin, "serve-demo"})
	row("check, 1 demo server vs bare go-sdk client", a, b, 1.15)
	a, b, failed := pairTolerant(max(runs/2, 5), env, []string{bin, "check", "--config", fifty}, []string{bareBin, "many", "50", bin, "serve-demo"})
	name := "check, 50 demo servers vs bare go-sdk client connecting to 50 at once"
	if failed > 0 {
		// Timed all the same: every process was started, looked after and
		// stopped.
		name += fmt.Sprintf(" (%d runs had a server fail its handshake)", failed)
	}
	row(name, a, b, 1.3)
	if idleFor > 0 {
		cpu, err := idleDaemon(bin, dir, env, 100, idleFor)
		if err != nil {
			fmt.Printf("| daemon, 100 idle demo servers | – | – | – | failed: %v |\n", err)
			return true
		}
		t := "≤ 0.2 %"
		if cpu > 0.2 {
			t += " **missed**"
			missed = true
		}
		fmt.Printf("| daemon, 100 idle demo servers, CPU over %s | %.3f %% of a core | – | – | %s |\n", idleFor, cpu, t)
	}
	return missed
}

// pairTolerant is pair for runs that may fail on a loaded machine (a
// server whose handshake fails is still started, looked after and
// stopped): it counts the failed runs instead of giving up.
func pairTolerant(n int, env []string, a, b []string) (time.Duration, time.Duration, int) {
	var ta, tb []time.Duration
	failed := 0
	run := func(argv []string) time.Duration {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = env
		start := time.Now()
		if err := cmd.Run(); err != nil {
			failed++
		}
		return time.Since(start)
	}
	for range n {
		ta = append(ta, run(a))
		tb = append(tb, run(b))
	}
	return median(ta), median(tb), failed
}

// idleDaemon runs `mcptray daemon` with n demo servers until every one is
// ready, lets it settle, and returns the daemon's CPU use (percent of one
// core) over d, read from /proc/PID/stat.
func idleDaemon(bin, dir string, env []string, n int, d time.Duration) (float64, error) {
	home := filepath.Join(dir, "idle-home")
	cfgDir := filepath.Join(home, "config")
	if err := os.MkdirAll(cfgDir, 0o700); err != nil {
		return 0, err
	}
	cfg := writeConfig(dir, "census-hundred.toml", demoServers(bin, n))
	env = append(env, "HOME="+home, "XDG_CONFIG_HOME="+cfgDir, "XDG_RUNTIME_DIR="+filepath.Join(home, "run"), "XDG_CACHE_HOME="+filepath.Join(home, "cache"))
	os.MkdirAll(filepath.Join(home, "run"), 0o700)
	cmd := exec.Command(bin, "daemon", "--config", cfg)
	cmd.Env = env
	logf, err := os.Create(filepath.Join(dir, "idle-daemon.log"))
	if err != nil {
		return 0, err
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}()
	if err := waitAllReady(env, bin, n); err != nil {
		return 0, err
	}
	time.Sleep(10 * time.Second) // past the first looks at each new family
	c0, t0 := procCPU(cmd.Process.Pid), time.Now()
	time.Sleep(d)
	c1, wall := procCPU(cmd.Process.Pid), time.Since(t0)
	return 100 * (c1 - c0).Seconds() / wall.Seconds(), nil
}

func runOut(env []string, argv ...string) ([]byte, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	return cmd.Output()
}

// procCPU is a process's user and system time so far.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+2:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ
}

// waitAllReady waits until `mcptray status` shows n servers ready, for at
// most two minutes.
func waitAllReady(env []string, bin string, n int) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		out, _ := runOut(env, bin, "status", "--json")
		var list []struct{ State string }
		ready := 0
		if json.Unmarshal(out, &list) == nil {
			for _, e := range list {
				if e.State == "ready" {
					ready++
				}
			}
		}
		if ready == n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d servers ready after 2 minutes", ready, n)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
