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

// aggregate folds every enabled server's state into one health.
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
		switch s.State {
		case supervisor.StateFailed, supervisor.StateUnhealthy, supervisor.StateCrashLooping:
			worse(healthError)
		case supervisor.StateStarting, supervisor.StateDegraded, supervisor.StateBackoff, supervisor.StateStopping:
			worse(healthWarn)
		case supervisor.StateReady, supervisor.StateRunning:
			running = true
		}
	}
	if h == healthIdle && running {
		return healthReady
	}
	return h
}

// stateColor is the badge colour of a state.
func stateColor(s supervisor.State) color.NRGBA {
	switch s {
	case supervisor.StateReady, supervisor.StateRunning:
		return color.NRGBA{0x2e, 0xa0, 0x43, 0xff}
	case supervisor.StateStarting, supervisor.StateDegraded, supervisor.StateBackoff, supervisor.StateStopping:
		return color.NRGBA{0xe3, 0x9b, 0x0c, 0xff}
	case supervisor.StateFailed, supervisor.StateUnhealthy, supervisor.StateCrashLooping:
		return color.NRGBA{0xd1, 0x24, 0x2f, 0xff}
	}
	return color.NRGBA{0x8c, 0x95, 0x9f, 0xff}
}
