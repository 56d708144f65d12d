//go:build linux

package cli

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// onTerminal runs mcptray ARGS on a pseudo-terminal (util-linux script(1)
// gives the command one), as a person at a terminal would: answer writes
// a line once the output shows what it waits for.
type onTerminal struct {
	t    *testing.T
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *syncBuffer
	done chan error
}

func runOnTerminal(t *testing.T, dir string, env []string, args ...string) *onTerminal {
	t.Helper()
	if _, err := exec.LookPath("script"); err != nil {
		t.Fatalf("script(1) (util-linux) runs the command on a terminal: %v", err)
	}
	line := []string{mcptrayBinary(t)}
	for _, a := range args {
		line = append(line, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	cmd := exec.Command("script", "-qfec", strings.Join(line, " "), "/dev/null")
	cmd.Dir, cmd.Env = dir, env
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	o := &onTerminal{t: t, cmd: cmd, in: in, out: &syncBuffer{}, done: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = o.out, o.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { o.done <- cmd.Wait() }()
	t.Cleanup(func() {
		in.Close()
		select {
		case <-o.done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
	})
	return o
}

// waitFor waits until the output holds want (the command's own output:
// an event, not a sleep), failing after a minute.
func (o *onTerminal) waitFor(want string) {
	o.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(o.out.String(), want) {
		select {
		case err := <-o.done:
			o.done <- err
			if !strings.Contains(o.out.String(), want) {
				o.t.Fatalf("the command ended (%v) without saying %q:\n%s", err, want, o.out.String())
			}
			return
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			o.t.Fatalf("no %q within a minute:\n%s", want, o.out.String())
		}
	}
}

func (o *onTerminal) answer(prompt, line string) {
	o.t.Helper()
	o.waitFor(prompt)
	if _, err := io.WriteString(o.in, line+"\r"); err != nil {
		o.t.Fatal(err)
	}
}

func (o *onTerminal) wait() (string, error) {
	o.t.Helper()
	select {
	case err := <-o.done:
		o.done <- err
		return o.out.String(), err
	case <-time.After(2 * time.Minute):
		o.t.Fatalf("the command did not end:\n%s", o.out.String())
	}
	return "", nil
}

// `mcptray add FILE.mcpb` on a terminal asks for the bundle's values: the
// plain one with its default shown and echoed, the sensitive one without
// echo (it is in no output), kept in the keyring; then `mcptray remove`
// offers to delete the unpacked folder, and deletes it on "y"; without a
// terminal the folder is kept, and said.
func TestAddAndRemoveOnATerminal(t *testing.T) {
	file := packEcho(t)
	cfg := filepath.Join(t.TempDir(), "servers.toml")
	env := addEnv(t)
	dir := t.TempDir()
	data := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "XDG_DATA_HOME="); ok {
			data = v
		}
	}
	folder := filepath.Join(data, "mcptray", "bundles", "mcptray-echo", "1.0.0")

	add := runOnTerminal(t, dir, env, "add", "--config", cfg, file)
	add.answer("api_key (API key: Proves a sensitive value reaches the server), not shown: ", "sk-typed-on-tty-42")
	out, err := add.wait()
	if err != nil || !strings.Contains(out, "ready") {
		t.Fatalf("add on a terminal: %v\n%s", err, out)
	}
	if strings.Contains(out, "sk-typed-on-tty-42") {
		t.Errorf("the sensitive value was echoed:\n%s", out)
	}
	text, _ := os.ReadFile(cfg)
	if strings.Contains(string(text), "sk-typed-on-tty-42") || !strings.Contains(string(text), `${keyring:mcptray-echo.api_key}`) {
		t.Errorf("servers.toml:\n%s", text)
	}
	res, err := runMcptray(t, dir, env, "", "call", "--config", cfg, "mcptray-echo", "echo", `{"message":"typed"}`)
	if err != nil || !strings.Contains(res, "hello: typed (key set)") {
		t.Fatalf("call echo: %v\n%s", err, res)
	}

	// A folder another server runs from is not offered.
	res, err = runMcptray(t, dir, env, "", "add", "--config", cfg, "--no-check", "--name", "echo2", "--set", "api_key=k2", file)
	if err != nil {
		t.Fatalf("second add: %v\n%s", err, res)
	}
	res, err = runMcptray(t, dir, env, "", "remove", "--config", cfg, "--delete-files", "echo2")
	if err != nil || !strings.Contains(res, "removed echo2 from "+cfg) || strings.Contains(res, "deleted") {
		t.Fatalf("remove echo2: %v\n%s", err, res)
	}
	if _, err := os.Stat(folder); err != nil {
		t.Fatalf("the folder mcptray-echo still runs from is gone: %v", err)
	}

	rm := runOnTerminal(t, dir, env, "remove", "--config", cfg, "mcptray-echo")
	rm.answer("mcptray-echo was added from the MCP bundle mcptray-echo@1.0.0: delete its unpacked folder "+folder+" too? [y/N] ", "y")
	out, err = rm.wait()
	if err != nil || !strings.Contains(out, "deleted "+folder) {
		t.Fatalf("remove on a terminal: %v\n%s", err, out)
	}
	if _, err := os.Stat(folder); !os.IsNotExist(err) {
		t.Errorf("the unpacked folder is still there: %v", err)
	}
	if text, _ := os.ReadFile(cfg); strings.Contains(string(text), "mcptray-echo") {
		t.Errorf("servers.toml still holds the server:\n%s", text)
	}

	// No terminal and no flag: the folder stays, and the note says where.
	if res, err = runMcptray(t, dir, env, "", "add", "--config", cfg, "--no-check", "--set", "api_key=k3", file); err != nil {
		t.Fatalf("third add: %v\n%s", err, res)
	}
	res, err = runMcptray(t, dir, env, "", "remove", "--config", cfg, "mcptray-echo")
	if err != nil || !strings.Contains(res, "note: kept "+folder+", the unpacked bundle mcptray-echo@1.0.0 of mcptray-echo") {
		t.Fatalf("remove without a terminal: %v\n%s", err, res)
	}
	if _, err := os.Stat(folder); err != nil {
		t.Errorf("the folder was deleted without asking: %v", err)
	}
	if _, err := runMcptray(t, dir, env, "", "remove", "--config", cfg, "nope"); err == nil {
		t.Errorf("removing an unknown server succeeded")
	}
}
