package app

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"mcptray/demo"
)

func init() {
	register(&command{name: "version", summary: "print mcptray's version, commit, build date and build (desktop or headless)", flags: func(fs *flag.FlagSet) func(context.Context, *Env, []string) error {
		asJSON := fs.Bool("json", false, "print a JSON object: version, commit, date, build, go, os, arch")
		return func(_ context.Context, env *Env, args []string) error {
			if len(args) > 0 {
				return usagef("takes no arguments")
			}
			return printVersion(env.Stdout, versionInfo(env), *asJSON)
		}
	}})
	register(&command{
		name:    "serve-demo",
		summary: "run the built-in demo MCP server on stdin/stdout",
		help: `The demo server is a small, real MCP server (tools echo, add, time; resource
demo://readme; prompt greet). It answers both server/discover (2026-07-28)
and initialize (2025-11-25 and older). It is what a first-run config runs.`,
		flags: func(fs *flag.FlagSet) func(context.Context, *Env, []string) error {
			versions := fs.String("versions", "", "comma-separated protocol versions to offer (default: all)")
			return func(ctx context.Context, env *Env, args []string) error {
				if len(args) > 0 {
					return usagef("takes no arguments")
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
		},
	})
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
