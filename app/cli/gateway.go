package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"mcptray/app"
	"mcptray/app/present"
	"mcptray/control"
	"mcptray/gateway"
	"mcptray/registry"
)

const gatewayHelp = `Asks the daemon how clients reach its servers: the local Streamable HTTP
URL of each (127.0.0.1, the credential in the path), the command a stdio
client runs (mcptray connect NAME), and the client sessions connected now:
client name and version from their handshake, the pid of a stdio bridge,
since when, requests, errors, and the latency of real client requests
(p50/p95) per server.

Then each profile, as the one MCP server over its servers that a client
reaches at its URL or with "mcptray connect --profile PROFILE" ("mcptray
connect" alone for the profile default): how many tools it offers, its
servers and their state, its aggregate sessions, and what its naming had to
resolve (a shortened name, a collision). An aggregate session shows among
the sessions of each server it used, with its profile.

The URL holds the per-install key: treat it like a password. --reveal
prints it; without it the key is masked.`

func gatewayFlags(fs *flag.FlagSet) runFunc {
	asJSON := fs.Bool("json", false, "print JSON")
	reveal := fs.Bool("reveal", false, "print the URLs with their key")
	return func(ctx context.Context, env *app.Env, args []string) error {
		if len(args) > 0 {
			return app.Usagef("takes no arguments")
		}
		c, err := app.DialDaemon(ctx)
		if err != nil {
			return err
		}
		gi, err := c.Gateway(ctx)
		if err != nil {
			return err
		}
		if !*reveal {
			for i := range gi.Servers {
				gi.Servers[i].URL = registry.MaskURL(gi.Servers[i].URL)
			}
			for i := range gi.Profiles {
				gi.Profiles[i].URL = registry.MaskURL(gi.Profiles[i].URL)
			}
		}
		if *asJSON {
			enc := json.NewEncoder(env.Stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(gi)
		}
		printGateway(env.Stdout, gi)
		return nil
	}
}

const traceHelp = `Prints the last frames (up to 1000 per server) the daemon exchanged for
server NAME: client sessions to mcptray, mcptray to the server (relayed
requests and health checks alike) and back, each with its time, session,
method and, for results, how long it took. Values of fields named like
credentials and the server's configured secrets are masked. -f follows new
frames until interrupted.

--profile PROFILE prints the trace of the profile's aggregate sessions
(mcptray connect, mcptray connect --profile PROFILE) as their clients see
them: what the aggregate answers itself (the handshake, tools/list and the
other lists, search_tools, describe_tools) and what it routes, under the
names the client uses; a routed request is also in its server's trace.`

func traceFlags(fs *flag.FlagSet) runFunc {
	asJSON := fs.Bool("json", false, "print one JSON object per frame")
	follow := fs.Bool("f", false, "follow: print new frames as they come")
	profile := fs.String("profile", "", "print the trace of `PROFILE`'s aggregate sessions instead of a server's")
	return func(ctx context.Context, env *app.Env, args []string) error {
		if *profile != "" && len(args) != 0 {
			return app.Usagef("--profile takes no server NAME")
		}
		if *profile == "" && len(args) != 1 {
			return app.Usagef("takes one server NAME (or --profile PROFILE)")
		}
		c, err := app.DialDaemon(ctx)
		if err != nil {
			return err
		}
		print := func(f gateway.Frame) { printFrame(env.Stdout, f, *asJSON) }
		if *profile != "" {
			page, err := c.ProfileTrace(ctx, *profile, 0)
			if err != nil {
				return err
			}
			for _, f := range page.Frames {
				print(f)
			}
			if !*follow {
				return nil
			}
			return c.FollowProfileTrace(ctx, *profile, page.Next, print)
		}
		page, err := c.Trace(ctx, args[0], 0)
		if err != nil {
			return err
		}
		for _, f := range page.Frames {
			print(f)
		}
		if !*follow {
			return nil
		}
		return c.FollowTrace(ctx, args[0], page.Next, print)
	}
}

func printGateway(w io.Writer, gi *control.GatewayInfo) {
	if gi.Problem != "" {
		fmt.Fprintf(w, "The local HTTP endpoint is off: %s\n", gi.Problem)
	} else {
		fmt.Fprintf(w, "Local endpoint: http://127.0.0.1:%d (only this user; the key is in each URL)\n", gi.Port)
	}
	for _, s := range gi.Servers {
		fmt.Fprintf(w, "\n%s\n", present.VisibleLine(s.Name))
		if s.URL != "" {
			fmt.Fprintf(w, "  url      %s\n", s.URL)
		}
		fmt.Fprintf(w, "  stdio    %s\n", strings.Join(s.Command, " "))
		u := s.Usage
		if u.Sampled > 0 {
			fmt.Fprintf(w, "  requests %d relayed, p50 %s, p95 %s\n", u.Sampled, present.FormatLatency(u.P50), present.FormatLatency(u.P95))
		}
		if len(s.Sessions) == 0 {
			fmt.Fprintln(w, "  no client sessions")
			continue
		}
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  CLIENT\tVIA\tPID\tSINCE\tREQUESTS\tERRORS")
		for _, cs := range s.Sessions {
			client := present.VisibleCell(strings.TrimSpace(cs.ClientName + " " + cs.ClientVersion))
			if client == "" {
				client = "(no handshake yet)"
			}
			if cs.Profile != "" {
				client += " (profile " + present.VisibleCell(cs.Profile) + ")"
			}
			pid := "-"
			if cs.PID > 0 {
				pid = fmt.Sprint(cs.PID)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%d\t%d\n", client, cs.Via, pid, cs.Since.Local().Format("15:04:05"), cs.Requests, cs.Errors)
		}
		tw.Flush()
		for _, cs := range s.Sessions {
			if cs.Dropped > 0 {
				fmt.Fprintf(w, "  %s lost %d notifications: its client reads too slowly\n", cs.ID, cs.Dropped)
			}
		}
	}
	printProfiles(w, gi)
}

// printProfiles is the profiles part of printGateway.
func printProfiles(w io.Writer, gi *control.GatewayInfo) {
	for _, p := range gi.Profiles {
		fmt.Fprintf(w, "\nprofile %s\n", present.VisibleLine(p.Profile))
		if p.Problem != "" {
			fmt.Fprintf(w, "  cannot be served: %s\n", present.VisibleLine(p.Problem))
			continue
		}
		if p.URL != "" {
			fmt.Fprintf(w, "  url      %s\n", p.URL)
		}
		fmt.Fprintf(w, "  stdio    %s\n", strings.Join(p.Command, " "))
		var servers []string
		for _, m := range p.Servers {
			s := present.VisibleCell(m.Name)
			switch {
			case !m.Offered && m.Catalogue == "":
				s += " (" + string(m.State) + ", tools not known yet)"
			case !m.Offered:
				s += " (" + string(m.State) + ", not listed)"
			case m.Catalogue == "remembered":
				s += fmt.Sprintf(" (%d tools, remembered: not started)", m.Tools)
			default:
				s += fmt.Sprintf(" (%d tools)", m.Tools)
			}
			servers = append(servers, s)
		}
		fmt.Fprintf(w, "  offers   %d tools of %d servers: %s\n", p.Tools, len(p.Servers), strings.Join(servers, ", "))
		for _, n := range p.Notices {
			fmt.Fprintf(w, "  note     %s\n", present.VisibleLine(n))
		}
		if len(p.Sessions) == 0 {
			fmt.Fprintln(w, "  no aggregate sessions")
			continue
		}
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  CLIENT\tVIA\tPID\tSINCE\tREQUESTS\tERRORS")
		for _, cs := range p.Sessions {
			client := present.VisibleCell(strings.TrimSpace(cs.ClientName + " " + cs.ClientVersion))
			if client == "" {
				client = "(no handshake yet)"
			}
			pid := "-"
			if cs.PID > 0 {
				pid = fmt.Sprint(cs.PID)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%d\t%d\n", client, cs.Via, pid, cs.Since.Local().Format("15:04:05"), cs.Requests, cs.Errors)
		}
		tw.Flush()
	}
}

func printFrame(w io.Writer, f gateway.Frame, asJSON bool) {
	if asJSON {
		_ = json.NewEncoder(w).Encode(f)
		return
	}
	took := ""
	if f.Took > 0 {
		took = " (" + present.FormatLatency(f.Took) + ")"
	}
	who := f.Session
	if who == "" {
		who = "-"
	}
	body := f.Body
	if len(body) > 200 {
		body = body[:200] + "…"
	}
	fmt.Fprintf(w, "%s %-16s %-14s %-12s %s%s %s\n", f.Time.Local().Format("15:04:05.000"), present.VisibleCell(who), f.Dir, f.Kind, present.VisibleCell(f.Method), took, present.VisibleLine(body))
}
