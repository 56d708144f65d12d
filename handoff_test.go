package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// runBin runs bin with args and returns its streams and exit code.
func runBin(t *testing.T, bin string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %v: %v", bin, args, err)
	}
	return out.String(), errb.String(), code
}

// copyTo copies the file src to dir/name, executable.
func copyTo(t *testing.T, src, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name+filepath.Ext(src))
	if err := os.WriteFile(p, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDesktopHandsCommandsToHeadless: beside a headless build of its
// version (as the packages install them), the desktop build runs a command
// in it: same output, same exit code; on Linux the very process becomes the
// headless build (exec). Beside another version, or a file that is not the
// headless build, it runs the command itself and says why, once; with no
// headless build beside it, it runs the command itself without a word.
func TestDesktopHandsCommandsToHeadless(t *testing.T) {
	desktop, headless := builds(t) // one folder, the same (unstamped) version

	out, errs, code := runBin(t, desktop, nil, "version", "--json")
	if code != 0 || !strings.Contains(out, `"build": "headless"`) || errs != "" {
		t.Errorf("version --json beside the headless build: exit %d, %s\n%s", code, errs, out)
	}
	// A failing command: the same streams and exit code as the headless
	// build's own.
	args := []string{"config", "validate", "--config", filepath.Join(t.TempDir(), "missing.toml")}
	wantOut, wantErr, wantCode := runBin(t, headless, nil, args...)
	out, errs, code = runBin(t, desktop, nil, args...)
	if wantCode == 0 || code != wantCode || out != wantOut || errs != wantErr {
		t.Errorf("config validate of a missing file: desktop exit %d\n%s%s\nheadless exit %d\n%s%s", code, out, errs, wantCode, wantOut, wantErr)
	}
	out, _, _ = runBin(t, desktop, []string{"MCPTRAY_NO_HANDOFF=1"}, "version", "--json")
	if !strings.Contains(out, `"build": "desktop"`) {
		t.Errorf("MCPTRAY_NO_HANDOFF=1: %s", out)
	}

	if runtime.GOOS == "linux" {
		// serve-demo runs until its stdin closes: long enough to look at
		// what the process is.
		cmd := exec.Command(desktop, "serve-demo")
		stdin, _ := cmd.StdinPipe()
		stderr, _ := cmd.StderrPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, _ := bufio.NewReader(stderr).ReadString('\n')
		exe, err := os.Readlink("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/exe")
		stdin.Close()
		cmd.Wait()
		if err != nil || exe != headless || !strings.Contains(line, "ready on stdio") {
			t.Errorf("serve-demo through the desktop build: pid %d runs %q (%v), said %q; want the headless build in the same process", cmd.Process.Pid, exe, err, line)
		}
	}

	t.Run("another version", func(t *testing.T) {
		dir := t.TempDir()
		d := copyTo(t, desktop, dir, "mcptray")
		build := exec.Command("go", "build", "-tags", "nogui", "-ldflags", "-X mcptray/app.Version=9.9.9", "-o", filepath.Join(dir, "mcptray-headless"+filepath.Ext(desktop)), ".")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if b, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, b)
		}
		out, errs, code := runBin(t, d, nil, "version", "--json")
		if code != 0 || !strings.Contains(out, `"build": "desktop"`) {
			t.Errorf("version --json: exit %d\n%s", code, out)
		}
		if strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "not handing this command to") || !strings.Contains(errs, "it is version 9.9.9, this binary an unversioned build") {
			t.Errorf("stderr should say why, once:\n%s", errs)
		}
	})
	t.Run("not the headless build", func(t *testing.T) {
		dir := t.TempDir()
		d := copyTo(t, desktop, dir, "mcptray")
		copyTo(t, desktop, dir, "mcptray-headless")
		out, errs, code := runBin(t, d, nil, "version", "--json")
		if code != 0 || !strings.Contains(out, `"build": "desktop"`) || !strings.Contains(errs, "it is not the headless build (-tags nogui)") {
			t.Errorf("exit %d\n%s%s", code, out, errs)
		}
	})
	t.Run("alone", func(t *testing.T) {
		d := copyTo(t, desktop, t.TempDir(), "mcptray")
		out, errs, code := runBin(t, d, nil, "version", "--json")
		if code != 0 || !strings.Contains(out, `"build": "desktop"`) || errs != "" {
			t.Errorf("exit %d\n%s%s", code, out, errs)
		}
	})
}
