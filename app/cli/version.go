package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"

	"mcptray/app"
	"mcptray/demo"
)

func versionFlags(fs *flag.FlagSet) runFunc {
	return func(_ context.Context, env *app.Env, args []string) error {
		if len(args) > 0 {
			return app.Usagef("takes no arguments")
		}
		fmt.Fprintf(env.Stdout, "mcptray %s (%s, %s/%s)\n", app.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return nil
	}
}

const serveDemoHelp = `The demo server is a small, real MCP server (tools echo, add, time; resource
demo://readme; prompt greet). It answers both server/discover (2026-07-28)
and initialize (2025-11-25 and older). It is what a first-run config runs.`

func serveDemoFlags(fs *flag.FlagSet) runFunc {
	versions := fs.String("versions", "", "comma-separated protocol versions to offer (default: all)")
	return func(ctx context.Context, env *app.Env, args []string) error {
		if len(args) > 0 {
			return app.Usagef("takes no arguments")
		}
		var opts demo.Options
		if *versions != "" {
			opts.Versions = strings.Split(*versions, ",")
		}
		fmt.Fprintf(env.Stderr, "mcptray demo server %s ready on stdio\n", demo.Version)
		err := demo.Serve(ctx, os.Stdin, os.Stdout, &opts)
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
}
