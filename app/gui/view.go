package gui

import (
	"image/color"

	"mcptray/supervisor"
)

// health is the tray's one-glance summary of every enabled server.
type health int

const (
	healthIdle  health = iota // every server stopped (grey)
	healthReady               // every enabled server ready (green)
	healthWarn                // something starting, degraded or in backoff (amber)
	healthError               // something failed, unhealthy or crash-looping (red)
)

func (h health) String() string {
	return [...]string{"idle", "ready", "warn", "error"}[h]
}

// aggregate folds every enabled server's level into one health.
func aggregate(snap supervisor.Snapshot) health {
	h, running := healthIdle, false
	worse := func(x health) {
		if x > h {
			h = x
		}
	}
	for i := range snap.Servers {
		s := &snap.Servers[i]
		if s.Server != nil && s.Server.Disabled {
			continue
		}
		switch levelOf(s) {
		case supervisor.LevelError:
			worse(healthError)
		case supervisor.LevelWarn:
			worse(healthWarn)
		case supervisor.LevelOK:
			running = true
		}
	}
	if h == healthIdle && running {
		return healthReady
	}
	return h
}

// levelOf is the engine's level of a server; a snapshot without one (an
// older daemon) gets it from the state alone.
func levelOf(s *supervisor.ServerState) supervisor.Level {
	if s.Level != "" {
		return s.Level
	}
	switch s.State {
	case supervisor.StateReady, supervisor.StateRunning:
		return supervisor.LevelOK
	case supervisor.StateStarting, supervisor.StateDegraded, supervisor.StateBackoff, supervisor.StateStopping, supervisor.StateSignIn:
		return supervisor.LevelWarn
	case supervisor.StateFailed, supervisor.StateUnhealthy, supervisor.StateCrashLooping:
		return supervisor.LevelError
	}
	return supervisor.LevelIdle
}

// dotColor is the badge colour of a server: green, amber, red or grey.
func dotColor(s *supervisor.ServerState) color.NRGBA {
	switch levelOf(s) {
	case supervisor.LevelOK:
		return color.NRGBA{0x2e, 0xa0, 0x43, 0xff}
	case supervisor.LevelWarn:
		return color.NRGBA{0xe3, 0x9b, 0x0c, 0xff}
	case supervisor.LevelError:
		return color.NRGBA{0xd1, 0x24, 0x2f, 0xff}
	}
	return idleColor
}

var idleColor = color.NRGBA{0x8c, 0x95, 0x9f, 0xff}
