package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"mcptray/gateway"
	"mcptray/registry"
	"mcptray/registry/clients"
)

// EntryRoute is how the entries written into an AI client's config reach
// the servers. `mcptray export`, `mcptray install`, the tray's Copy config
// and the window's Export dialog all decide their entries with
// [PlanEntries], so the same choice gives the same entries everywhere.
type EntryRoute string

const (
	// RouteOne is one entry, mcptray (or mcptray-PROFILE), running
	// `mcptray connect`: every server of the profile as one MCP server.
	RouteOne EntryRoute = "one"
	// RoutePerServer is one entry per server, each `mcptray connect NAME`
	// (or its URL on the local endpoint): the supervised instance, one
	// server at a time.
	RoutePerServer EntryRoute = "per-server"
	// RouteDirect is standalone entries: the client runs or reaches the
	// server itself, without mcptray.
	RouteDirect EntryRoute = "direct"
)

// Routes are the routes in the order they are offered, the default first.
var Routes = []EntryRoute{RouteOne, RoutePerServer, RouteDirect}

// Label names the route for people.
func (r EntryRoute) Label() string {
	switch r {
	case RouteOne:
		return "One entry: mcptray"
	case RoutePerServer:
		return "Per server, through mcptray"
	case RouteDirect:
		return "Direct, without mcptray"
	}
	return string(r)
}

// EntryRequest is what to write.
type EntryRequest struct {
	// Route is the route; "" is RouteOne, or RoutePerServer when Names
	// are given (naming servers asks for their entries).
	Route EntryRoute
	// Profile is the profile of the one entry ("" is the default one).
	Profile string
	// Names are the servers of per-server and direct entries (none: every
	// valid, enabled one, see [clients.Select]).
	Names []string
	// URL writes per-server entries as the servers' URLs on mcptray's
	// local endpoint instead of `mcptray connect NAME`.
	URL bool
}

// Entries are the entries a request decided, ready to render or install
// for any client.
type Entries struct {
	Route   EntryRoute
	Profile string
	// Servers are what is written: the one entry, or the chosen servers
	// (rendered through mcptray unless Route is RouteDirect).
	Servers []*registry.Server
	// Members are the servers the one entry offers (RouteOne only).
	Members []string
	// Skipped are the servers left out of an unnamed selection.
	Skipped []clients.Skipped
	// Warnings are about the binary the entries run and the endpoint.
	Warnings []string
	opts     *clients.Options
	gw       *clients.Gateway
}

// ErrRouteConflict is a request whose parts exclude each other.
var ErrRouteConflict = errors.New("conflicting route")

// PlanEntries decides the entries for req from cfg, with o the client
// options (its Gateway and SecretsVia are set here; the rest, such as the
// target OS and RevealSecrets, is the caller's). env.Exe names the mcptray
// binary the entries run.
func PlanEntries(env *Env, cfg *registry.Config, o *clients.Options, req EntryRequest) (*Entries, error) {
	route := req.Route
	if route == "" {
		route = RouteOne
		if len(req.Names) > 0 {
			route = RoutePerServer
		}
	}
	switch {
	case route == RouteOne && (len(req.Names) > 0 || req.URL):
		return nil, fmt.Errorf("%w: the one entry holds every server of its profile: it takes no server names and no URL", ErrRouteConflict)
	case route == RouteDirect && req.URL:
		return nil, fmt.Errorf("%w: a URL on mcptray's endpoint is a way through mcptray, not direct", ErrRouteConflict)
	case route != RouteOne && req.Profile != "":
		return nil, fmt.Errorf("%w: a profile has one entry, not %s entries", ErrRouteConflict, route)
	case route != RouteOne && route != RoutePerServer && route != RouteDirect:
		return nil, fmt.Errorf("unknown route %q (want %s, %s or %s)", route, RouteOne, RoutePerServer, RouteDirect)
	}
	exe, warnings := InstalledBinary(env.Exe)
	g := &clients.Gateway{Command: exe, UseURL: req.URL}
	if def, err := registry.DefaultPath(); err != nil || def != cfg.Path {
		g.Config = cfg.Path
	}
	e := &Entries{Route: route, Profile: req.Profile, opts: o, gw: g}
	if route == RouteOne {
		name := cmpOr(req.Profile, registry.DefaultProfile)
		p := cfg.Profile(name)
		if p == nil {
			msg := fmt.Sprintf("no profile named %q is configured in %s", name, cfg.Path)
			if near := registry.Nearest(name, cfg.ProfileNames()); near != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", near)
			}
			return nil, errors.New(msg)
		}
		if p.Invalid != nil {
			return nil, fmt.Errorf("%v: fix it in %s first (mcptray config validate)", p.Invalid, cfg.Path)
		}
		for _, s := range cfg.ProfileServers(p) {
			if s.Invalid == nil { // an invalid entry runs nowhere
				e.Members = append(e.Members, s.Name)
			}
		}
		entry := clients.OneEntry(req.Profile, g)
		if o.OS != "" && o.OS != runtime.GOOS {
			// This machine's path means nothing on the target.
			entry.Command = "mcptray"
			if o.OS == "windows" {
				entry.Command = "mcptray.exe"
			}
			warnings = append(warnings, fmt.Sprintf("%s runs %s connect: this machine's path to mcptray means nothing on %s, so the entry names %s, which the client finds only on its PATH; replace it with the full path where mcptray is installed there", entry.Name, entry.Command, o.OS, entry.Command))
		}
		e.Servers = []*registry.Server{entry}
		e.Warnings = warnings
		return e, nil
	}
	servers, skipped, err := clients.Select(cfg, req.Names)
	if err != nil {
		return nil, err
	}
	e.Servers, e.Skipped = servers, skipped
	if route == RouteDirect {
		// A server with a keyring secret still goes through mcptray.
		o.SecretsVia = g
		return e, nil
	}
	if req.URL {
		want, key, err := EndpointPortAndKey(cfg)
		if err != nil {
			return nil, err
		}
		port, warning, err := URLEntryPort(cfg, want)
		if err != nil {
			return nil, err
		}
		if warning != "" {
			warnings = append(warnings, warning)
		}
		g.Key = key
		g.URL = func(name string) string { return gateway.URL(port, key, name) }
	}
	o.Gateway = g
	e.Warnings = warnings
	return e, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Options are the client options the entries are rendered with.
func (e *Entries) Options() *clients.Options { return e.opts }

// Revealed is e rendered with the values of secrets instead of masks and
// placeholders (what a client needs; never shown).
func (e *Entries) Revealed() *Entries {
	r := *e
	o := *e.opts
	o.RevealSecrets = true
	r.opts = &o
	return &r
}

// renderOptions are the options for e.Servers: the one entry is written as
// it is (its command is mcptray's binary already, and it has no secrets).
func (e *Entries) renderOptions() *clients.Options {
	if e.Route != RouteOne {
		return e.opts
	}
	o := *e.opts
	o.Gateway, o.SecretsVia, o.Resolve = nil, nil, nil
	return &o
}

// Render renders the entries for client c as out.
func (e *Entries) Render(c *clients.Client, out clients.Output) (*clients.Result, error) {
	res, err := c.Render(out, e.Servers, e.renderOptions())
	if err != nil {
		return nil, err
	}
	res.Warnings = append(append([]string(nil), e.Warnings...), res.Warnings...)
	return res, nil
}

// Install writes the entries into c's file (fo: another file, or a dry
// run). The one entry replaces the per-server entries mcptray wrote.
func (e *Entries) Install(c *clients.Client, fo *clients.FileOptions) (*clients.Change, error) {
	var ch *clients.Change
	var err error
	if e.Route == RouteOne {
		ch, err = c.InstallOne(e.Profile, e.gw, e.opts, fo, e.Members...)
	} else {
		ch, err = c.Install(e.Servers, e.opts, fo)
	}
	if err != nil {
		return nil, err
	}
	ch.Warnings = append(append([]string(nil), e.Warnings...), ch.Warnings...)
	return ch, nil
}

// Summary says in a line what the entries are and where they go.
func (e *Entries) Summary() string {
	switch e.Route {
	case RouteOne:
		s := e.Servers[0]
		members := e.Members
		if len(members) > 6 {
			members = append(members[:5:5], fmt.Sprintf("and %d more", len(e.Members)-5))
		}
		return fmt.Sprintf("one entry, %s, running %s %s: the %d servers of profile %s (%s) as one MCP server, through mcptray",
			s.Name, filepath.Base(s.Command), strings.Join(s.Args, " "), len(e.Members), cmpOr(e.Profile, registry.DefaultProfile), strings.Join(members, ", "))
	case RoutePerServer:
		via := "mcptray connect NAME"
		if e.gw.UseURL {
			via = "its URL on mcptray's local endpoint"
		}
		return fmt.Sprintf("one entry per server (%d), each through mcptray (%s)", len(e.Servers), via)
	}
	return fmt.Sprintf("one direct entry per server (%d): the client runs or reaches each itself, without mcptray", len(e.Servers))
}

// InstalledBinary is the mcptray binary entries through mcptray run: exe
// (the running one; "" is this process's) with symbolic links resolved,
// or the headless build beside it ([HeadlessBeside]). A binary in a
// go-build folder is said: `go run` deletes it when it exits.
func InstalledBinary(exe string) (string, []string) {
	if exe == "" {
		exe, _ = os.Executable()
	}
	exe = HeadlessBeside(exe)
	if p, err := filepath.Abs(exe); err == nil {
		exe = p
	}
	for _, part := range strings.Split(filepath.ToSlash(filepath.Dir(exe)), "/") {
		if strings.HasPrefix(part, "go-build") {
			return exe, []string{fmt.Sprintf("this mcptray runs from %s, a temporary go-build folder (go run, go test): the entries point at a binary that is deleted when it exits; build or install mcptray (make build, go install) and run that one", filepath.Dir(exe))}
		}
	}
	return exe, nil
}
