//go:build !windows

package cli

// newUserService is a kardianos/service per-user service: a systemd user
// unit or a launchd agent (cmd_service_windows.go says why Windows differs).
var newUserService = newKardianosService
