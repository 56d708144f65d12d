//go:build linux

package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kardianos/service"

	"mcptray/app"
)

// detecting wraps a service system and says whether it applies; with it a
// test picks systemd on a machine whose init is not systemd.
type detecting struct {
	service.System
	detect bool
}

func (d detecting) Detect() bool { return d.detect }

// chooseSystem makes name the chosen service system for the test.
func chooseSystem(t *testing.T, name string) {
	t.Helper()
	saved := service.AvailableSystems()
	var pick service.System
	for _, s := range saved {
		if s.String() == name {
			pick = s
		}
	}
	if pick == nil {
		t.Fatalf("no %s among %v", name, saved)
	}
	service.ChooseSystem(detecting{pick, true})
	t.Cleanup(func() { service.ChooseSystem(saved...) })
}

// TestServiceInstallSystemdUser installs the per-user service with a fake
// systemctl on PATH and checks the unit written and the systemctl calls.
func TestServiceInstallSystemdUser(t *testing.T) {
	home := t.TempDir()
	bin := filepath.Join(home, "bin")
	os.Mkdir(bin, 0o755)
	calls := filepath.Join(home, "systemctl.log")
	writeFile(t, filepath.Join(bin, "systemctl"), `#!/bin/sh
echo "$*" >> `+calls+`
case "$1" in
is-active) if [ -f `+home+`/active ]; then echo active; else echo inactive; fi ;;
list-unit-files) if [ -f `+home+`/.config/systemd/user/mcptray.service ]; then echo "mcptray.service enabled"; fi ;;
start) touch `+home+`/active ;;
stop) rm -f `+home+`/active ;;
esac
exit 0
`)
	os.Chmod(filepath.Join(bin, "systemctl"), 0o755)
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	t.Setenv("HOME", home)
	cfg := filepath.Join(home, "my servers.toml")
	writeFile(t, cfg, "[servers.demo]\ncommand = \"x\"\n")
	chooseSystem(t, "linux-systemd")

	run := func(args ...string) (string, string, int) {
		var out, errb strings.Builder
		code := Main(args, &app.Env{Stdout: &out, Stderr: &errb, Exe: "/opt/mcp tray/mcptray"})
		return out.String(), errb.String(), code
	}
	out, errOut, code := run("service", "install", "--config", cfg)
	if code != 0 {
		t.Fatalf("install: exit %d\n%s%s", code, out, errOut)
	}
	unit, err := os.ReadFile(filepath.Join(home, ".config/systemd/user/mcptray.service"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"WantedBy=default.target\n",
		"Restart=on-failure\n",
		"KillMode=mixed\n",
		`ExecStart=/opt/mcp\x20tray/mcptray "daemon" "--service" "--config" "` + cfg + `"` + "\n",
		"Description=mcptray daemon: runs and watches your MCP servers\n",
	} {
		if !strings.Contains(string(unit), want) {
			t.Errorf("unit lacks %q:\n%s", want, unit)
		}
	}
	if strings.Contains(string(unit), "multi-user.target") || strings.Contains(string(unit), "{{") {
		t.Errorf("system unit or unrendered template:\n%s", unit)
	}
	if !strings.Contains(out, "systemd user unit") || !strings.Contains(out, "started") {
		t.Errorf("install output %q", out)
	}

	out, _, code = run("service", "status")
	if code != 0 || !strings.Contains(out, ": running") {
		t.Errorf("status: %d %q", code, out)
	}
	if _, _, code := run("service", "stop"); code != 0 {
		t.Errorf("stop: %d", code)
	}
	out, _, code = run("service", "status")
	if code != 1 || !strings.Contains(out, ": stopped") {
		t.Errorf("status after stop: %d %q", code, out)
	}
	if out, errOut, code := run("service", "uninstall"); code != 0 {
		t.Errorf("uninstall: %d %s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(home, ".config/systemd/user/mcptray.service")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("unit left after uninstall: %v", err)
	}
	out, _, _ = run("service", "status")
	if !strings.Contains(out, "not installed") {
		t.Errorf("status after uninstall: %q", out)
	}
	log, _ := os.ReadFile(calls)
	for _, want := range []string{"enable --user mcptray.service", "daemon-reload --user", "start --user mcptray.service",
		"stop --user mcptray.service", "disable --user mcptray.service", "is-active mcptray.service --user"} {
		if !strings.Contains(string(log), want+"\n") {
			t.Errorf("systemctl never ran %q; calls:\n%s", want, log)
		}
	}
}

// TestServiceRefusedWithoutUserServices: on SysV init (what this build
// machine reports) there is no per-user service manager.
func TestServiceRefusedWithoutUserServices(t *testing.T) {
	chooseSystem(t, "unix-systemv")
	t.Setenv("HOME", t.TempDir())
	for _, sub := range []string{"install", "status", "uninstall"} {
		var out, errb strings.Builder
		code := Main([]string{"service", sub, "--config", "/dev/null"}[:2+map[bool]int{true: 2, false: 0}[sub == "install"]], &app.Env{Stdout: &out, Stderr: &errb, Exe: "/x/mcptray"})
		if code != 1 || !strings.Contains(errb.String(), "no per-user service manager") || !strings.Contains(errb.String(), "unix-systemv") {
			t.Errorf("service %s: exit %d %q", sub, code, errb.String())
		}
	}
}
