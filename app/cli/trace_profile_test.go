//go:build unix

package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// `mcptray trace --profile PROFILE` prints what the profile's aggregate
// sessions exchanged, the requests the aggregate answers itself included
// (the handshake, tools/list), secrets masked; an unknown profile is said.
func TestTraceProfile(t *testing.T) {
	d := newDaemonEnv(t)
	writeFile(t, d.cfg, fmt.Sprintf(`[servers.demo]
command = %[1]q
args = ["serve-demo"]
env = { DEMO_TOKEN = "tok-trace-5150" }

[profiles.solo]
servers = ["demo"]
`, d.bin))
	d.startDaemon()
	d.waitStatus("demo", "demo ready", func(e statusEntry) bool { return e.State == "ready" })
	cs := d.connectArgs("trace-client", "--config", d.cfg, "--profile", "solo")
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := d.mcptray("trace", "--profile", "solo")
	if code != 0 {
		t.Fatalf("trace --profile solo: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"initialize", "tools/list", "Adds two numbers", "trace-client"} {
		if !strings.Contains(out, want) {
			t.Errorf("the profile's trace lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "tok-trace-5150") {
		t.Errorf("a secret in the trace:\n%s", out)
	}
	if _, errOut, code := d.mcptray("trace", "--profile", "sloo"); code == 0 || !strings.Contains(errOut, `no profile named "sloo"`) {
		t.Errorf("unknown profile: exit %d: %s", code, errOut)
	}
	if _, errOut, code := d.mcptray("trace", "--profile", "solo", "demo"); code != 2 || !strings.Contains(errOut, "--profile takes no server NAME") {
		t.Errorf("--profile with a NAME: exit %d: %s", code, errOut)
	}
}
