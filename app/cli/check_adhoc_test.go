package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/demo"
)

// checkJSON runs `mcptray check --json ARGS...` and returns its reports and
// exit code.
func checkJSON(t *testing.T, bin string, args ...string) ([]serverReport, int, string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"check", "--json", "--timeout", "20s"}, args...)...)
	cmd.Env = append(cmd.Environ(), homeEnv(t.TempDir())...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	var reps []serverReport
	if code != 2 {
		if err := json.Unmarshal(out, &reps); err != nil {
			t.Fatalf("check --json %v: %v\n%s%s", args, err, out, stderr.String())
		}
	}
	return reps, code, string(out) + stderr.String()
}

// TestCheckAdHoc checks servers that are not in any config: a command after
// --, a Streamable HTTP URL that needs a header, an old SSE URL.
func TestCheckAdHoc(t *testing.T) {
	bin := mcptrayBinary(t)

	t.Run("command", func(t *testing.T) {
		reps, code, out := checkJSON(t, bin, "--", bin, "serve-demo")
		if code != 0 || len(reps) != 1 || reps[0].Name != "mcptray" || reps[0].Status != "ready" || reps[0].Transport != "stdio" || len(reps[0].Tools) != 3 {
			t.Errorf("check -- mcptray serve-demo: exit %d\n%s", code, out)
		}
		// --env reaches the server: it starts only when it sees both.
		t.Run("env", func(t *testing.T) {
			if runtime.GOOS == "windows" {
				t.Skip("the server is an sh script that tests its environment")
			}
			script := `test "$A" = "one" && test "$B" = "two=2" && exec "$0" serve-demo; echo "A=$A B=$B" >&2; exit 1`
			reps, code, out := checkJSON(t, bin, "--env", "A=one", "--env=B=two=2", "--", "sh", "-c", script, bin)
			if code != 0 || reps[0].Status != "ready" || reps[0].Name != "sh" {
				t.Errorf("check --env: exit %d\n%s", code, out)
			}
		})
		// The table is check's own.
		cmd := exec.Command(bin, "check", "--", bin, "serve-demo", "--versions", "2025-06-18")
		cmd.Env = append(cmd.Environ(), homeEnv(t.TempDir())...)
		table, err := cmd.CombinedOutput()
		if err != nil || !strings.HasPrefix(string(table), "NAME") || !regexpLine(string(table), `^mcptray\s+ready\s+legacy 2025-06-18\s+mcptray-demo`) {
			t.Errorf("check -- table: %v\n%s", err, table)
		}
	})

	t.Run("url with a header", func(t *testing.T) {
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return demo.NewServer("", nil) }, nil)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer s3cret" || r.Header.Get("X-Team") != "a b" {
				http.Error(w, "who are you", http.StatusUnauthorized)
				return
			}
			h.ServeHTTP(w, r)
		}))
		defer srv.Close()
		url := srv.URL + "/mcp"
		reps, code, out := checkJSON(t, bin, "--header", "Authorization: Bearer s3cret", "--header", "X-Team:a b", url)
		if code != 0 || len(reps) != 1 || reps[0].Status != "ready" || reps[0].Transport != "http" || reps[0].Name != strings.TrimPrefix(srv.URL, "http://") {
			t.Errorf("check URL with headers: exit %d\n%s", code, out)
		}
		if strings.Contains(out, "s3cret") {
			t.Errorf("the header's value is in the output:\n%s", out)
		}
		reps, code, out = checkJSON(t, bin, url)
		if code != 1 || reps[0].Status != "failed" || !strings.Contains(out, "401") {
			t.Errorf("check URL without the header: exit %d\n%s", code, out)
		}
	})

	t.Run("sse url", func(t *testing.T) {
		srv := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return demo.NewServer("", nil) }, nil))
		defer srv.Close()
		reps, code, out := checkJSON(t, bin, srv.URL)
		if code != 0 || reps[0].Status != "ready" || reps[0].Era != "legacy" || len(reps[0].Diagnostics) != 1 || reps[0].Diagnostics[0].Code != "deprecated-transport" {
			t.Errorf("check SSE URL: exit %d\n%s", code, out)
		}
	})

	t.Run("usage errors", func(t *testing.T) {
		for args, want := range map[string][]string{
			"no colon":         {"--header", "Bearer s3cret", "http://127.0.0.1:9/mcp"},
			"bad header name":  {"--header", "Bad Name: x", "http://127.0.0.1:9/mcp"},
			"header, command":  {"--header", "A: b", "--", "true"},
			"env, url":         {"--env", "A=b", "http://127.0.0.1:9/mcp"},
			"env without =":    {"--env", "A", "--", "true"},
			"bad env name":     {"--env", "1A=b", "--", "true"},
			"env, names":       {"--env", "A=b", "demo"},
			"names and --":     {"demo", "--", "true"},
			"nothing after --": {"--"},
			"two urls":         {"http://a/mcp", "http://b/mcp"},
			"ftp":              {"ftp://a/mcp"},
		} {
			_, code, out := checkJSON(t, bin, want...)
			flag := ""
			for _, a := range want {
				if strings.HasPrefix(a, "--") && a != "--" {
					flag = a
				}
			}
			if code != 2 || !strings.Contains(out, "Usage: mcptray check") || !strings.Contains(out, flag) || strings.Contains(out, "s3cret") {
				t.Errorf("%s: exit %d, want 2 naming %s\n%s", args, code, flag, out)
			}
		}
	})
}
