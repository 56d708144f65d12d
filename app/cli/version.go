package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"mcptray/app"
	"mcptray/demo"
)

func versionFlags(fs *flag.FlagSet) runFunc {
	asJSON := fs.Bool("json", false, "print a JSON object: version, commit, date, build, go, os, arch")
	return func(_ context.Context, env *app.Env, args []string) error {
		if len(args) > 0 {
			return app.Usagef("takes no arguments")
		}
		return printVersion(env.Stdout, app.BuildVersion(env), *asJSON)
	}
}

func printVersion(w io.Writer, v app.VersionInfo, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	fmt.Fprintf(w, "mcptray %s (%s build", v.Version, v.Build)
	if v.Commit != "" {
		fmt.Fprintf(w, ", commit %s", v.Commit)
	}
	if v.Date != "" {
		fmt.Fprintf(w, ", built %s", v.Date)
	}
	fmt.Fprintf(w, ", %s, %s/%s)\n", v.Go, v.OS, v.Arch)
	return nil
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
