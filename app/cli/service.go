package cli

import (
	"context"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/kardianos/service"

	"mcptray/app"
)

// serviceFlags are the flags of a service subcommand, which does act to the
// user's service; withConfig adds --config (install: the service runs
// without this shell's environment, so it gets the config's absolute path).
func serviceFlags(act func(s userService, env *app.Env) error, withConfig bool) func(fs *flag.FlagSet) runFunc {
	return func(fs *flag.FlagSet) runFunc {
		var cfgPath *string
		if withConfig {
			cfgPath = configFlag(fs)
		}
		return func(ctx context.Context, env *app.Env, args []string) error {
			if len(args) > 0 {
				return app.Usagef("takes no arguments")
			}
			var cfg string
			if cfgPath != nil {
				// The service runs without this shell's environment:
				// give it the config's absolute path.
				c, err := app.LoadConfig(env, *cfgPath, true)
				if err != nil {
					return err
				}
				cfg = c.Path
			}
			s, err := newUserService(env, cfg)
			if err != nil {
				return err
			}
			return act(s, env)
		}
	}
}

func serviceInstall(s userService, env *app.Env) error {
	if err := s.Install(); err != nil {
		return fmt.Errorf("install: %w", err)
	}
	fmt.Fprintf(env.Stdout, "installed %s\n", s.Describe())
	if err := s.Start(); err != nil {
		return fmt.Errorf("installed, but it did not start: %w", err)
	}
	fmt.Fprintln(env.Stdout, "started; check it with: mcptray status")
	return nil
}

func serviceUninstall(s userService, env *app.Env) error {
	_ = s.Stop() // a stopped service is fine
	if err := s.Uninstall(); err != nil {
		return fmt.Errorf("uninstall: %w", err)
	}
	fmt.Fprintf(env.Stdout, "uninstalled %s\n", s.Describe())
	return nil
}

func serviceStart(s userService, env *app.Env) error {
	if err := s.Start(); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	fmt.Fprintln(env.Stdout, "started")
	return nil
}

func serviceStop(s userService, env *app.Env) error {
	if err := s.Stop(); err != nil {
		return fmt.Errorf("stop: %w", err)
	}
	fmt.Fprintln(env.Stdout, "stopped")
	return nil
}

func serviceStatus(s userService, env *app.Env) error {
	st, err := s.Status()
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "%s: %s\n", s.Describe(), st)
	if st != "running" {
		return ExitError{Code: 1}
	}
	return nil
}

// ServiceName is the per-user service's name (systemd unit mcptray.service,
// launchd label mcptray).
const ServiceName = "mcptray"

// userService is the per-user service, whatever manages it.
type userService interface {
	Install() error
	Uninstall() error
	Start() error
	Stop() error
	// Status is "running", "stopped" or "not installed".
	Status() (string, error)
	// Describe says what and where ("systemd user unit ~/.config/…").
	Describe() string
}

// newUserService (cmd_service_unix.go, cmd_service_windows.go) is the
// per-user service of this platform. It runs `mcptray daemon [--service]
// [--config cfg]`; cfg is "" where the command does not install.

// ErrNoUserServices means the platform has no per-user service manager.
var ErrNoUserServices = errors.New("no per-user service manager")

// userServiceSystems are the service managers with per-user services; on any
// other (SysV init, upstart, OpenRC, …) install would need root and would
// run the daemon outside the user's session.
var userServiceSystems = map[string]string{
	"linux-systemd":  "systemd user unit ~/.config/systemd/user/" + ServiceName + ".service",
	"darwin-launchd": "launchd agent ~/Library/LaunchAgents/" + ServiceName + ".plist",
}

// systemdUserUnit is the unit for `systemctl --user` (kardianos/service's
// own template is a system unit: multi-user.target). KillMode=mixed lets the
// daemon stop its servers gently; systemd kills what is left after the
// timeout. Template syntax: kardianos/service v1.3.0's ({{Name}}, not
// {{.Name}}).
const systemdUserUnit = `[Unit]
Description={{Description}}
ConditionFileIsExecutable={{Path | cmdEscape}}
StartLimitIntervalSec=120
StartLimitBurst=5

[Service]
Type=simple
ExecStart={{Path | cmdEscape}}{{range Arguments}} {{. | cmd}}{{end}}
{{if WorkingDirectory}}WorkingDirectory={{WorkingDirectory | cmdEscape}}
{{end}}Restart={{Restart}}
RestartSec=5
KillMode=mixed
TimeoutStopSec=30
{{range EnvVars}}{{.}}
{{end}}
[Install]
WantedBy=default.target
`

// launchdAgent is the launchd agent (~/Library/LaunchAgents/mcptray.plist)
// that runs exe with args at login: RunAtLoad, and KeepAlive only after a
// failure (SuccessfulExit false), as systemd's Restart=on-failure: a daemon
// stopped on purpose exits 0 and stays stopped. Its stdout and stderr go to
// ~/Library/Logs/mcptray-daemon.log (kardianos/service's default,
// /usr/local/var/log, is not the user's to write). kardianos/service reads
// the text as a template; it has no {{ }} left, so it is written as is.
func launchdAgent(exe string, args []string, home string) string {
	var b strings.Builder
	esc := func(s string) string {
		var e strings.Builder
		xml.EscapeText(&e, []byte(s))
		return strings.ReplaceAll(e.String(), "{{", "&#123;&#123;")
	}
	log := esc(home + "/Library/Logs/" + ServiceName + "-daemon.log")
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>Label</key>
	<string>` + ServiceName + `</string>
	<key>ProgramArguments</key>
	<array>
`)
	for _, a := range append([]string{exe}, args...) {
		b.WriteString("\t\t<string>" + esc(a) + "</string>\n")
	}
	b.WriteString(`	</array>
	<key>RunAtLoad</key>
	<true/>
	<key>KeepAlive</key>
	<dict>
		<key>SuccessfulExit</key>
		<false/>
	</dict>
	<key>ProcessType</key>
	<string>Background</string>
	<key>StandardOutPath</key>
	<string>` + log + `</string>
	<key>StandardErrorPath</key>
	<string>` + log + `</string>
</dict>
</plist>
`)
	return b.String()
}

func serviceConfig(env *app.Env, cfg string) *service.Config {
	args := []string{"daemon", "--service"}
	if cfg != "" {
		args = append(args, "--config", cfg)
	}
	home, _ := os.UserHomeDir()
	return &service.Config{
		Name:        ServiceName,
		DisplayName: "mcptray",
		Description: "mcptray daemon: runs and watches your MCP servers",
		Executable:  env.Exe,
		Arguments:   args,
		Option: service.KeyValue{
			"UserService":   true,
			"SystemdScript": systemdUserUnit,
			"Restart":       "on-failure",
			"LaunchdConfig": launchdAgent(env.Exe, args, home),
		},
	}
}

type kardianosService struct {
	s    service.Service
	desc string
}

func newKardianosService(env *app.Env, cfg string) (userService, error) {
	sys := service.ChosenSystem()
	if sys == nil {
		return nil, fmt.Errorf("%w: no service manager found on this system", ErrNoUserServices)
	}
	desc, ok := userServiceSystems[sys.String()]
	if !ok {
		return nil, fmt.Errorf("%w: this system's service manager is %s, which runs services for the whole machine, not per user; "+
			"start `mcptray daemon` from your session instead: copy /usr/share/mcptray/mcptray-daemon.desktop (packages) or packaging/mcptray-daemon.desktop (source) to ~/.config/autostart/",
			ErrNoUserServices, sys.String())
	}
	s, err := service.New(nil, serviceConfig(env, cfg))
	if err != nil {
		return nil, err
	}
	return &kardianosService{s: s, desc: desc}, nil
}

func (k *kardianosService) Install() error   { return k.s.Install() }
func (k *kardianosService) Uninstall() error { return k.s.Uninstall() }
func (k *kardianosService) Start() error     { return k.s.Start() }
func (k *kardianosService) Stop() error      { return k.s.Stop() }
func (k *kardianosService) Describe() string { return k.desc }

func (k *kardianosService) Status() (string, error) {
	st, err := k.s.Status()
	switch {
	case errors.Is(err, service.ErrNotInstalled):
		return "not installed", nil
	case err != nil:
		return "", fmt.Errorf("status: %w", err)
	case st == service.StatusRunning:
		return "running", nil
	case st == service.StatusStopped:
		return "stopped", nil
	}
	return "unknown", nil
}

// serviceProgram runs the daemon for the service manager.
type serviceProgram struct {
	env    *app.Env
	cfg    string
	cancel context.CancelFunc
	exited chan struct{}
	err    error
}

func (p *serviceProgram) Start(service.Service) error {
	run, err := app.PrepareDaemon(p.env, p.cfg, daemonPrinter(p.env.Stderr))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	go func() {
		defer close(p.exited)
		p.err = run(ctx)
	}()
	return nil
}

func (p *serviceProgram) Stop(service.Service) error {
	if p.cancel != nil {
		p.cancel()
		<-p.exited
	}
	return p.err
}

// runAsService runs the daemon under the service manager (`daemon
// --service`): it stops when the manager says so, or on SIGTERM/SIGINT.
func runAsService(ctx context.Context, env *app.Env, cfg string) error {
	p := &serviceProgram{env: env, cfg: cfg, exited: make(chan struct{})}
	c := serviceConfig(env, cfg)
	c.Option["RunWait"] = func() {
		select {
		case <-ctx.Done():
		case <-p.exited:
		}
	}
	s, err := service.New(p, c)
	if err != nil {
		return err
	}
	if err := s.Run(); err != nil {
		return err
	}
	if p.err != nil {
		return p.err
	}
	select {
	case <-p.exited:
		if ctx.Err() == nil {
			return errors.New("daemon stopped by itself")
		}
	default:
	}
	return nil
}
