package present

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcptray/gateway"
	"mcptray/healthcheck"
	"mcptray/internal/human"
	"mcptray/supervisor"
)

// Summary says in words where a server is, for the tray menu:
// "filesystem: ready, 14 tools, 3 ms"; "github: crash-looping, exit 1".
func Summary(s *supervisor.ServerState) string {
	return s.Name + ": " + StateDetail(s)
}

// StateDetail is summary without the name, at the current time.
func StateDetail(s *supervisor.ServerState) string { return StateDetailAt(s, time.Now()) }

// StateDetailAt is StateDetail at now (a backoff counts down to now).
// Latencies say which they are; warnings are named; facts about a server
// that is no longer up say when they were last seen.
func StateDetailAt(s *supervisor.ServerState, now time.Time) string {
	return stateDetail(s, now, true)
}

// SteadySummary is Summary without the figures that move on their own
// (latencies, countdowns, times): the words change only when the server's
// state does. The tray shows it: a host re-reads the whole menu on every
// change of a label.
func SteadySummary(s *supervisor.ServerState) string {
	return s.Name + ": " + SteadyDetail(s)
}

// SteadyDetail is StateDetail without the figures that move on their own.
// The window's list shows it: a row that changed with every probe had the
// whole window drawn again for it.
func SteadyDetail(s *supervisor.ServerState) string {
	return stateDetail(s, time.Time{}, false)
}

// SteadyRetry is what the tray says of a server that went down and is
// being started again, through backoff and each new start alike: why it
// went down last, and no count that grows with each try.
func SteadyRetry(s *supervisor.ServerState) string {
	if w := exitWords(s); w != "" {
		return s.Name + ": retrying, " + w
	}
	return s.Name + ": retrying"
}

// stateDetail is StateDetailAt; without live, the moving figures are left
// out and now is not read.
func stateDetail(s *supervisor.ServerState, now time.Time, live bool) string {
	parts := []string{string(s.State)}
	if s.Server != nil && s.Server.Disabled {
		parts[0] = "disabled"
	}
	if s.State == supervisor.StateSignIn {
		parts[0] = "sign-in required"
	}
	// The clients right after the state: "demo: ready, 3 clients, …".
	if s.State.Alive() && s.Clients > 0 {
		parts = append(parts, Plural(s.Clients, "client"))
	}
	switch s.State {
	case supervisor.StateReady, supervisor.StateDegraded, supervisor.StateUnhealthy:
		if s.Report != nil {
			parts = append(parts, Plural(len(s.Report.Tools), "tool"))
		}
		if !live {
			// no latency
		} else if s.Probes.Count > 0 && s.Probes.Last > 0 {
			parts = append(parts, "probe "+FormatLatency(s.Probes.Last))
		} else if s.Report != nil && s.Report.ConnectLatency > 0 {
			parts = append(parts, "connect "+FormatLatency(s.Report.ConnectLatency))
		}
		if s.State != supervisor.StateReady && s.Diagnosis != nil {
			parts = append(parts, string(s.Diagnosis.Code))
		}
	case supervisor.StateBackoff:
		if !s.NextAttempt.IsZero() && !live {
			parts = append(parts, "retrying")
		} else if !s.NextAttempt.IsZero() {
			verb := "restart"
			if s.Server != nil && s.Server.IsRemote() {
				verb = "reconnect"
			}
			if left := s.NextAttempt.Sub(now); left > 0 {
				parts = append(parts, verb+" in "+human.Duration(left))
			} else {
				parts = append(parts, verb+" now")
			}
		}
		parts = append(parts, exitWords(s))
	case supervisor.StateCrashLooping:
		parts = append(parts, exitWords(s))
	case supervisor.StateFailed:
		if s.Diagnosis != nil {
			parts = append(parts, string(s.Diagnosis.Code))
		}
	}
	parts = append(parts, demandWords(s, now, live)...)
	for _, w := range s.Warnings {
		parts = append(parts, "warning: "+string(w.Code))
	}
	if live && !s.Live() && s.Report != nil && !s.LastLive.IsZero() {
		parts = append(parts, "last seen "+LastSeen(s.LastLive, now))
	}
	if s.Restarts > 0 {
		word := "restart"
		if s.Server != nil && s.Server.IsRemote() {
			word = "reconnect"
		}
		parts = append(parts, Plural(s.Restarts, word))
	}
	out := parts[:0]
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, ", ")
}

// demandWords say what clients do with a server (how many hold it is said
// after the state): when
// idle_stop stops it, whether the next one starts it, and its per-session
// instances.
func demandWords(s *supervisor.ServerState, now time.Time, live bool) []string {
	var parts []string
	if s.InstanceOf != "" {
		parts = append(parts, "instance of "+s.InstanceOf)
	}
	if s.Instances > 0 {
		parts = append(parts, Plural(s.Instances, "instance"))
	}
	if live && s.Live() && s.IdleStop > 0 && !s.LastUse.IsZero() {
		if left := s.LastUse.Add(s.IdleStop).Sub(now); left > 0 {
			parts = append(parts, "idle stop in "+human.Duration(left))
		}
	}
	if s.WaitsForClient {
		parts = append(parts, "waits for a client")
	}
	return parts
}

// LastSeen is when a server was last seen up: a time of day today, or a
// date before.
func LastSeen(t, now time.Time) string {
	t = t.Local()
	if y, m, d := now.Local().Date(); t.Year() == y && t.Month() == m && t.Day() == d {
		return "at " + t.Format("15:04:05")
	}
	return "on " + t.Format("2006-01-02 15:04")
}

func exitWords(s *supervisor.ServerState) string {
	switch {
	case s.Diagnosis != nil && s.Diagnosis.Code != healthcheck.CodeExitedDuringStartup && s.Diagnosis.Code != healthcheck.CodeCrashed:
		// mcptray ended it (a handshake or probe deadline, ...): the exit
		// that followed is evidence, not the cause.
		return string(s.Diagnosis.Code)
	case s.LastExit != nil && s.LastExit.Signal != "":
		return s.LastExit.Signal
	case s.LastExit != nil:
		return fmt.Sprintf("exit %d", s.LastExit.Code)
	case s.Diagnosis != nil:
		return string(s.Diagnosis.Code)
	}
	return ""
}

func Plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// FormatLatency prints a probe latency at a precision a person can read.
func FormatLatency(d time.Duration) string {
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

// EraWords is "modern 2026-07-28" or "legacy 2025-11-25".
func EraWords(s *supervisor.ServerState) string {
	if s.Report == nil {
		if s.Era != "" {
			return string(s.Era)
		}
		return ""
	}
	return strings.TrimSpace(string(s.Report.Era) + " " + s.Report.ProtocolVersion)
}

// ListLine is the second line of a server in the main window's list.
func ListLine(s *supervisor.ServerState) string {
	parts := []string{StateDetail(s)}
	if e := EraWords(s); e != "" {
		parts = append(parts, e)
	}
	return strings.Join(parts, " · ")
}

// LogLine is a server's log message as one stderr line.
func LogLine(p *mcp.LoggingMessageParams) string {
	data, ok := p.Data.(string)
	if !ok {
		b, _ := json.Marshal(p.Data)
		data = string(b)
	}
	who := "server log"
	if p.Logger != "" {
		who += " " + p.Logger
	}
	return fmt.Sprintf("%s [%s]: %s", VisibleLine(who), VisibleLine(string(p.Level)), VisibleLine(data))
}

// NotReadyText explains, in a few lines, a server that did not get to a
// session (a *supervisor.NotReadyError in err); ok is false for other
// errors.
func NotReadyText(err error) (string, bool) {
	var nr *supervisor.NotReadyError
	if !errors.As(err, &nr) {
		return "", false
	}
	var b strings.Builder
	PrintNotReady(&b, nr)
	return strings.TrimPrefix(strings.TrimSpace(b.String()), "mcptray: "), true
}

// PrintNotReady explains a server that did not get to a session.
func PrintNotReady(w io.Writer, e *supervisor.NotReadyError) {
	fmt.Fprintf(w, "mcptray: %s did not start: %s\n", VisibleLine(e.Name), Visible(e.Reason))
	if d := e.Diagnosis; d != nil {
		for _, ev := range d.Evidence {
			fmt.Fprintf(w, "    %s\n", VisibleLine(ev))
		}
		if d.Fix != "" {
			fmt.Fprintf(w, "    fix: %s\n", Visible(d.Fix))
		}
	}
	tail := e.Stderr
	if len(tail) > 5 {
		tail = tail[len(tail)-5:]
	}
	if len(tail) > 0 {
		fmt.Fprintln(w, "    last stderr lines:")
		for _, l := range tail {
			fmt.Fprintf(w, "      %s\n", VisibleLine(l.Text))
		}
	}
}

// HealthCheckFrame says whether a trace frame is mcptray's own liveness
// probe of the server (ping, server/discover on the upstream side), not
// something a client asked.
func HealthCheckFrame(f gateway.Frame) bool {
	return f.Session == "" && (f.Method == "ping" || f.Method == "server/discover")
}

// ProgressText is a progress notification in one line: a bar when the
// total is known, then the message.
func ProgressText(n *mcp.ProgressNotificationParams) string {
	var b strings.Builder
	if n.Total > 0 {
		const width = 20
		filled := min(width, max(0, int(n.Progress/n.Total*width)))
		fmt.Fprintf(&b, "[%s%s] %g/%g", strings.Repeat("#", filled), strings.Repeat("-", width-filled), n.Progress, n.Total)
	} else {
		fmt.Fprintf(&b, "%g", n.Progress)
	}
	if n.Message != "" {
		b.WriteString(" " + VisibleLine(n.Message))
	}
	return b.String()
}

// TellingStderrLine is the stderr line that best says why a process ended,
// from its last lines: the last that names an error, else the last that is
// not a runtime's closing noise (Node.js ends every crash with its version,
// "Node.js v20.20.2", after the error and its stack).
func TellingStderrLine(lines []string) string {
	last := ""
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" || noiseLine(l) {
			continue
		}
		if strings.Contains(l, "Error") || strings.Contains(strings.ToLower(l), "error:") {
			return l
		}
		if last == "" {
			last = l
		}
	}
	return last
}

// noiseLine is a stderr line that never says why: a runtime's version
// banner, a stack frame, a lone bracket or caret.
func noiseLine(l string) bool {
	switch {
	case strings.HasPrefix(l, "Node.js v"), strings.HasPrefix(l, "at "):
		return true
	}
	return strings.Trim(l, "{}[]()^~ ") == ""
}
