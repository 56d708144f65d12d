package app

import (
	"context"
	"flag"

	"mcptray/app/clidoc"
)

func init() {
	register(&command{
		name:    "completion",
		args:    "bash|zsh|fish",
		summary: "print the shell completion script for bash, zsh or fish",
		help: `The packages install these already. By hand:
  bash  mcptray completion bash > ~/.local/share/bash-completion/completions/mcptray
  zsh   mcptray completion zsh > "${fpath[1]}/_mcptray"   (a folder in $fpath)
  fish  mcptray completion fish > ~/.config/fish/completions/mcptray.fish`,
		flags: func(fs *flag.FlagSet) func(context.Context, *Env, []string) error {
			return func(_ context.Context, env *Env, args []string) error {
				if len(args) != 1 {
					return usagef("which shell? bash, zsh or fish")
				}
				switch args[0] {
				case "bash":
					return clidoc.Bash(env.Stdout, []string{"mcptray", "mcptray-headless"}, Commands(), GlobalFlags())
				case "zsh":
					return clidoc.Zsh(env.Stdout, []string{"mcptray", "mcptray-headless"}, Commands(), GlobalFlags())
				case "fish":
					return clidoc.Fish(env.Stdout, "mcptray", Commands(), GlobalFlags())
				}
				return usagef("unknown shell %q: bash, zsh or fish", args[0])
			}
		},
	})
}
