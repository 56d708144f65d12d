package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"mcptray/app"
	"mcptray/app/present"
	"mcptray/supervisor"
)

const upHelp = `Starts every server (or the named ones) the way the desktop app does:
login-shell environment, restart with backoff, crash-loop detection. Prints
one line per state change until Ctrl-C (SIGINT) or SIGTERM, then stops
every server, and everything they started, and exits 0.

--json prints one JSON object per line: time, server, state, reason, pid
(while a process runs), restarts, and code (the diagnosis) when there is one.`

func upFlags(fs *flag.FlagSet) runFunc {
	cfgPath := configFlag(fs)
	asJSON := fs.Bool("json", false, "print one JSON object per line")
	return func(ctx context.Context, env *app.Env, args []string) error {
		cfg, err := app.LoadConfig(env, *cfgPath, false)
		if err != nil {
			return err
		}
		servers, err := app.SelectServers(cfg, args)
		if err != nil {
			return err
		}
		if len(servers) == 0 {
			return app.ConfigError{Err: fmt.Errorf("%s has no servers", cfg.Path)}
		}
		opts := app.NewEngineOptions(cfg, app.EngineSetup{Terminal: true})
		opts.Logger = app.WarningLogger(env.Stderr, "mcptray up: ")
		sup := supervisor.New(servers, opts)
		return runUp(ctx, sup, env.Stdout, *asJSON)
	}
}

// runUp runs sup until ctx ends, printing state changes to w.
func runUp(ctx context.Context, sup *supervisor.Supervisor, w io.Writer, asJSON bool) error {
	done := make(chan error, 1)
	go func() { done <- sup.Run(ctx) }()
	p := &upPrinter{w: w, json: asJSON, last: map[string]supervisor.ServerState{}}
	// The first snapshot: servers about to start need no line of their own.
	first := sup.Snapshot()
	for _, st := range first.Servers {
		if st.State == supervisor.StateStopped && st.Reason == supervisor.ReasonNotStarted {
			p.last[st.Name] = st
		}
	}
	p.print(first)
	for {
		select {
		case <-sup.Changes():
			p.print(sup.Snapshot())
		case err := <-done:
			p.print(sup.Snapshot())
			return err
		}
	}
}

// upPrinter prints the servers whose state or reason changed since the
// last snapshot.
type upPrinter struct {
	w     io.Writer
	json  bool
	last  map[string]supervisor.ServerState
	width int
}

type upLine struct {
	Time        string   `json:"time"`
	Server      string   `json:"server"`
	State       string   `json:"state"`
	Reason      string   `json:"reason"`
	PID         int      `json:"pid,omitempty"`
	Restarts    int      `json:"restarts"`
	Code        string   `json:"code,omitempty"`
	NextAttempt string   `json:"nextAttempt,omitempty"`
	Command     string   `json:"command,omitempty"`
	Warnings    []string `json:"warnings,omitempty"` // codes
}

func (p *upPrinter) print(snap supervisor.Snapshot) {
	for _, st := range snap.Servers {
		p.width = max(p.width, len(st.Name))
	}
	for _, st := range snap.Servers {
		prev, seen := p.last[st.Name]
		p.last[st.Name] = st
		if seen && prev.State == st.State && prev.Reason == st.Reason && len(prev.Warnings) == len(st.Warnings) {
			continue
		}
		var warns []string
		for _, w := range st.Warnings {
			warns = append(warns, string(w.Code))
		}
		t := st.Since
		if t.IsZero() {
			t = snap.Time
		}
		if p.json {
			l := upLine{
				Time: t.Format(time.RFC3339Nano), Server: st.Name, State: string(st.State), Reason: st.Reason,
				PID: st.PID, Restarts: st.Restarts, Command: st.Command, Warnings: warns,
			}
			if st.Diagnosis != nil {
				l.Code = string(st.Diagnosis.Code)
			}
			if !st.NextAttempt.IsZero() {
				l.NextAttempt = st.NextAttempt.Format(time.RFC3339Nano)
			}
			writeJSONLine(p.w, l)
			continue
		}
		reason := present.VisibleLine(st.Reason)
		if len(warns) > 0 {
			reason += " (warning: " + strings.Join(warns, ", ") + ")"
		}
		fmt.Fprintf(p.w, "%s  %-*s  %-13s  %s\n", t.Local().Format("15:04:05"), p.width, present.VisibleLine(st.Name), st.State, reason)
		// A server that will not come back on its own gets its evidence and
		// the fix, so the person knows what to do.
		if d := st.Diagnosis; d != nil && (st.State == supervisor.StateFailed || st.State == supervisor.StateCrashLooping) {
			indent := strings.Repeat(" ", 10+p.width)
			ev := d.Evidence
			if len(ev) > 5 {
				ev = ev[len(ev)-5:]
			}
			for _, e := range ev {
				fmt.Fprintf(p.w, "%s%s\n", indent, present.VisibleLine(e))
			}
			if d.Fix != "" {
				fmt.Fprintf(p.w, "%sfix: %s\n", indent, present.Visible(d.Fix))
			}
		}
	}
}

// writeJSONLine writes v as one line of JSON.
func writeJSONLine(w io.Writer, v any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	w.Write(present.EscapeJSONControls(b.Bytes()))
}
