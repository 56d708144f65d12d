package cli

import (
	"errors"
	"flag"
	"fmt"

	"mcptray/app"
	"mcptray/registry"
	"mcptray/registry/clients"
)

// routeHelp is what export and install say about the routes.
const routeHelp = `Routes. With no NAME, the entry is ONE: mcptray, running
'/path/to/mcptray connect' (every enabled server as one MCP server, their
tools named SERVER__TOOL; with --profile PROFILE, mcptray-PROFILE running
'mcptray connect --profile PROFILE'). --per-server (or NAMEs) writes one
entry per server instead, each running '/path/to/mcptray connect NAME'
(the installed binary, symbolic links resolved; '--config FILE' before NAME
when the config is not the default one), so every client session reaches
the one instance of NAME that mcptray supervises, and remote servers too.
Entries through mcptray carry none of the servers' env values, headers or
URL credentials: mcptray supplies them. --url writes each server's URL on
mcptray's local endpoint instead (http://127.0.0.1:PORT/mcp/NAME/KEY, for
clients that take a URL; the key is mcptray's own credential, kept in
gateway.key beside servers.toml, and masked on the terminal unless
--reveal-secrets); it works only while the daemon runs, where the bridge
starts one. Claude Desktop's file runs stdio entries only: it keeps the
bridge. --direct writes standalone entries: the client runs (or reaches)
the server itself, without mcptray. The window's Export dialog offers the
same three routes.`

// routeFlags are export's and install's choice of route, the same on both.
type routeFlags struct {
	direct, url, perServer *bool
	profile                *string
}

func addRouteFlags(fs *flag.FlagSet) *routeFlags {
	return &routeFlags{
		direct:    fs.Bool("direct", false, "write standalone entries that run or reach the server without mcptray"),
		url:       fs.Bool("url", false, "write the server's URL on mcptray's local endpoint instead of 'mcptray connect NAME'"),
		perServer: fs.Bool("per-server", false, "write one entry per server (with no NAME, every valid, enabled one) instead of the one entry mcptray"),
		profile:   fs.String("profile", "", "write the one entry mcptray-`PROFILE` for that profile's servers (default: mcptray, for every enabled server)"),
	}
}

// request is the route the flags and NAMEs ask for: the one entry unless
// NAMEs, --per-server, --direct or --url ask for entries per server.
func (f *routeFlags) request(args []string) (app.EntryRequest, error) {
	req := app.EntryRequest{Names: args, URL: *f.url, Profile: *f.profile}
	switch {
	case *f.direct && *f.url:
		return req, app.Usagef("--direct and --url exclude each other: --url is a way through mcptray")
	case *f.profile != "" && (len(args) > 0 || *f.perServer || *f.direct || *f.url):
		return req, app.Usagef("--profile writes the one entry mcptray-%s: it takes no NAME, --per-server, --direct or --url", *f.profile)
	case *f.direct:
		req.Route = app.RouteDirect
	case len(args) > 0 || *f.perServer || *f.url:
		req.Route = app.RoutePerServer
	default:
		req.Route = app.RouteOne
	}
	return req, nil
}

// plan decides the entries for the flags and NAMEs ([app.PlanEntries]) and
// says which servers an unnamed selection left out.
func (f *routeFlags) plan(env *app.Env, cfg *registry.Config, o *clients.Options, args []string, verb string) (*app.Entries, error) {
	req, err := f.request(args)
	if err != nil {
		return nil, err
	}
	e, err := app.PlanEntries(env, cfg, o, req)
	var ue *clients.UnknownServerError
	switch {
	case errors.As(err, &ue):
		return nil, app.Usagef("%v", err)
	case errors.Is(err, clients.ErrNoServers):
		return nil, fmt.Errorf("no servers to %s in %s", verb, cfg.Path)
	case err != nil:
		return nil, err
	}
	for _, s := range e.Skipped {
		if s.Invalid != nil {
			fmt.Fprintf(env.Stderr, "mcptray %s: warning: skipped %v\n", verb, s)
		} else {
			fmt.Fprintf(env.Stderr, "mcptray %s: skipped servers.%s: disabled (name it to %s it anyway)\n", verb, s.Name, verb)
		}
	}
	return e, nil
}
