package cli

import (
	"context"
	"flag"

	"mcptray/app"
	"mcptray/app/clidoc"
)

const completionHelp = `The packages install these already. By hand:
  bash  mcptray completion bash > ~/.local/share/bash-completion/completions/mcptray
  zsh   mcptray completion zsh > "${fpath[1]}/_mcptray"   (a folder in $fpath)
  fish  mcptray completion fish > ~/.config/fish/completions/mcptray.fish`

func completionFlags(fs *flag.FlagSet) runFunc {
	return func(_ context.Context, env *app.Env, args []string) error {
		if len(args) != 1 {
			return app.Usagef("which shell? bash, zsh or fish")
		}
		switch args[0] {
		case "bash":
			return clidoc.Bash(env.Stdout, []string{"mcptray", "mcptray-headless"}, Commands(), GlobalFlags())
		case "zsh":
			return clidoc.Zsh(env.Stdout, []string{"mcptray", "mcptray-headless"}, Commands(), GlobalFlags())
		case "fish":
			return clidoc.Fish(env.Stdout, "mcptray", Commands(), GlobalFlags())
		}
		return app.Usagef("unknown shell %q: bash, zsh or fish", args[0])
	}
}
