package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// builds builds the desktop and the headless binary, once.
func builds(t *testing.T) (desktop, headless string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binaries")
	}
	buildOnce.Do(func() {
		if buildDir, buildErr = os.MkdirTemp("", "mcptray-main-"); buildErr != nil {
			return
		}
		for _, argv := range [][]string{
			{"build", "-o", filepath.Join(buildDir, "mcptray"), "."},
			{"build", "-tags", "nogui", "-o", filepath.Join(buildDir, "mcptray-headless"), "."},
		} {
			cmd := exec.Command("go", argv...)
			if argv[1] == "-tags" {
				cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
			}
			if out, err := cmd.CombinedOutput(); err != nil {
				buildErr = &buildError{argv, err, out}
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(buildDir, "mcptray"), filepath.Join(buildDir, "mcptray-headless")
}

type buildError struct {
	argv []string
	err  error
	out  []byte
}

func (e *buildError) Error() string {
	return "go " + strings.Join(e.argv, " ") + ": " + e.err.Error() + "\n" + string(e.out)
}

// TestDesktopBuildCommandsQuietUnderCLocale: the desktop build links Fyne,
// whose init logs "Fyne error: Error parsing user locale C" under C.UTF-8.
// The demo server a first-run config runs is this binary: its stderr (shown
// in the app's log view) and every other command's must not carry that, and
// the servers it starts must still see the user's locale.
func TestDesktopBuildCommandsQuietUnderCLocale(t *testing.T) {
	desktop, _ := builds(t)
	for _, env := range [][]string{
		{"LANG=C.UTF-8"},
		{"LC_ALL=C.UTF-8", "LANG=de_DE.UTF-8"},
		{"LC_MESSAGES=POSIX.UTF-8"},
	} {
		t.Run(strings.Join(env, ","), func(t *testing.T) {
			// The desktop build's own commands: not handed to the headless
			// build beside it.
			env := append(env, "MCPTRAY_NO_HANDOFF=1")
			cmd := exec.Command(desktop, "serve-demo")
			cmd.Env = append(localeFree(), env...)
			cmd.Stdin = strings.NewReader("")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("serve-demo: %v\n%s", err, stderr.Bytes())
			}
			if got := stderr.String(); got != "mcptray demo server 1.0.0 ready on stdio\n" {
				t.Errorf("serve-demo's stderr:\n%s", got)
			}

			dir := t.TempDir()
			cfg := filepath.Join(dir, "servers.toml")
			os.WriteFile(cfg, []byte(`[servers.l]
command = "sh"
args = ["-c", "echo \"locale=$LC_ALL/$LC_MESSAGES/$LANG\" >&2; exit 3"]
`), 0o600)
			cmd = exec.Command(desktop, "check", "--config", cfg)
			cmd.Env = append(localeFree(), env...)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			cmd.Run() // the server fails on purpose: exit 1
			if strings.Contains(out.String(), "Fyne") {
				t.Errorf("check printed Fyne's warning:\n%s", out.String())
			}
			want := map[string]string{}
			for _, kv := range env {
				k, v, _ := strings.Cut(kv, "=")
				want[k] = v
			}
			line := "locale=" + want["LC_ALL"] + "/" + want["LC_MESSAGES"] + "/" + want["LANG"]
			if !strings.Contains(out.String(), line) {
				t.Errorf("the server did not see the user's locale (%s):\n%s", line, out.String())
			}
		})
	}
}

// localeFree is this environment without locale variables.
func localeFree() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LC_") && !strings.HasPrefix(kv, "LANG") {
			env = append(env, kv)
		}
	}
	return env
}

// TestHeadlessBuild: with no command the headless binary says how to get the
// desktop app (and fails); it links neither Fyne nor cgo.
func TestHeadlessBuild(t *testing.T) {
	_, headless := builds(t)
	for _, args := range [][]string{nil, {"gui"}} {
		cmd := exec.Command(headless, args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			t.Errorf("mcptray-headless %v: %v, want exit 1", args, err)
		}
		if !strings.Contains(stderr.String(), "headless build (-tags nogui): it has no desktop app") ||
			!strings.Contains(stderr.String(), "install the desktop build") || !strings.Contains(stderr.String(), "serve-demo") {
			t.Errorf("mcptray-headless %v said:\n%s", args, stderr.String())
		}
	}
	out, err := exec.Command("go", "list", "-tags", "nogui", "-deps", "-f", "{{.ImportPath}} {{if .CgoFiles}}cgo{{end}}", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "fyne.io/") || strings.HasPrefix(line, "mcptray/app/gui") {
			t.Errorf("the headless build links %s", line)
		}
	}
	if out, err := exec.Command("go", "version", "-m", headless).Output(); err != nil || !strings.Contains(string(out), "CGO_ENABLED=0") {
		t.Errorf("headless binary built with cgo: %v\n%s", err, out)
	}
}
