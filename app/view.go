package app

import (
	"fmt"
	"image/color"
	"strings"
	"time"

	"mcptray/registry"
	"mcptray/supervisor"
)

// Engine is what the desktop app drives: the supervisor running in this
// process or, through the control API, in a daemon. The UI never knows which.
type Engine interface {
	Snapshot() supervisor.Snapshot
	// Changes signals (coalesced) that Snapshot has something new.
	Changes() <-chan struct{}
	Start(name string) error
	Stop(name string) error
	Restart(name string) error
	// CheckNow probes a server at once ("" for all).
	CheckNow(name string) error
	// Log returns the stderr lines after sequence number since, and the
	// sequence number to ask from next time.
	Log(name string, since uint64) ([]supervisor.LogLine, uint64)
	// Reload applies a new server list: added servers start, removed ones
	// stop, changed ones restart, the rest are left alone.
	Reload(servers []*registry.Server)
}

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

// summary says in words where a server is, for the tray menu:
// "filesystem: ready, 14 tools, 3 ms"; "github: crash-looping, exit 1".
func summary(s *supervisor.ServerState) string {
	return s.Name + ": " + stateDetail(s)
}

// stateDetail is summary without the name.
func stateDetail(s *supervisor.ServerState) string {
	parts := []string{string(s.State)}
	if s.Server != nil && s.Server.Disabled {
		parts[0] = "disabled"
	}
	switch s.State {
	case supervisor.StateReady, supervisor.StateDegraded, supervisor.StateUnhealthy:
		if s.Report != nil {
			parts = append(parts, plural(len(s.Report.Tools), "tool"))
		}
		if s.Probes.Count > 0 {
			parts = append(parts, formatLatency(s.Probes.Last))
		} else if s.Report != nil && s.Report.ConnectLatency > 0 {
			parts = append(parts, formatLatency(s.Report.ConnectLatency))
		}
		if s.State != supervisor.StateReady && s.Diagnosis != nil {
			parts = append(parts, string(s.Diagnosis.Code))
		}
	case supervisor.StateBackoff:
		if !s.NextAttempt.IsZero() {
			parts = append(parts, "retry at "+s.NextAttempt.Local().Format("15:04:05"))
		}
		parts = append(parts, exitWords(s))
	case supervisor.StateCrashLooping:
		parts = append(parts, exitWords(s))
	case supervisor.StateFailed:
		if s.Diagnosis != nil {
			parts = append(parts, string(s.Diagnosis.Code))
		}
	}
	out := parts[:0]
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, ", ")
}

func exitWords(s *supervisor.ServerState) string {
	switch {
	case s.LastExit != nil && s.LastExit.Signal != "":
		return s.LastExit.Signal
	case s.LastExit != nil:
		return fmt.Sprintf("exit %d", s.LastExit.Code)
	case s.Diagnosis != nil:
		return string(s.Diagnosis.Code)
	}
	return ""
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// formatLatency prints a probe latency at a precision a person can read.
func formatLatency(d time.Duration) string {
	switch {
	case d <= 0:
		return "–"
	case d < time.Millisecond:
		return fmt.Sprintf("%d µs", d.Microseconds())
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

func roundDur(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d < time.Minute:
		return d.Round(time.Second).String()
	case d < time.Hour:
		return d.Round(time.Second).String()
	}
	return d.Round(time.Minute).String()
}

// eraWords is "modern 2026-07-28" or "legacy 2025-11-25".
func eraWords(s *supervisor.ServerState) string {
	if s.Report == nil {
		if s.Era != "" {
			return string(s.Era)
		}
		return ""
	}
	return strings.TrimSpace(string(s.Report.Era) + " " + s.Report.ProtocolVersion)
}

// listLine is the second line of a server in the main window's list.
func listLine(s *supervisor.ServerState) string {
	parts := []string{stateDetail(s)}
	if e := eraWords(s); e != "" {
		parts = append(parts, e)
	}
	if s.Restarts > 0 {
		parts = append(parts, plural(s.Restarts, "restart"))
	}
	return strings.Join(parts, " · ")
}
