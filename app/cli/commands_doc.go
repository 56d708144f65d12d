package cli

import (
	"flag"

	"mcptray/app/clidoc"
)

// Commands is the command table as --help shows it (hidden commands left
// out): what the shell completions and man pages are generated from, so
// they say what --help says.
func Commands() []clidoc.Command { return docCommands(commands) }

// GlobalFlags are the flags taken before the command.
func GlobalFlags() []clidoc.Flag {
	return []clidoc.Flag{{Name: "config", Usage: "the config file, for the command (or the desktop app, with no command)", Value: true}}
}

func docCommands(list []*command) []clidoc.Command {
	var out []clidoc.Command
	for _, c := range list {
		if c.hidden {
			continue
		}
		d := clidoc.Command{Name: c.name, Args: c.args, Summary: c.summary, Help: c.helpText()}
		if c.children != nil {
			d.Children = docCommands(c.children)
		} else {
			// Defining the flags runs nothing: the command is the function
			// it returns, left uncalled.
			fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
			c.flags(fs)
			fs.VisitAll(func(f *flag.Flag) {
				bf, ok := f.Value.(interface{ IsBoolFlag() bool })
				d.Flags = append(d.Flags, clidoc.Flag{Name: f.Name, Usage: f.Usage, Default: f.DefValue, Value: !ok || !bf.IsBoolFlag()})
			})
		}
		out = append(out, d)
	}
	return out
}
