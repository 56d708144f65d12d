package cli

import (
	"context"
	"flag"
	"fmt"

	"mcptray/app"
	"mcptray/app/present"
	"mcptray/supervisor"
)

const logsHelp = `Prints the last lines (-n, default 100; 0 for every line kept) that server
NAME wrote to stderr. -f keeps printing new lines until Ctrl-C.`

func logsFlags(fs *flag.FlagSet) runFunc {
	follow := fs.Bool("f", false, "keep printing new lines as they are written")
	n := fs.Int("n", 100, "how many of the last lines to print (0: all)")
	withTime := fs.Bool("t", false, "prefix each line with its time")
	return func(ctx context.Context, env *app.Env, args []string) error {
		if len(args) != 1 {
			return app.Usagef("name one server")
		}
		if *n < 0 {
			return app.Usagef("-n must be 0 or more, not %d", *n)
		}
		c, err := app.DialDaemon(ctx)
		if err != nil {
			return err
		}
		page, err := c.LogPage(ctx, args[0], 0)
		if err != nil {
			return err
		}
		lines := page.Lines
		if *n > 0 && len(lines) > *n {
			lines = lines[len(lines)-*n:]
		}
		print := func(l supervisor.LogLine) {
			// A server's stderr may hold terminal escapes: show them,
			// do not obey them.
			if *withTime {
				fmt.Fprintf(env.Stdout, "%s  %s\n", l.Time.Local().Format("2006-01-02 15:04:05.000"), present.VisibleLine(l.Text))
				return
			}
			fmt.Fprintln(env.Stdout, present.VisibleLine(l.Text))
		}
		for _, l := range lines {
			print(l)
		}
		if !*follow {
			return nil
		}
		return c.FollowLog(ctx, args[0], page.Next, print)
	}
}
