package present

import (
	"fmt"
	"mcptray/healthcheck"
	"mcptray/internal/human"
	"mcptray/registry"
	"mcptray/registry/clients"
	"mcptray/supervisor"
	"strings"
	"time"
)

// CommandWords is the Command row: the command as configured with its
// arguments, and the program it resolved to only when that says more.
func CommandWords(s *supervisor.ServerState) string {
	if s.Server == nil || s.Server.Command == "" {
		return s.Command
	}
	cmd := s.Server.Command
	if len(s.Server.Args) > 0 {
		cmd += "  " + clients.ShellJoin(s.Server.Args)
	}
	if p := s.ResolvedPath; p != "" && p != s.Server.Command {
		cmd += "  (runs " + p + ")"
	}
	return cmd
}

// SourceWords says where an entry came from when mcptray added it from
// the MCP Registry or a bundle ("" for one written by hand or imported).
func SourceWords(s *registry.Server) string {
	if s == nil || s.Source == "" {
		return ""
	}
	kind, ref, ok := strings.Cut(s.Source, ":")
	name, version, _ := strings.Cut(ref, "@")
	if version != "" {
		version = ", version " + version
	}
	switch {
	case ok && kind == "registry":
		return "the MCP Registry: " + name + version
	case ok && kind == "mcpb":
		words := "an MCP bundle: " + name + version
		if s.Cwd != "" {
			words += ", unpacked in " + s.Cwd
		}
		return words
	}
	return s.Source
}

// Detail is one row of a server's details: its label and what it says, as
// the server sent it ("" when there is nothing to say); a view makes it
// visible with [VisibleLine].
type Detail struct{ Label, Text string }

// DetailLabels are the labels of [Details]' rows, in order.
var DetailLabels = []string{"Status", "Reason", "Server", "Protocol", "Transport", "Command", "Source", "Process", "Restarts", "Last exit", "Connect latency", "Probe latency"}

// Details are the rows the window shows for s at now, labelled and ordered
// as [DetailLabels].
func Details(s *supervisor.ServerState, now time.Time) []Detail {
	var server, proto string
	if r := s.Report; r != nil {
		server = r.ServerInfo.Name + " " + r.ServerInfo.Version
		if r.ServerInfo.Title != "" {
			server += " (" + r.ServerInfo.Title + ")"
		}
		if !s.Live() && !s.LastLive.IsZero() {
			server += " (last seen " + LastSeen(s.LastLive, now) + ")"
		}
		proto = r.ProtocolVersion + " · " + string(r.Era)
		if r.EraSource != "" {
			proto += " (" + r.EraSource + ")"
		}
	} else {
		proto = string(s.Era)
	}
	transport := string(s.Transport)
	if s.Server != nil && s.Server.URL != "" {
		transport += " · " + s.Server.URL
	}
	// An uptime is of a process or connection that is there: a state from
	// before its end must not go on counting.
	proc := ""
	switch {
	case !s.State.Alive():
	case s.PID > 0:
		proc = fmt.Sprintf("pid %d, up %s", s.PID, Uptime(s.Uptime(now)))
	case !s.StartedAt.IsZero():
		proc = "connected " + Uptime(s.Uptime(now)) + " ago"
	}
	restarts := fmt.Sprint(s.Restarts)
	if s.Server != nil && s.Server.IsRemote() {
		restarts = Plural(s.Restarts, "reconnect")
	}
	lastExit := ""
	if s.LastExit != nil {
		lastExit = s.LastExit.Describe() + " at " + s.LastExit.Time.Local().Format("15:04:05")
	}
	connect := ""
	if s.Report != nil && s.Report.ConnectLatency > 0 {
		connect = FormatLatency(s.Report.ConnectLatency) + " (handshake)"
	}
	return []Detail{
		{"Status", string(s.State) + " since " + s.Since.Local().Format("15:04:05")},
		{"Reason", s.Reason},
		{"Server", server},
		{"Protocol", proto},
		{"Transport", transport},
		{"Command", CommandWords(s)},
		{"Source", SourceWords(s.Server)},
		{"Process", proc},
		{"Restarts", restarts},
		{"Last exit", lastExit},
		{"Connect latency", connect},
		{"Probe latency", ProbeLatency(s.Probes)},
	}
}

// Uptime says how long something has been up, to the second in its first
// minute, then to the minute: the window draws it again only when the
// words change.
func Uptime(d time.Duration) string {
	switch {
	case d < time.Minute:
		return human.Duration(d.Truncate(time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	return fmt.Sprintf("%dd%02dh", int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour))
}

// ProbeLatency sums up a server's liveness probes: last, min, median, p95
// and how many; "" before the first.
func ProbeLatency(p healthcheck.ProbeStats) string {
	if p.Count == 0 {
		return ""
	}
	lat := fmt.Sprintf("last %s · min %s · median %s · p95 %s · %s", FormatLatency(p.Last), FormatLatency(p.Min),
		FormatLatency(p.Median), FormatLatency(p.P95), Plural(p.Count, "probe"))
	if p.ConsecutiveFailures > 0 {
		lat += fmt.Sprintf(" · %d failing in a row", p.ConsecutiveFailures)
	}
	return lat
}
