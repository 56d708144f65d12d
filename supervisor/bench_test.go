//go:build unix

package supervisor

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"mcptray/registry"
)

var (
	benchIdle  = flag.Duration("bench.idle", 60*time.Second, "how long BenchmarkIdleServers measures")
	benchFlood = flag.Duration("bench.flood", 10*time.Second, "how long BenchmarkStderrFlood floods")
)

// cpuTime is this process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rssMB reads this process's resident set size from /proc (Linux).
func rssMB() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return float64(kb) / 1024
		}
	}
	return 0
}

// BenchmarkIdleServers supervises 100 idle demo servers and reports
// mcptray's own RSS and CPU over -bench.idle (60 s by default).
func BenchmarkIdleServers(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "mcptray")
	build := exec.Command("go", "build", "-tags", "nogui", "-o", bin, "mcptray")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		b.Fatalf("go build: %v", err)
	}
	for b.Loop() {
		var servers []*registry.Server
		for i := range 100 {
			servers = append(servers, &registry.Server{Name: fmt.Sprintf("demo%03d", i), Command: bin, Args: []string{"serve-demo"}, Autostart: true})
		}
		opts := testOptions(b)
		opts.NoLogFiles = false
		s := New(servers, opts)
		stop := runSup(b, s)
		for _, srv := range servers {
			waitState(b, s, srv.Name, "running", inState(StateRunning))
		}
		time.Sleep(time.Second) // let the demo servers settle
		cpu0, t0 := cpuTime(), time.Now()
		peak := 0.0
		for time.Since(t0) < *benchIdle {
			time.Sleep(time.Second)
			peak = max(peak, rssMB())
		}
		cpu := cpuTime() - cpu0
		wall := time.Since(t0)
		b.ReportMetric(peak, "peak-rss-MB")
		b.ReportMetric(100*cpu.Seconds()/wall.Seconds(), "cpu-%")
		b.ReportMetric(wall.Seconds(), "measured-s")
		for _, st := range s.Snapshot().Servers {
			if st.State != StateRunning || st.Restarts != 0 {
				b.Errorf("%s: %s, %d restarts", st.Name, st.State, st.Restarts)
			}
		}
		stop()
	}
}

// respawnRecorder collects, at every "running" transition, the time from the
// previous process's exit to the new process's start.
type respawnRecorder struct {
	s    *Supervisor
	mu   sync.Mutex
	gaps []time.Duration
}

func (r *respawnRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *respawnRecorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *respawnRecorder) WithGroup(string) slog.Handler            { return r }
func (r *respawnRecorder) Handle(_ context.Context, rec slog.Record) error {
	running := false
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key == "state" && a.Value.String() == string(StateRunning) {
			running = true
		}
		return true
	})
	if !running || r.s == nil {
		return nil
	}
	st := r.s.Snapshot().Server("crashy")
	if st == nil || st.LastExit == nil || st.StartedAt.IsZero() {
		return nil
	}
	r.mu.Lock()
	r.gaps = append(r.gaps, st.StartedAt.Sub(st.LastExit.Time))
	r.mu.Unlock()
	return nil
}

// BenchmarkCrashRespawn measures the supervisor's overhead from a crash to
// the respawned process (restart = always, no backoff): ns/op is the mean
// time from the exit to the new process's start.
func BenchmarkCrashRespawn(b *testing.B) {
	rec := &respawnRecorder{}
	opts := testOptions(b)
	opts.BackoffBase = -1
	opts.CrashLoopCount = 1 << 30
	opts.Logger = slog.New(rec)
	srv := childServer(b, "crashy", "exit0")
	srv.Restart = registry.RestartAlways
	s := New([]*registry.Server{srv}, opts)
	rec.s = s
	b.ResetTimer()
	stop := runSup(b, s)
	for {
		rec.mu.Lock()
		n := len(rec.gaps)
		rec.mu.Unlock()
		if n >= b.N {
			break
		}
		time.Sleep(time.Millisecond)
	}
	stop()
	b.StopTimer()
	rec.mu.Lock()
	gaps := slices.Clone(rec.gaps[:b.N])
	rec.mu.Unlock()
	slices.Sort(gaps)
	var sum time.Duration
	for _, g := range gaps {
		sum += g
	}
	b.ReportMetric(float64(sum.Nanoseconds())/float64(len(gaps)), "ns/op")
	b.ReportMetric(float64(gaps[len(gaps)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(gaps[(len(gaps)*95)/100].Microseconds())/1000, "p95-ms")
	b.ReportMetric(float64(gaps[len(gaps)-1].Microseconds())/1000, "max-ms")
}

// BenchmarkStderrFlood has a child write 20 MB/s to stderr for -bench.flood
// (10 s by default) and reports the ring's size, mcptray's peak RSS and CPU.
func BenchmarkStderrFlood(b *testing.B) {
	for b.Loop() {
		opts := testOptions(b)
		opts.NoLogFiles = false
		srv := childServer(b, "flood", "stderr-flood", "SUPERVISOR_TEST_RATE=20000000")
		s := New([]*registry.Server{srv}, opts)
		stop := runSup(b, s)
		waitState(b, s, "flood", "running", inState(StateRunning))
		cpu0, t0 := cpuTime(), time.Now()
		peak := 0.0
		for time.Since(t0) < *benchFlood {
			time.Sleep(100 * time.Millisecond)
			peak = max(peak, rssMB())
		}
		cpu := cpuTime() - cpu0
		wall := time.Since(t0)
		u := s.unit("flood")
		lines, bytes := u.ring.stats()
		seq := u.ring.total()
		stop()
		if int64(lines) > 10000 || bytes > 2<<20 {
			b.Errorf("ring holds %d lines, %d bytes: over its cap", lines, bytes)
		}
		b.ReportMetric(float64(seq*109)/wall.Seconds()/1e6, "stderr-MB/s")
		b.ReportMetric(float64(lines), "ring-lines")
		b.ReportMetric(float64(bytes)/(1<<20), "ring-MiB")
		b.ReportMetric(peak, "peak-rss-MB")
		b.ReportMetric(100*cpu.Seconds()/wall.Seconds(), "cpu-%")
	}
}
