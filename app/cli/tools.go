package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"

	"mcptray/app"
	"mcptray/app/present"
	"mcptray/registry/tooltrust"
)

const toolsDiffHelp = `Lists the tools mcptray holds back from every client, with why: a tool whose
definition changed since it was approved (shown as a diff of the approved
definition and the new one), a tool of a new server (with approve_new_servers
in [settings]), or one held by hand. Signs of hidden instructions in a held
tool's definition are flagged with their reason. SERVER and TOOL narrow the
list. Exit status: 0 whether or not anything is held, 2 when the approvals
file cannot be read.`

const toolsApproveHelp = `Approves a held tool as its server lists it now: it reaches clients again
(sessions are told its list changed). Without TOOL, every held tool of
SERVER is approved.`

const toolsHoldHelp = `Holds a tool back from every client until it is approved
(mcptray tools approve SERVER TOOL).`

// trustStore opens the tool approvals of the config named by --config.
func trustStore(env *app.Env, cfgPath string) (*tooltrust.Store, error) {
	cfg, err := app.LoadConfig(env, cfgPath, true)
	if err != nil {
		return nil, err
	}
	st, err := app.OpenTrust(cfg)
	if err != nil {
		return nil, app.ConfigError{Err: err}
	}
	return st, nil
}

func toolsDiffFlags(fs *flag.FlagSet) runFunc {
	cfgPath := configFlag(fs)
	asJSON := fs.Bool("json", false, "print the held tools as JSON (old and new definitions, flags)")
	return func(_ context.Context, env *app.Env, args []string) error {
		if len(args) > 2 {
			return app.Usagef("takes at most SERVER and TOOL")
		}
		st, err := trustStore(env, *cfgPath)
		if err != nil {
			return err
		}
		var held []tooltrust.Held
		for _, h := range st.List() {
			if (len(args) < 1 || h.Server == args[0]) && (len(args) < 2 || h.Tool == args[1]) {
				held = append(held, h)
			}
		}
		if *asJSON {
			if held == nil {
				held = []tooltrust.Held{}
			}
			b, _ := json.MarshalIndent(held, "", "  ")
			fmt.Fprintln(env.Stdout, string(present.EscapeJSONControls(b)))
			return nil
		}
		if len(held) == 0 {
			what := "no tool is held"
			if len(args) > 0 {
				what = fmt.Sprintf("no tool of %s is held", strings.Join(args, " "))
			}
			fmt.Fprintln(env.Stdout, what)
			return nil
		}
		for i, h := range held {
			if i > 0 {
				fmt.Fprintln(env.Stdout)
			}
			fmt.Fprintf(env.Stdout, "%s %s: held since %s (%s)\n", present.VisibleLine(h.Server), present.VisibleLine(h.Tool), h.Since.Local().Format("2006-01-02 15:04"), h.Reason)
			fmt.Fprintf(env.Stdout, "  %s\n", present.VisibleLine(h.Why()))
			for _, f := range h.Flags {
				fmt.Fprintf(env.Stdout, "  ! %s: %s\n", present.VisibleLine(f.Field), present.VisibleLine(f.Reason))
			}
			if h.Reason != tooltrust.ReasonByHand {
				for _, l := range strings.Split(strings.TrimRight(h.Diff(), "\n"), "\n") {
					fmt.Fprintf(env.Stdout, "  %s\n", present.VisibleLine(l))
				}
			}
		}
		return nil
	}
}

func toolsApproveFlags(fs *flag.FlagSet) runFunc {
	cfgPath := configFlag(fs)
	return func(_ context.Context, env *app.Env, args []string) error {
		if len(args) < 1 || len(args) > 2 {
			return app.Usagef("takes SERVER and TOOL (SERVER alone: every held tool of it)")
		}
		st, err := trustStore(env, *cfgPath)
		if err != nil {
			return err
		}
		tool := ""
		if len(args) == 2 {
			tool = args[1]
		}
		before := st.HeldTools(args[0])
		if err := st.Approve(args[0], tool); err != nil {
			if errors.Is(err, tooltrust.ErrUnknown) || errors.Is(err, tooltrust.ErrNotHeld) {
				return app.Usagef("%v", err)
			}
			return err
		}
		if tool != "" {
			before = []string{tool}
		}
		fmt.Fprintf(env.Stdout, "approved %s: %s (sessions through mcptray are told their tools changed)\n", present.VisibleLine(args[0]), present.VisibleLine(strings.Join(before, ", ")))
		return nil
	}
}

func toolsHoldFlags(fs *flag.FlagSet) runFunc {
	cfgPath := configFlag(fs)
	return func(_ context.Context, env *app.Env, args []string) error {
		if len(args) != 2 {
			return app.Usagef("takes SERVER and TOOL")
		}
		st, err := trustStore(env, *cfgPath)
		if err != nil {
			return err
		}
		if err := st.HoldTool(args[0], args[1]); err != nil {
			if errors.Is(err, tooltrust.ErrUnknown) {
				return app.Usagef("%v", err)
			}
			return err
		}
		a, t := present.VisibleLine(args[0]), present.VisibleLine(args[1])
		fmt.Fprintf(env.Stdout, "held %s %s: no client reaches it through mcptray until `mcptray tools approve %s %s`\n", a, t, a, t)
		return nil
	}
}
