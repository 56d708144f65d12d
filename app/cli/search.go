package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"

	"mcptray/app"
	"mcptray/registry"
	"mcptray/registry/catalog"
)

const searchHelp = `Lists the servers of the MCP Registry whose name holds QUERY (the latest
version of each): name, version, how it runs (npm, PyPI, OCI image, MCP
bundle, remote URL) and description. The registry is --registry, else
[settings] registry in servers.toml, else the official one
(https://registry.modelcontextprotocol.io); organisations run their own.
Answers are cached with their ETag, so a registry that cannot be reached
still answers what it answered before (marked stale). "mcptray add NAME"
adds one.`

func searchFlags(fs *flag.FlagSet) runFunc {
	cfgPath := configFlag(fs)
	regURL := fs.String("registry", "", "the MCP Registry's base URL (default: [settings] registry, else the official one)")
	asJSON := fs.Bool("json", false, "print the registry's answers as JSON")
	limit := fs.Int("limit", 50, "list at most this many servers (following the registry's pages)")
	return func(ctx context.Context, env *app.Env, args []string) error {
		if len(args) > 1 {
			return app.Usagef("takes one QUERY (quote a query with spaces)")
		}
		if *limit <= 0 {
			return app.Usagef("--limit must be positive")
		}
		query := ""
		if len(args) == 1 {
			query = args[0]
		}
		c, err := registryClient(env, *cfgPath, *regURL)
		if err != nil {
			return err
		}
		var found []catalog.Response
		stale, more := false, false
		cursor := ""
		for len(found) < *limit {
			p, err := c.Search(ctx, query, &catalog.SearchOptions{Cursor: cursor})
			if err != nil {
				return err
			}
			stale = stale || p.Stale
			found = append(found, p.Servers...)
			if cursor = p.NextCursor; cursor == "" {
				break
			}
		}
		if len(found) > *limit {
			found, more = found[:*limit], true
		} else if cursor != "" {
			more = true
		}
		if *asJSON {
			if found == nil {
				found = []catalog.Response{}
			}
			writeJSON(env.Stdout, found)
			return nil
		}
		if stale {
			fmt.Fprintf(env.Stderr, "mcptray search: %s cannot be reached: these are its answers from before\n", c.BaseURL())
		}
		if len(found) == 0 {
			fmt.Fprintf(env.Stdout, "no server in %s has %q in its name\n", c.BaseURL(), query)
			return nil
		}
		tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tVERSION\tRUNS AS\tDESCRIPTION")
		for _, r := range found {
			s := r.Server
			desc := s.Description
			if s.Title != "" && !strings.EqualFold(s.Title, desc) {
				desc = s.Title + ": " + desc
			}
			if st := r.Status(); st != "active" {
				desc = "(" + st + ") " + desc
			}
			if err := s.CheckSchema(); err != nil {
				var se *catalog.SchemaError
				if errors.As(err, &se) {
					desc = "(schema " + se.Schema + ": mcptray cannot add it) " + desc
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Name, s.Version, strings.Join(s.HowItRuns(), ", "), registry.Visible(desc))
		}
		tw.Flush()
		if more {
			fmt.Fprintf(env.Stdout, "(more in %s: narrow QUERY or raise --limit)\n", c.BaseURL())
		}
		return nil
	}
}

// registryClient is the registry client for a command's --config and
// --registry.
func registryClient(env *app.Env, cfgPath, regURL string) (*catalog.Client, error) {
	var cfg *registry.Config
	if regURL == "" {
		// The setting is read only when no URL is given; a config that
		// does not exist yet means the default registry.
		if loc, err := registry.Locate(cfgPath); err == nil {
			if c, err := registry.Load(loc.Path); err == nil {
				cfg = c
			}
		}
	}
	return app.RegistryClient(cfg, regURL)
}
