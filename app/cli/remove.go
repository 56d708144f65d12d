package cli

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"mcptray/app"
	"mcptray/app/present"
	"mcptray/registry"
)

const removeHelp = `Removes the named servers from servers.toml (the file as it was is kept as
servers.toml.bak); a running daemon stops them as it reloads the file.

A server added from an MCP bundle (mcptray add FILE.mcpb) runs from the
folder the bundle was unpacked into, in mcptray's data folder: remove asks
on a terminal whether to delete it too (default no). --delete-files deletes
it without asking, --keep-files keeps it; with no terminal and neither flag
it is kept, and said. A folder another server still runs from is kept.`

func removeFlags(fs *flag.FlagSet) runFunc {
	cfgPath := configFlag(fs)
	del := fs.Bool("delete-files", false, "delete the unpacked folders of servers added from MCP bundles, without asking")
	keep := fs.Bool("keep-files", false, "keep the unpacked folders of servers added from MCP bundles, without asking")
	return func(_ context.Context, env *app.Env, args []string) error {
		if len(args) == 0 {
			return app.Usagef("name the servers to remove")
		}
		if *del && *keep {
			return app.Usagef("--delete-files and --keep-files exclude each other")
		}
		loc, err := registry.Locate(*cfgPath)
		if err != nil {
			return app.ConfigError{Err: err}
		}
		cfg, err := registry.OpenForUpdate(loc, env.Exe)
		if err != nil {
			return app.ConfigError{Err: err}
		}
		if _, err := app.SelectServers(cfg, args); err != nil {
			return err
		}
		folders, err := app.BundleFolders(cfg, args, "")
		if err != nil {
			return err
		}
		var remove, kept []app.BundleFolder
		for _, f := range folders {
			switch {
			case *del:
				remove = append(remove, f)
			case *keep:
				kept = append(kept, f)
			case askYesNo(env, fmt.Sprintf("%s was added from the MCP bundle %s: delete its unpacked folder %s too?", present.VisibleLine(f.Server), present.VisibleLine(f.Bundle), f.Folder)):
				remove = append(remove, f)
			default:
				kept = append(kept, f)
			}
		}
		if err := app.RemoveServers(cfg, args, remove, ""); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "removed %s from %s (the file as it was: %s.bak)\n", present.VisibleLine(strings.Join(args, ", ")), cfg.Path, cfg.Path)
		for _, f := range remove {
			fmt.Fprintf(env.Stdout, "deleted %s, the unpacked bundle %s of %s\n", f.Folder, present.VisibleLine(f.Bundle), present.VisibleLine(f.Server))
		}
		for _, f := range kept {
			fmt.Fprintf(env.Stderr, "mcptray remove: note: kept %s, the unpacked bundle %s of %s (delete it yourself, or remove with --delete-files next time)\n", f.Folder, present.VisibleLine(f.Bundle), present.VisibleLine(f.Server))
		}
		return nil
	}
}
