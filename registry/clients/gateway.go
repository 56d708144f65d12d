package clients

import (
	"path"
	"slices"
	"strings"

	"mcptray/registry"
)

// Gateway is how a client reaches the one instance of a server that
// mcptray supervises, instead of running a copy of its own: the bridge
// command `mcptray connect NAME` (stdio), or the server's URL on mcptray's
// local endpoint. With [Options.Gateway] set, every entry is written this
// way and carries none of the server's env, headers or URL credentials:
// mcptray supplies them.
//
// Every client in the table runs stdio entries, so stdio is the default:
// the bridge starts the daemon when none runs and falls back to running the
// server itself when it cannot, while a URL works only while the daemon
// listens on that port, and puts the endpoint's key into the client's file.
// UseURL asks for the URL where the client takes one.
type Gateway struct {
	// Command is the absolute path of the installed mcptray binary.
	Command string
	// Config is the servers.toml the bridge passes as --config; "" for the
	// default one.
	Config string
	// UseURL writes the local endpoint's URL, for clients that take one
	// (Claude Desktop's file runs stdio only: it keeps the bridge).
	UseURL bool
	// URL is a server's address on the local endpoint, key included; needed
	// with UseURL only.
	URL func(name string) string
	// Key is the endpoint's credential (in URL): masked like a secret.
	Key string
}

// Args are the bridge's arguments for server name.
func (g *Gateway) Args(name string) []string {
	args := []string{"connect"}
	if g.Config != "" {
		args = append(args, "--config", g.Config)
	}
	return append(args, name)
}

// takesURL reports whether the client's file has a remote entry a URL can
// go in.
func (c *Client) takesURL() bool { return c.shape.url != "" && !c.Bridge }

// gatewayCommand is mcptray's binary for the target: Command on this OS, a
// bare name (found on the client's PATH) for another OS, where this
// machine's path means nothing.
func (b *builder) gatewayCommand(name string, g *Gateway) string {
	o := b.o
	if o.OS == o.HostOS {
		return g.Command
	}
	bare := "mcptray"
	if o.OS == "windows" {
		bare = "mcptray.exe"
	}
	b.warn("servers.%s runs %s connect: this machine's path to mcptray means nothing on %s, so the entry names %s, which the client finds only on its PATH; replace it with the full path where mcptray is installed there", name, bare, o.OS, bare)
	return bare
}

// throughGateway is src as an entry reaching mcptray by route g: only the
// name (and, where the client has one, the description) of the server is
// kept.
func (b *builder) throughGateway(src *registry.Server, g *Gateway) *built {
	c := b.c
	s := &registry.Server{Name: src.Name, Description: src.Description}
	if why := notStarted(src); why != "" {
		b.warn("servers.%s has %s: mcptray does not start it for a client, so the client reaches it only while it runs (start it from the tray or with `mcptray start %s`, or set start = \"lazy\" to start it with its first client)", s.Name, why, s.Name)
	}
	if g.UseURL && !c.takesURL() {
		b.warn("%s's file runs stdio entries only: servers.%s goes through `mcptray connect`, not the URL", c.Name, s.Name)
	}
	if g.UseURL && c.takesURL() && g.URL != nil {
		u := g.URL(s.Name)
		if g.Key != "" {
			b.secrets = append(b.secrets, g.Key)
			if b.mask && !b.o.RevealSecrets {
				u = strings.ReplaceAll(u, g.Key, Hidden)
				b.warn("the URL of servers.%s holds mcptray's local endpoint key: written as %s, which is not a working value; %s to write it", s.Name, Hidden, b.o.remedies().Reveal)
			}
		}
		s.URL, s.TransportName = u, registry.TransportHTTP
	} else {
		s.Command, s.Args = b.gatewayCommand(s.Name, g), g.Args(s.Name)
	}
	bs := &built{name: s.Name, srv: s}
	bs.entry = b.entry(bs)
	return bs
}

// notStarted says why mcptray would not start src for a client ("" when it
// would: with the engine, or lazily with its first client).
func notStarted(src *registry.Server) string {
	switch {
	case src.Disabled:
		return "disabled = true"
	case src.StartMode() != registry.StartManual:
		return ""
	case src.Start != "":
		return `start = "manual"`
	}
	return "autostart = false"
}

// Route is how an entry reaches its server.
type Route string

const (
	RouteDirect  Route = "direct"  // the client runs the server, or connects to it, itself
	RouteConnect Route = "connect" // `mcptray connect NAME`
	RouteURL     Route = "url"     // mcptray's local endpoint
)

// RouteOf says how entry s (as imported from a client's file) reaches its
// server.
func RouteOf(s *registry.Server) Route {
	if _, _, ok := registry.LocalEndpoint(s.URL); ok {
		return RouteURL
	}
	// mcptray, mcptray.exe, mcptray-headless (the build entries run when it
	// sits beside the desktop one).
	base := strings.ToLower(path.Base(strings.ReplaceAll(s.Command, `\`, "/")))
	if strings.HasPrefix(base, "mcptray") && len(s.Args) > 0 && s.Args[0] == "connect" {
		return RouteConnect
	}
	return RouteDirect
}

// Switch is an entry that changes route: a direct entry replaced by one
// through mcptray, or the reverse.
type Switch struct {
	Name     string
	From, To Route
	// Was, Is: the entry's command line (program without its folder) or
	// URL, before and after; URL credentials masked unless secrets are
	// revealed.
	Was, Is string
}

func (sw Switch) String() string {
	return sw.Name + ": " + describeRoute(sw.From, sw.Was) + " → " + describeRoute(sw.To, sw.Is)
}

func describeRoute(r Route, what string) string {
	switch r {
	case RouteConnect:
		return "through mcptray (" + what + ")"
	case RouteURL:
		return "through mcptray's local endpoint (" + what + ")"
	}
	return "direct entry (" + what + ")"
}

// commandLine is how an entry reads in a [Switch]: the URL, or the program
// without its folder and its arguments.
func commandLine(s *registry.Server, reveal bool) string {
	if !reveal {
		s = s.Redacted()
	}
	if s.IsRemote() {
		return s.URL
	}
	prog := path.Base(strings.ReplaceAll(s.Command, `\`, "/"))
	return ShellJoin(append([]string{prog}, s.Args...))
}

// keyringNames are the ${keyring:NAME} secrets src's values refer to.
func keyringNames(src *registry.Server) []string {
	var names []string
	_, _ = src.ExpandWith(func(string) (string, bool) { return "", true }, func(name string) (string, error) {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
		return "", nil
	})
	return names
}
