//go:build unix

// Unix only: server-everything runs in a process group of its own
// (Setpgid), killed as one with its children; and Wine, which runs the
// Windows tests here, runs no Node.js.

package cli

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// runCall runs `mcptray ARGS...` in dir and returns its exit code, stdout
// and stderr.
func runCall(t *testing.T, bin, dir string, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(append(append(os.Environ(), homeEnv(t.TempDir())...), "MCPTRAY_KEYRING=file"), env...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stdout.String(), stderr.String()
}

// startEverythingHTTP runs server-everything's Streamable HTTP transport
// and returns its endpoint.
func startEverythingHTTP(t *testing.T, everything string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command("node", everything, "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	// It says so on stderr once it listens.
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if strings.Contains(sc.Text(), fmt.Sprint(port)) {
			go func() {
				for sc.Scan() {
				}
			}()
			return fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
		}
	}
	t.Fatalf("server-everything (HTTP) ended before listening: %v", sc.Err())
	return ""
}

// TestCallEverything calls every tool of server-everything, over stdio and
// Streamable HTTP, with valid arguments, as a person would from a terminal.
func TestCallEverything(t *testing.T) {
	bin := mcptrayBinary(t)
	everything := testServers(t)
	dir := t.TempDir()
	sampler := filepath.Join(dir, "sampler.sh")
	writeFile(t, sampler, "#!/bin/sh\ncat >/dev/null\necho 'a sampled reply'\n")
	os.Chmod(sampler, 0o755)
	opened := filepath.Join(dir, "opened")
	browser := filepath.Join(dir, "browser.sh")
	writeFile(t, browser, fmt.Sprintf("#!/bin/sh\necho \"$1\" >> %s\n", opened))
	os.Chmod(browser, 0o755)
	httpURL := startEverythingHTTP(t, everything)

	tests := []struct {
		tool  string
		args  []string
		want  []string // in stdout
		files int      // files saved
	}{
		{"echo", []string{"-json-args", `{"message":"héllo"}`}, []string{"Echo: héllo"}, 0},
		{"get-annotated-message", []string{"--arg", "messageType=success", "--arg", "includeImage=true"}, []string{"Operation completed successfully", "[image image/png"}, 1},
		{"get-env", nil, []string{`"PATH"`}, 0},
		{"get-resource-links", []string{"--arg", "count=2"}, []string{"[resource link demo://resource/dynamic/"}, 0},
		{"get-resource-reference", []string{"--arg", "resourceType=Blob", "--arg", "resourceId=2"}, []string{"[resource demo://resource/dynamic/blob/2"}, 1},
		{"get-structured-content", []string{"--arg", "location=Chicago"}, []string{`"temperature"`}, 0},
		{"get-sum", []string{"-json-args", `{"a":2,"b":3}`}, []string{"The sum of 2 and 3 is 5."}, 0},
		{"get-tiny-image", nil, []string{"[image image/png, 4033 bytes: saved to get-tiny-image-1.png]"}, 1},
		{"gzip-file-as-resource", []string{"--arg", "data=data:text/plain;base64,aGVsbG8=", "--arg", "outputType=resource"}, []string{"[resource "}, 1},
		{"toggle-simulated-logging", nil, []string{"Started simulated"}, 0},
		{"toggle-subscriber-updates", nil, []string{"Started simulated resource update"}, 0},
		{"trigger-long-running-operation", []string{"--arg", "duration=1", "--arg", "steps=2"}, []string{"Long running operation completed. Duration: 1 seconds, Steps: 2."}, 0},
		{"get-roots-list", nil, []string{"file://" + dir}, 0},
		{"trigger-elicitation-request", []string{"--elicit", "decline"}, []string{"declined"}, 0},
		{"trigger-url-elicitation", []string{"--elicit", "accept-defaults", "--arg", "url=https://example.com/consent"}, []string{"User completed the URL elicitation flow"}, 0},
		{"trigger-sampling-request", []string{"--arg", "prompt=hi"}, []string{"a sampled reply"}, 0},
	}
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			for _, tt := range tests {
				t.Run(tt.tool, func(t *testing.T) {
					t.Parallel()
					work := t.TempDir()
					flags, jsonArgs := tt.args, []string(nil)
					if len(flags) == 2 && flags[0] == "-json-args" {
						flags, jsonArgs = nil, flags[1:]
					}
					args := append([]string{"call", "--timeout", "60s", "--root", dir, "--sampling", sampler}, flags...)
					if transport == "http" {
						args = append(append(args, httpURL, tt.tool), jsonArgs...)
					} else {
						args = append(append(append(args, tt.tool), jsonArgs...), "--", "node", everything, "stdio")
					}
					code, out, errOut := runCall(t, bin, work, []string{"BROWSER=" + browser}, args...)
					if code != 0 {
						t.Fatalf("mcptray %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
					}
					for _, w := range tt.want {
						if !strings.Contains(out, w) {
							t.Errorf("output lacks %q:\n%s%s", w, out, errOut)
						}
					}
					saved, _ := os.ReadDir(work)
					if len(saved) != tt.files {
						t.Errorf("%d files saved, want %d:\n%s", len(saved), tt.files, out)
					}
				})
			}
		})
	}
	if b, _ := os.ReadFile(opened); !strings.Contains(string(b), "https://example.com/consent") {
		t.Errorf("the URL elicitation did not open the browser: %q", b)
	}
}

// TestCallUsageErrors: an unknown tool names the nearest, arguments that
// do not fit the schema say which field and why, and nothing is sent.
func TestCallUsageErrors(t *testing.T) {
	bin := mcptrayBinary(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"ad", `{}`}, `no tool named "ad"; did you mean add?`},
		{[]string{"add", "--arg", "a=two", "--arg", "b=1"}, `argument a: "two" is not a number`},
		{[]string{"add", `{"a":1}`}, `argument b: is required`},
		{[]string{"add", `{"a":1,"b":"x"}`}, `argument b: must be number, not the string "x"`},
		{[]string{"add", `[1,2]`}, `must be an object`},
	} {
		args := append(append([]string{"call"}, tt.args...), "--", bin, "serve-demo")
		code, out, errOut := runCall(t, bin, t.TempDir(), nil, args...)
		if code != 2 || !strings.Contains(errOut, tt.want) {
			t.Errorf("mcptray %s: exit %d, want 2 and %q\n%s%s", strings.Join(tt.args, " "), code, tt.want, out, errOut)
		}
	}
	code, out, errOut := runCall(t, bin, t.TempDir(), nil, "call", "add", "--arg", "a=2", "--arg", "b=40.5", "--", bin, "serve-demo")
	if code != 0 || strings.TrimSpace(out) != `{"sum":42.5}` {
		t.Errorf("add 2 40.5: exit %d, %q %s", code, out, errOut)
	}
}

// TestCallInterrupt: Ctrl-C during a long call sends the server
// notifications/cancelled before mcptray stops it.
func TestCallInterrupt(t *testing.T) {
	bin := mcptrayBinary(t)
	everything := testServers(t)
	dir := t.TempDir()
	log := filepath.Join(dir, "stdin.log")
	// tee shows what reached the server's stdin.
	cmd := exec.Command(bin, "call", "--arg", "duration=60", "--arg", "steps=60", "trigger-long-running-operation",
		"--", "sh", "-c", `tee "$0" | node "$1" stdio`, log, everything)
	cmd.Env = append(os.Environ(), homeEnv(dir)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout strings.Builder
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if strings.HasPrefix(sc.Text(), "progress: ") {
			break
		}
	}
	if len(lines) == 0 || !strings.HasPrefix(lines[len(lines)-1], "progress: [") {
		cmd.Process.Kill()
		t.Fatalf("no progress line before the end of stderr:\n%s", strings.Join(lines, "\n"))
	}
	cmd.Process.Signal(os.Interrupt)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	err = cmd.Wait()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 {
		t.Errorf("exit %v, want 1", err)
	}
	all := strings.Join(lines, "\n")
	if !strings.Contains(all, "the server was sent notifications/cancelled") {
		t.Errorf("stderr does not say the call was cancelled:\n%s", all)
	}
	b, _ := os.ReadFile(log)
	if !strings.Contains(string(b), `"method":"notifications/cancelled"`) {
		t.Errorf("notifications/cancelled did not reach the server; its stdin:\n%s", b)
	}
}

// TestReadPromptComplete reads a text and a binary resource, gets a
// prompt (and refuses one missing its required argument before sending)
// and completes a prompt argument, from server-everything.
func TestReadPromptComplete(t *testing.T) {
	bin := mcptrayBinary(t)
	everything := testServers(t)
	srv := []string{"--", "node", everything, "stdio"}
	work := t.TempDir()
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"read", "demo://resource/dynamic/text/1"}, 0, "Resource 1: This is a plaintext resource"},
		{[]string{"read", "demo://resource/dynamic/blob/1"}, 0, "saved to 1-1.txt"},
		{[]string{"prompt", "args-prompt", "--arg", "city=Paris"}, 0, "What's weather in Paris?"},
		{[]string{"prompt", "args-prompt"}, 2, "argument city: is required"},
		{[]string{"prompt", "args-promt"}, 2, "did you mean args-prompt?"},
		{[]string{"complete", "--prompt", "completable-prompt", "department", "E"}, 0, "Engineering"},
	} {
		code, out, errOut := runCall(t, bin, work, nil, append(tt.args, srv...)...)
		if code != tt.code || !strings.Contains(out+errOut, tt.want) {
			t.Errorf("mcptray %s: exit %d, want %d and %q\n%s%s", strings.Join(tt.args, " "), code, tt.code, tt.want, out, errOut)
		}
	}
}
