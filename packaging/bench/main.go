//go:build unix

// Command bench measures mcptray against baselines run on the same machine in
// the same run, and prints ratios (absolute times on a shared machine mean
// little; ratios measured side by side do). `make bench` runs it, on Linux
// (it reads /proc and the tray over D-Bus): the package builds on Unix only.
//
//	check, 1 demo server      vs a bare go-sdk client (connect + tools/list)   target ≤ 1.1x
//	                          (with -headless: the desktop build handing off to the headless
//	                          one beside it vs the headless build, target ≤ 1.15x;
//	                          -check-only adds not handing off vs the bare client)
//	call, demo server add     vs a bare go-sdk client (connect + tools/call)   target ≤ 1.15x
//	                          (with -headless: the headless build's call, and the desktop
//	                          build's against the headless build's, target ≤ 1.15x)
//	check, 50 demo servers    vs check, 1 demo server                          target ≤ 2x
//	check, server-everything  vs the MCP Inspector CLI (tools/list)            reported
//	notifications/s, stdio wire vs a bare go-sdk IOTransport (same server)   target ≥ 100k/s in one core
//	GUI: start to tray menu on D-Bus, 1 vs 50 servers; RSS with 20 servers     reported
//	GUI idle CPU, window open, 30 demo servers vs 1 (guicpu.go, alone with
//	-gui-cpu-only)                                                              ≤ 2x and ≤ 5 % of a core
//	tool search over 1,000 tools (search.go, alone with -search-only)           p50 ≤ 1 ms
//	census (census.go, alone with -census-only): check of 1 and of 50 servers
//	against the bare go-sdk (one client; 50 at once), an idle daemon's CPU     ≤ 1.15x, ≤ 1.3x, ≤ 0.2 %
//
// Runs alternate between the two sides of a pair so drifting machine load
// hits both alike; medians are compared.
package main

import (
	"bytes"
	"cmp"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	// Re-executed as a stdio server that floods notifications.
	if len(os.Args) == 2 && os.Args[1] == "-flood" {
		os.Exit(floodServer())
	}
	b := newBench(parseFlags())
	failed := b.run()
	os.RemoveAll(b.dir)
	if failed {
		os.Exit(1)
	}
}

// options are the command line's.
type options struct {
	bin, servers, headless, bare                               string
	runs, gatewayCalls                                         int
	gui, memOnly, callOnly, checkOnly, gatewayOnly, censusOnly bool
	searchOnly, exposureOnly, aggregateOnly, guiCPUOnly        bool
	rssWait, memWait, idleFor, guiCPUFor                       time.Duration
}

func parseFlags() *options {
	o := &options{}
	flag.StringVar(&o.bin, "mcptray", "bin/mcptray", "the mcptray binary to measure")
	flag.StringVar(&o.bare, "bare", "bin/mcptray-bare", "the baseline: packaging/bench/bareclient built with CGO_ENABLED=0")
	flag.StringVar(&o.servers, "servers", ".testservers/node_modules", "where npm installed the test servers")
	flag.IntVar(&o.runs, "runs", 15, "runs per measurement")
	flag.BoolVar(&o.gui, "gui", true, "measure the GUI too (needs DISPLAY and a D-Bus session bus)")
	flag.DurationVar(&o.rssWait, "rss-wait", 5*time.Minute, "how long the GUI runs with 20 servers before its RSS is read")
	flag.BoolVar(&o.memOnly, "memory-only", false, "measure only the GUI's memory against the Fyne floor")
	flag.StringVar(&o.headless, "headless", "", "the headless build (-tags nogui) to measure call with too (\"\": not measured)")
	flag.BoolVar(&o.callOnly, "call-only", false, "measure only the call rows")
	flag.BoolVar(&o.checkOnly, "check-only", false, "measure only the check rows (1 demo server: the desktop build handing off, without, and the headless build)")
	flag.DurationVar(&o.memWait, "mem-wait", time.Minute, "how long the GUI and the Fyne floor app run before their RSS is compared")
	flag.BoolVar(&o.gatewayOnly, "gateway-only", false, "measure only the gateway (connect and HTTP against direct)")
	flag.IntVar(&o.gatewayCalls, "gateway-calls", 1000, "tools/call round trips per side of the gateway measurement")
	flag.BoolVar(&o.censusOnly, "census-only", false, "measure only the census rows (check of 1 and 50 servers against the go-sdk, an idle daemon)")
	flag.BoolVar(&o.searchOnly, "search-only", false, "measure only tool search over 1,000 tools")
	flag.BoolVar(&o.exposureOnly, "exposure-only", false, "measure only the size of tools/list with full against search exposure")
	flag.BoolVar(&o.aggregateOnly, "aggregate-only", false, "measure only the aggregate (tools/list of 20 servers, tools/call against per-server)")
	flag.DurationVar(&o.idleFor, "idle", 60*time.Second, "how long the daemon with 100 idle demo servers is measured (0: not measured)")
	flag.BoolVar(&o.guiCPUOnly, "gui-cpu-only", false, "measure only the GUI's idle CPU with its window open, 30 demo servers against 1")
	flag.DurationVar(&o.guiCPUFor, "gui-cpu", 30*time.Second, "how long the GUI's idle CPU is measured at each size")
	flag.Parse()
	return o
}

// bench is one run of the measurements: their configs and environment in
// a scratch folder, and whether a target was missed.
type bench struct {
	o                      *options
	bin, dir, self, bare   string
	one, fifty, everything string // configs of 1 and 50 demo servers; server-everything's script ("": not installed)
	env                    []string
	failed                 bool
}

func newBench(o *options) *bench {
	abs, err := filepath.Abs(o.bin)
	check(err)
	dir, err := os.MkdirTemp("", "mcptray-bench-")
	check(err)
	self, err := os.Executable()
	check(err)
	b := &bench{o: o, bin: abs, dir: dir, self: self}
	b.one = writeConfig(dir, "one.toml", demoServers(abs, 1))
	b.fifty = writeConfig(dir, "fifty.toml", demoServers(abs, 50))
	b.env = append(os.Environ(), "HOME="+dir, "XDG_CACHE_HOME="+filepath.Join(dir, "cache"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	b.everything = filepath.Join(o.servers, "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if !exists(b.everything) {
		b.everything = ""
	}
	return b
}

func tableHeader() {
	fmt.Println("| measurement | mcptray | baseline | ratio | target |")
	fmt.Println("|---|---|---|---|---|")
}

// miss records a missed target.
func (b *bench) miss(missed bool) { b.failed = b.failed || missed }

// row prints a pair's medians and their ratio against target (0: reported
// only).
func (b *bench) row(name string, x, y time.Duration, target float64) {
	ratio := float64(x) / float64(y)
	t := "reported"
	if target > 0 {
		t = fmt.Sprintf("≤ %gx", target)
		if ratio > target {
			t += " **missed**"
			b.failed = true
		}
	}
	fmt.Printf("| %s | %s | %s | %.2fx | %s |\n", name, ms(x), ms(y), ratio, t)
}

// only runs the one measurement an -…-only flag asks for, and reports
// whether one was asked.
func (b *bench) only() bool {
	o := b.o
	switch {
	case o.gatewayOnly:
		tableHeader()
		b.miss(gatewayBench(b.bin, b.everything, b.dir, b.env, o.gatewayCalls))
	case o.aggregateOnly:
		tableHeader()
		b.miss(aggregateBench(b.bin, b.dir, b.env, o.gatewayCalls))
	case o.exposureOnly:
		tableHeader()
		exposureBench(b.bin, o.servers, b.dir, b.env)
	case o.searchOnly:
		tableHeader()
		b.miss(searchBench())
	case o.censusOnly:
		fmt.Printf("mcptray census, %d runs each, medians (machine: %s)\n\n", o.runs, machine())
		tableHeader()
		b.miss(censusBench(b.bareClient(), cmp.Or(headlessAbs(o.headless), b.bin), b.dir, b.env, o.runs, o.idleFor))
	case o.guiCPUOnly:
		tableHeader()
		b.miss(guiCPUBench(b.bin, b.dir, b.env, o.guiCPUFor))
	case o.memOnly:
		tableHeader()
		memoryBench(b.bin, b.dir, b.env, o.memWait)
	default:
		return false
	}
	return true
}

// run measures what the flags ask for and reports whether a target was
// missed.
func (b *bench) run() bool {
	if b.only() {
		return b.failed
	}
	o := b.o
	fmt.Printf("mcptray benchmarks, %d runs each, medians (machine: %s)\n\n", o.runs, machine())
	tableHeader()
	if !o.callOnly {
		x, y := pair(o.runs, b.env, b.checkOne(), b.bareList())
		b.row("check, 1 demo server vs bare go-sdk client", x, y, 1.1)
	}
	if o.checkOnly {
		b.checkRows()
		return b.failed
	}
	if !o.callOnly {
		b.handoffCheckRow()
	}
	b.callRows()
	if o.callOnly {
		return b.failed
	}
	b.engineRows()
	if o.gui {
		guiBench(b.bin, b.dir, b.env, o.rssWait)
		b.miss(guiCPUBench(b.bin, b.dir, b.env, o.guiCPUFor))
		memoryBench(b.bin, b.dir, b.env, o.memWait)
	}
	return b.failed
}

func (b *bench) checkOne() []string { return []string{b.bin, "check", "--config", b.one} }
func (b *bench) bareList() []string { return []string{b.bareClient(), "list", b.bin, "serve-demo"} }

// bareClient is the baseline's binary, made absolute, found when a row
// first needs it: a missing one ends the bench (make bench builds it).
func (b *bench) bareClient() string {
	if b.bare != "" {
		return b.bare
	}
	abs, err := filepath.Abs(b.o.bare)
	check(err)
	if !exists(abs) {
		fmt.Fprintf(os.Stderr, "bench: no baseline client at %s: build it with CGO_ENABLED=0 go build -o %s ./packaging/bench/bareclient (make bench does)\n", abs, b.o.bare)
		os.Exit(2)
	}
	b.bare = abs
	return abs
}

// checkRows are -check-only's: the packaged layout, where the desktop
// build hands the command (and the demo server it starts, the same
// binary) to the headless build beside it, against the headless build's
// own check, and the desktop build kept from handing off, as it was
// before.
func (b *bench) checkRows() {
	o := b.o
	b.handoffCheckRow()
	noHandoff := append(slices.Clone(b.env), "MCPTRAY_NO_HANDOFF=1")
	var ta, tb []time.Duration
	for range o.runs {
		ta = append(ta, timeRun(noHandoff, b.checkOne()))
		tb = append(tb, timeRun(noHandoff, b.bareList()))
	}
	b.row("check, 1 demo server, desktop build not handing off (MCPTRAY_NO_HANDOFF=1) vs bare go-sdk client", median(ta), median(tb), 0)
}

// handoffCheckRow is the desktop build's check (handing the command to
// the headless build beside it, as the packages install them) against
// the headless build's own, with -headless.
func (b *bench) handoffCheckRow() {
	if b.o.headless == "" {
		return
	}
	h, err := filepath.Abs(b.o.headless)
	check(err)
	hOne := writeConfig(b.dir, "one-headless.toml", demoServers(h, 1))
	x, y := pair(b.o.runs, b.env, b.checkOne(), []string{h, "check", "--config", hOne})
	b.row("check, 1 demo server, desktop build handing off vs the headless build", x, y, 1.15)
}

// callRows time a tool call against the bare go-sdk client's.
func (b *bench) callRows() {
	o := b.o
	x, y := callBench(b.bareClient(), b.bin, b.bin, b.env, o.runs)
	b.row("call of a demo tool vs bare go-sdk client (same call)", x, y, 1.15)
	if o.headless != "" {
		h, err := filepath.Abs(o.headless)
		check(err)
		x, y = callBench(b.bareClient(), h, b.bin, b.env, o.runs)
		b.row("call of a demo tool, headless build, vs bare go-sdk client (same call, same server)", x, y, 1.15)
		x, y = pair(o.runs, b.env, callArgv(b.bin, h), callArgv(h, h))
		b.row("call of a demo tool, desktop build handing off vs the headless build (same call, same server)", x, y, 1.15)
	}
}

// engineRows are the rest of a full run: many servers, the census, the
// Inspector, the wire, the gateway, the aggregate, search and exposure.
func (b *bench) engineRows() {
	o := b.o
	x, y := pair(o.runs, b.env, []string{b.bin, "check", "--config", b.fifty}, b.checkOne())
	b.row("check, 50 demo servers vs 1", x, y, 2)
	b.miss(censusBench(b.bareClient(), cmp.Or(headlessAbs(o.headless), b.bin), b.dir, b.env, o.runs, o.idleFor))

	inspector := filepath.Join(o.servers, ".bin", "mcp-inspector")
	if b.everything != "" && exists(inspector) {
		ev := writeConfig(b.dir, "everything.toml", fmt.Sprintf("[servers.everything]\ncommand = \"node\"\nargs = [%q, \"stdio\"]\n", b.everything))
		n := max(o.runs/3, 3)
		x, y = pair(n, b.env, []string{b.bin, "check", "--config", ev},
			[]string{inspector, "--cli", "node", b.everything, "stdio", "--method", "tools/list"})
		b.row("check server-everything vs MCP Inspector CLI tools/list", x, y, 0)
	} else {
		fmt.Println("| check server-everything vs MCP Inspector CLI | – | – | – | skipped: `make test` installs the npm servers |")
	}

	wire, sdk := floodBench(b.self, o.runs)
	t := "≥ 100k/s within one core"
	if wire.perSec < 100e3 || wire.cpu > 1 {
		t += " **missed**"
		b.failed = true
	}
	fmt.Printf("| small notifications through the stdio wire vs a bare go-sdk IOTransport, same server | %.0fk/s at %.0f%% CPU | %.1fk/s at %.0f%% CPU | %.0fx | %s |\n",
		wire.perSec/1e3, wire.cpu*100, sdk.perSec/1e3, sdk.cpu*100, wire.perSec/sdk.perSec, t)

	b.miss(gatewayBench(b.bin, b.everything, b.dir, b.env, o.gatewayCalls))
	b.miss(aggregateBench(b.bin, b.dir, b.env, o.gatewayCalls))
	b.miss(searchBench())
	exposureBench(b.bin, o.servers, b.dir, b.env)
}

func demoServers(bin string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "[servers.demo%d]\ncommand = %q\nargs = [\"serve-demo\"]\n\n", i+1, bin)
	}
	return b.String()
}

func writeConfig(dir, name, text string) string {
	p := filepath.Join(dir, name)
	check(os.WriteFile(p, []byte(text), 0o600))
	return p
}

// pair times two commands n times each, alternating, and returns their
// medians. A failing run is fatal: a ratio of broken runs means nothing.
func pair(n int, env []string, a, b []string) (time.Duration, time.Duration) {
	var ta, tb []time.Duration
	for range n {
		ta = append(ta, timeRun(env, a))
		tb = append(tb, timeRun(env, b))
	}
	return median(ta), median(tb)
}

func timeRun(env []string, argv []string) time.Duration {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %s: %v\n%s", strings.Join(argv, " "), err, out.String())
		os.Exit(2)
	}
	return time.Since(start)
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
}

func machine() string {
	out, _ := exec.Command("nproc").Output()
	load, _ := os.ReadFile("/proc/loadavg")
	return strings.TrimSpace(string(out)) + " cores, load " + strings.Join(strings.Fields(string(load))[:min(3, len(strings.Fields(string(load))))], " ")
}

// headlessAbs is the headless build's absolute path, "" when none is given.
func headlessAbs(p string) string {
	if p == "" {
		return ""
	}
	abs, err := filepath.Abs(p)
	check(err)
	return abs
}

// guiBench measures how long the GUI takes to put its tray menu on the
// session bus with 1 and with 50 servers, and its RSS with 20 servers after
// rssWait.
func guiBench(bin, dir string, env []string, rssWait time.Duration) {
	if os.Getenv("DISPLAY") == "" || os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		fmt.Println("| GUI | – | – | – | skipped: needs DISPLAY and a D-Bus session (run under xvfb-run and dbus-run-session) |")
		return
	}
	trayTime := func(servers int) time.Duration {
		cfg := writeConfig(dir, fmt.Sprintf("gui%d.toml", servers), demoServers(bin, servers))
		var ds []time.Duration
		for range 3 {
			cmd := exec.Command(bin, "gui", "--hide", "--config", cfg)
			cmd.Env = env
			start := time.Now()
			check(cmd.Start())
			for !trayUp(cmd.Process.Pid) {
				if time.Since(start) > 30*time.Second {
					fmt.Fprintln(os.Stderr, "bench: the tray never appeared")
					os.Exit(2)
				}
				time.Sleep(5 * time.Millisecond)
			}
			ds = append(ds, time.Since(start))
			stopGUI(cmd)
		}
		return median(ds)
	}
	t1, t50 := trayTime(1), trayTime(50)
	fmt.Printf("| GUI start to tray menu on D-Bus, 50 servers vs 1 | %s | %s | %.2fx | reported |\n", ms(t50), ms(t1), float64(t50)/float64(t1))

	cfg := writeConfig(dir, "gui20.toml", "[settings]\nprobe_interval = \"5s\"\n\n"+demoServers(bin, 20))
	cmd := exec.Command(bin, "gui", "--config", cfg)
	cmd.Env = env
	check(cmd.Start())
	time.Sleep(rssWait)
	rss := rssKB(cmd.Process.Pid)
	stopGUI(cmd)
	fmt.Printf("| GUI RSS, 20 demo servers, window open, probes every 5 s, after %s | %d MB | – | – | reported |\n", rssWait, rss/1024)
}

func trayUp(pid int) bool {
	return exec.Command("gdbus", "call", "--session", "-d", fmt.Sprintf("org.kde.StatusNotifierItem-%d-1", pid),
		"-o", "/StatusNotifierMenu", "-m", "com.canonical.dbusmenu.GetLayout", "--", "0", "-1", "[]").Run() == nil
}

func stopGUI(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

func rssKB(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			f := strings.Fields(line)
			if len(f) >= 2 {
				n, _ := strconv.Atoi(f[1])
				return n
			}
		}
	}
	return 0
}
