package cli

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"mcptray/app"
	"mcptray/app/present"
	"mcptray/control"
	"mcptray/registry"
	"mcptray/supervisor"
)

const checkHelp = `Runs the selected servers (default: every enabled one) through the same
engine as the desktop app, all at once: spawn or connect, protocol era and
version, handshake, discovery (tools, resources, prompts) and one liveness
probe. Prints the result, stops everything it started, and exits:
  0  every selected server is ready
  1  at least one is not (degraded, failed, still starting at --timeout,
     or interrupted: the check was stopped, by Ctrl-C or a signal, before
     it had an outcome)
  2  usage or config errors

A server need not be in the config: "mcptray check URL" checks a remote
one (Streamable HTTP, falling back to the old HTTP+SSE transport as a
configured url does), with --header 'Name: value' for each header it needs;
"mcptray check [flags] -- COMMAND [ARGS...]" checks a local one, with
--env NAME=value for each variable to add to its environment. Both flags
repeat; values may be ${env:VAR} references. The [settings] of --config
apply when it is given.

--json prints an array with one object per server: name, transport, status,
era, eraSource, protocolVersion, serverInfo, capabilities, instructions, tools,
resources, resourceTemplates, prompts, latencyMs {connect, probe},
diagnostics [{code, message, evidence, fix}] and stderrTail. Env and header
values never appear in the output.`

func checkFlags(fs *flag.FlagSet) runFunc {
	cfgPath := configFlag(fs)
	asJSON := fs.Bool("json", false, "print the results as a JSON array")
	timeout := fs.Duration("timeout", 30*time.Second, "give up on servers not settled after this long")
	var headers, envs repeated
	fs.Var(&headers, "header", "with a URL: an HTTP header to send, 'Name: value' (repeatable)")
	fs.Var(&envs, "env", "with -- COMMAND: an environment variable to set, NAME=value (repeatable)")
	return func(ctx context.Context, env *app.Env, args []string) error {
		if *timeout <= 0 {
			return app.Usagef("--timeout must be positive")
		}
		// A check lives for a moment and its heap stays small: collecting
		// a quarter as often costs a few megabytes, and the CPU it saves
		// is the servers' to start with.
		debug.SetGCPercent(400)
		adhoc, err := adhocServer(args, headers, envs)
		if err != nil {
			return err
		}
		var cfg *registry.Config
		var servers []*registry.Server
		switch {
		case adhoc == nil:
			if cfg, err = app.LoadConfig(env, *cfgPath, *asJSON); err != nil {
				return err
			}
			if servers, err = checkSelection(cfg, args); err != nil {
				return err
			}
		case *cfgPath != "":
			// Only the [settings] matter; the servers are not checked.
			if cfg, err = app.LoadConfig(env, *cfgPath, true); err != nil {
				return err
			}
			servers = []*registry.Server{adhoc}
		default:
			cfg, servers = &registry.Config{}, []*registry.Server{adhoc}
		}
		results := app.RunCheck(ctx, cfg, servers, *timeout)
		if adhoc == nil {
			// The catalogues are known now: a profile's pattern that
			// matches none of its server's tools is said.
			for _, d := range control.PatternWarnings(cfg, supervisor.Snapshot{Servers: results}) {
				fmt.Fprintln(env.Stderr, d.Long())
			}
		}
		if *asJSON {
			now := time.Now()
			out := make([]serverReport, len(results))
			for i := range results {
				out[i] = newServerReport(&results[i], false, now)
			}
			writeJSON(env.Stdout, out)
		} else {
			printCheckTable(env.Stdout, results)
		}
		for _, r := range results {
			if r.State != supervisor.StateReady {
				return ExitError{Code: 1}
			}
		}
		return nil
	}
}

// repeated is a flag given any number of times.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ", ") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

// adhocServer is the server that check's arguments describe when they are
// not names from the config: a URL, or "--" and a command. It is nil for
// names (or none), which --header and --env do not go with.
func adhocServer(args []string, headers, envs []string) (*registry.Server, error) {
	dash := slices.Index(args, "--")
	var srv *registry.Server
	switch {
	case dash >= 0:
		if dash > 0 {
			return nil, app.Usagef("give server names or -- COMMAND, not both (%s before --)", strings.Join(args[:dash], " "))
		}
		argv := args[dash+1:]
		if len(argv) == 0 || argv[0] == "" {
			return nil, app.Usagef("-- must be followed by the server's command")
		}
		srv = &registry.Server{Name: programName(argv[0]), Command: argv[0], Args: argv[1:], Autostart: true}
	case len(args) > 0 && strings.Contains(args[0], "://"):
		if len(args) > 1 {
			return nil, app.Usagef("check one URL at a time (also given: %s)", strings.Join(args[1:], " "))
		}
		u, err := url.Parse(args[0])
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, app.Usagef("%q is not an http:// or https:// URL", args[0])
		}
		srv = &registry.Server{Name: u.Host, URL: args[0], Autostart: true}
	}
	switch {
	case srv == nil && len(headers) > 0:
		return nil, app.Usagef("--header goes with a URL (mcptray check --header 'Name: value' URL)")
	case srv == nil && len(envs) > 0:
		return nil, app.Usagef("--env goes with a command (mcptray check --env NAME=value -- COMMAND)")
	case srv == nil:
		return nil, nil
	case srv.IsRemote() && len(envs) > 0:
		return nil, app.Usagef("--env goes with a command, not a URL: a remote server's environment is not mcptray's to set")
	case !srv.IsRemote() && len(headers) > 0:
		return nil, app.Usagef("--header goes with a URL, not a command: a stdio server gets no HTTP headers")
	}
	for _, h := range headers {
		name, value, ok := strings.Cut(h, ":")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		switch {
		case !ok:
			// The text may be the secret itself: say only how it is wrong.
			return nil, app.Usagef("--header wants 'Name: value'; one of them has no ':'")
		case !validHeaderName(name):
			return nil, app.Usagef("--header %q: a header name is letters, digits and !#$%%&'*+-.^_`|~, with no spaces", name)
		case strings.ContainsAny(value, "\r\n\x00"):
			return nil, app.Usagef("--header %s: the value holds a line break or NUL", name)
		}
		if srv.Headers == nil {
			srv.Headers = map[string]string{}
		}
		if _, dup := srv.Headers[name]; dup {
			return nil, app.Usagef("--header %s is given twice", name)
		}
		srv.Headers[name] = value
	}
	for _, e := range envs {
		name, value, ok := strings.Cut(e, "=")
		switch {
		case !ok:
			return nil, app.Usagef("--env %q wants NAME=value", name)
		case !validEnvName(name):
			return nil, app.Usagef("--env %q: a variable name is letters, digits and _, not starting with a digit", name)
		}
		if srv.Env == nil {
			srv.Env = map[string]string{}
		}
		srv.Env[name] = value
	}
	return srv, nil
}

// validHeaderName reports an HTTP field name (RFC 9110 token).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// validEnvName reports a name a shell would accept for a variable.
func validEnvName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, c := range []byte(s) {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// checkSelection is the named servers, or every enabled one. A named server
// is checked even when disabled or set not to autostart.
func checkSelection(cfg *registry.Config, names []string) ([]*registry.Server, error) {
	sel, err := app.SelectServers(cfg, names)
	if err != nil {
		return nil, err
	}
	var out []*registry.Server
	for _, s := range sel {
		if s.Disabled && len(names) == 0 {
			continue
		}
		c := s.Clone()
		c.Start, c.Autostart, c.Disabled = registry.StartAuto, true, false
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, app.ConfigError{Err: fmt.Errorf("%s has no enabled servers to check", cfg.Path)}
	}
	return out, nil
}

func printCheckTable(out io.Writer, results []supervisor.ServerState) {
	w := bufio.NewWriter(out) // one write, not one per cell
	defer w.Flush()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATUS\tPROTOCOL\tSERVER\tTOOLS/RES/PROMPTS\tCONNECT/PROBE\tDIAGNOSIS")
	var details []string
	for i := range results {
		st := &results[i]
		proto, server, counts, latency := "–", "–", "–", "–"
		if r := st.Report; r != nil {
			proto = string(r.Era) + " " + r.ProtocolVersion
			server = strings.TrimSpace(r.ServerInfo.Name + " " + r.ServerInfo.Version)
			counts = fmt.Sprintf("%d/%d/%d", len(r.Tools), len(r.Resources)+len(r.ResourceTemplates), len(r.Prompts))
			latency = present.FormatLatency(r.ConnectLatency)
		}
		if st.Probes.Count > 0 && st.Probes.Last > 0 {
			latency += " / " + present.FormatLatency(st.Probes.Last)
		}
		rep := newServerReport(st, false, time.Time{})
		diag := "–"
		if len(rep.Diagnostics) > 0 {
			d := rep.Diagnostics[0]
			diag = string(d.Code)
			if st.Level == supervisor.LevelWarn && rep.Status == "ready" {
				diag = "warning: " + diag
			}
			details = append(details, checkDetail(st.Name, rep))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", present.VisibleCell(st.Name), rep.Status, present.VisibleCell(proto), present.VisibleCell(server), counts, latency, present.VisibleCell(diag))
	}
	tw.Flush()
	if len(details) > 0 {
		fmt.Fprintln(w)
		fmt.Fprint(w, strings.Join(details, "\n"))
	}
}

// checkDetail explains a server's diagnoses under the table. What the
// server said is shown with its control characters made visible.
func checkDetail(name string, rep serverReport) string {
	var b strings.Builder
	for _, d := range rep.Diagnostics {
		fmt.Fprintf(&b, "%s: %s: %s\n", present.VisibleLine(name), present.VisibleLine(string(d.Code)), present.Visible(d.Message))
		for _, e := range d.Evidence {
			fmt.Fprintf(&b, "    %s\n", present.VisibleLine(e))
		}
		if d.Fix != "" {
			fmt.Fprintf(&b, "    fix: %s\n", present.Visible(d.Fix))
		}
	}
	if rep.Status != "ready" && len(rep.StderrTail) > 0 {
		fmt.Fprintf(&b, "    last stderr lines:\n")
		tail := rep.StderrTail
		if len(tail) > 5 {
			tail = tail[len(tail)-5:]
		}
		for _, l := range tail {
			fmt.Fprintf(&b, "      %s\n", present.VisibleLine(l))
		}
	}
	return b.String()
}

// programName is what an ad-hoc server is called: its command's file name,
// without the extension Windows runs programs by (mcptray.exe is mcptray,
// as on Unix).
func programName(command string) string {
	name := filepath.Base(command)
	if runtime.GOOS == "windows" {
		switch ext := filepath.Ext(name); strings.ToLower(ext) {
		case ".exe", ".cmd", ".bat", ".com":
			return strings.TrimSuffix(name, ext)
		}
	}
	return name
}
