//go:build unix

// Unix only: these run the built mcptray and its daemon as daemonEnv
// (daemon_test.go) does, ending processes with signals and finding the
// daemon by its Unix socket; the Windows daemon's named pipe and Job
// Objects are tested in control and supervisor.

package cli

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The conformance suite's server scenarios against the go-sdk's reference
// server made modern-only (initialize refused), supervised over stdio,
// through the gateway's URL. Every scenario passes as it does against the
// reference server's own HTTP mode, except those whose tools ask the
// client with requests of the initialize era (ServerSession.CreateMessage,
// Elicit): the 2026-07-28 revision has no server-to-client requests, and
// the SDK refuses to send them in a session of that revision (the tool
// answers isError "... cannot be sent while serving a request on protocol
// version 2026-07-28: return an InputRequests map instead"), so there is
// nothing for the gateway to relay. Logs sent during a call do reach the
// client: the gateway asks for them with the request's _meta logLevel.
func TestGatewayConformanceModernOnly(t *testing.T) {
	node, suite := conformanceTools(t)
	ref := referenceServer(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	d := newDaemonEnv(t)
	writeFile(t, d.cfg, fmt.Sprintf("[servers.ref]\ncommand = %q\nenv = { MCPTRAY_TEST_SERVER = \"refuse-initialize\", MCPTRAY_TEST_WRAP = %q }\n", exe, ref))
	d.startDaemon()
	d.waitStatus("ref", "ref ready", func(e statusEntry) bool { return e.State == "ready" })
	out, _, _ := d.mcptray("status", "--json")
	if !strings.Contains(out, `"era": "modern"`) {
		t.Fatalf("the wrapped reference server is not modern-only:\n%s", out)
	}

	port := freePort(t)
	own := exec.Command(ref, "-http", fmt.Sprintf("127.0.0.1:%d", port), "-stateless=false")
	own.Stdout, own.Stderr = io.Discard, io.Discard
	if err := own.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { own.Process.Kill(); own.Wait() }()
	waitListening(t, port)

	directPassed, directTotal, directOut := runServerSuite(t, node, suite, fmt.Sprintf("http://127.0.0.1:%d/mcp", port))
	gwPassed, gwTotal, gwOut := runServerSuite(t, node, suite, d.gatewayURL("ref"))
	t.Logf("the server's own HTTP mode: %d/%d; through mcptray's gateway (modern-only stdio upstream): %d/%d", directPassed, directTotal, gwPassed, gwTotal)
	askByRequest := map[string]bool{"tools-call-sampling": true, "tools-call-elicitation": true,
		"elicitation-sep1034-defaults": true, "elicitation-sep1330-enums": true}
	var unexpected []string
	for _, line := range strings.Split(gwOut, "\n") {
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "✗ "); ok {
			if name, _, _ = strings.Cut(name, ":"); !askByRequest[name] {
				unexpected = append(unexpected, name)
			}
		}
	}
	if directPassed != directTotal || len(unexpected) > 0 {
		t.Fatalf("through the gateway %d/%d, direct %d/%d\ngateway run:\n%s\ndirect run:\n%s", gwPassed, gwTotal, directPassed, directTotal, tail(gwOut, 60), tail(directOut, 20))
	}
}
