package cli

import (
	"fmt"
	"os/exec"
	"strings"

	"mcptray/app"
)

// newUserService on Windows is a logon task, not kardianos/service's Windows
// service: a Windows service runs in session 0, as another account (or as
// the user only with their password stored in the service manager), needs
// an administrator to install, and sees neither the user's environment
// (%APPDATA%, the user's PATH), nor the user's named pipe (the control pipe
// admits the user's SID alone), nor the desktop. The per-user equivalent is
// a Task Scheduler task that starts `mcptray daemon` at the user's logon, as
// the user, with limited rights; installing it needs no administrator.
// kardianos/service serves systemd (user unit) and launchd (agent) on the
// other systems.
var newUserService = newLogonTask

type logonTask struct {
	exe, cfg string
}

func newLogonTask(env *app.Env, cfg string) (userService, error) {
	if _, err := exec.LookPath("schtasks.exe"); err != nil {
		return nil, fmt.Errorf("%w: schtasks.exe not found: %v", ErrNoUserServices, err)
	}
	return &logonTask{exe: env.Exe, cfg: cfg}, nil
}

func (t *logonTask) Describe() string { return `logon task \` + ServiceName + ` (Task Scheduler)` }

func (t *logonTask) schtasks(args ...string) (string, error) {
	out, err := exec.Command("schtasks.exe", args...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("schtasks %s: %v: %s", args[0], err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

func (t *logonTask) Install() error {
	run := `"` + t.exe + `" daemon`
	if t.cfg != "" {
		run += ` --config "` + t.cfg + `"`
	}
	_, err := t.schtasks("/Create", "/TN", ServiceName, "/SC", "ONLOGON", "/RL", "LIMITED", "/TR", run, "/F")
	return err
}

func (t *logonTask) Uninstall() error {
	_, err := t.schtasks("/Delete", "/TN", ServiceName, "/F")
	return err
}

func (t *logonTask) Start() error {
	_, err := t.schtasks("/Run", "/TN", ServiceName)
	return err
}

func (t *logonTask) Stop() error {
	_, err := t.schtasks("/End", "/TN", ServiceName)
	return err
}

func (t *logonTask) Status() (string, error) {
	out, err := t.schtasks("/Query", "/TN", ServiceName, "/FO", "LIST")
	if err != nil {
		if strings.Contains(err.Error(), "cannot find") {
			return "not installed", nil
		}
		return "", err
	}
	if strings.Contains(out, "Running") {
		return "running", nil
	}
	return "stopped", nil
}
