// Package human writes values the way a person reads them. It is a leaf:
// every layer that words a message (healthcheck's diagnoses, the
// supervisor's reasons, the front ends' details) uses the same rules, so a
// wait reads the same in a state, in the window and on the command line.
package human

import "time"

// Duration prints a wait, an age or an uptime: 120ms, 3.2s, 5m3s; a
// negative duration (a moment already past) is 0s.
func Duration(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	default:
		return d.Round(time.Second).String()
	}
}
