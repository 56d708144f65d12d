//go:build unix

package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/healthcheck"
	"mcptray/registry"
)

// floodBatch is how many notifications the flood server writes before it
// answers each ping.
const floodBatch = 10000

// floodServer is a minimal legacy stdio server (the bench re-executed with
// -flood): it answers initialize, and answers each ping after floodBatch
// small notifications/message, written as fast as the pipe takes them.
func floodServer() int {
	w := bufio.NewWriterSize(os.Stdout, 64<<10)
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(sc.Bytes(), &req) != nil || len(req.ID) == 0 {
			continue
		}
		switch req.Method {
		case "initialize":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"logging":{}},"serverInfo":{"name":"flood","version":"1"}}}`+"\n", req.ID)
		case "ping":
			for i := range floodBatch {
				w.WriteString(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"n` + strconv.Itoa(i) + `"}}` + "\n")
			}
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`+"\n", req.ID)
		default:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`+"\n", req.ID)
		}
		if w.Flush() != nil {
			return 0
		}
	}
	return 0
}

// floodRate is the throughput of one client side over a flood server
// process: notifications per second, and the CPU this process spent on
// them as a share of one core.
type floodRate struct {
	perSec float64
	cpu    float64
}

// measureFlood starts the flood server, connects with connect, and pings
// rounds times; each ping's reply comes after floodBatch notifications.
func measureFlood(self string, rounds int, connect func(stdin io.WriteCloser, stdout io.ReadCloser) (ping func() error, closeFn func())) floodRate {
	cmd := exec.Command(self, "-flood")
	stdin, err := cmd.StdinPipe()
	check(err)
	stdout, err := cmd.StdoutPipe()
	check(err)
	cmd.Stderr = os.Stderr
	check(cmd.Start())
	ping, closeFn := connect(stdin, stdout)
	check(ping()) // warm up
	cpu0, start := cpuTime(), time.Now()
	for range rounds {
		check(ping())
	}
	wall, cpu := time.Since(start), cpuTime()-cpu0
	closeFn()
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	return floodRate{perSec: float64(rounds*floodBatch) / wall.Seconds(), cpu: float64(cpu) / float64(wall)}
}

// cpuTime is the user and system CPU this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	check(syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// floodBench compares mcptray's stdio wire (healthcheck, as `check`, `up`
// and the daemon use it) with a bare go-sdk IOTransport on the same server.
func floodBench(self string, runs int) (mcptray, bare floodRate) {
	ctx := context.Background()
	wire := func(stdin io.WriteCloser, stdout io.ReadCloser) (func() error, func()) {
		s, err := healthcheck.Connect(ctx, healthcheck.Target{
			Server: &registry.Server{Name: "flood", Command: self},
			Stdin:  stdin, Stdout: stdout, EraHint: healthcheck.EraLegacy,
		}, nil)
		check(err)
		return func() error { _, err := s.Probe(ctx); return err }, func() { s.Close() }
	}
	sdk := func(stdin io.WriteCloser, stdout io.ReadCloser) (func() error, func()) {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx,
			&mcp.IOTransport{Reader: stdout, Writer: stdin}, &mcp.ClientSessionOptions{ProtocolVersion: healthcheck.LatestLegacyVersion})
		check(err)
		return func() error { return cs.Ping(ctx, nil) }, func() { cs.Close() }
	}
	// The bare SDK is slow at this: fewer rounds keep the run short.
	var ms, bs []floodRate
	for range max(runs/5, 3) {
		ms = append(ms, measureFlood(self, 20, wire))
		bs = append(bs, measureFlood(self, 1, sdk))
	}
	return medianRate(ms), medianRate(bs)
}

func medianRate(rs []floodRate) floodRate {
	s := slices.Clone(rs)
	slices.SortFunc(s, func(a, b floodRate) int { return cmp.Compare(a.perSec, b.perSec) })
	return s[len(s)/2]
}
