package cli

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"mcptray/app"
	"mcptray/gateway"
	"mcptray/registry"
	"mcptray/registry/clients"
)

// routeHelp is what export and install say about --direct and --url.
const routeHelp = `Entries go through mcptray by default: each one runs
'/path/to/mcptray connect NAME' (the installed binary, symbolic links
resolved; '--config FILE' before NAME when the config is not the default
one), so every client session reaches the one instance of NAME that mcptray
supervises, and remote servers too. Such an entry carries none of the
server's env values, headers or URL credentials: mcptray supplies them.
--url writes the server's URL on mcptray's local endpoint instead
(http://127.0.0.1:PORT/mcp/NAME/KEY, for clients that take a URL; the
key is mcptray's own credential, kept in gateway.key beside servers.toml,
and masked on the terminal unless --reveal-secrets); it works only while
the daemon runs, where the bridge starts one. Claude Desktop's file runs
stdio entries only: it keeps the bridge. --direct writes standalone
entries: the client runs (or reaches) the server itself, without mcptray.`

// routeFlags are export's and install's choice of route.
type routeFlags struct{ direct, url *bool }

func addRouteFlags(fs *flag.FlagSet) *routeFlags {
	return &routeFlags{
		direct: fs.Bool("direct", false, "write standalone entries that run or reach the server without mcptray"),
		url:    fs.Bool("url", false, "write the server's URL on mcptray's local endpoint instead of 'mcptray connect NAME'"),
	}
}

// apply sets o.Gateway for cfg unless --direct; the warnings are about the
// binary the entries name.
func (f *routeFlags) apply(env *app.Env, cfg *registry.Config, o *clients.Options) (warnings []string, err error) {
	if *f.direct && *f.url {
		return nil, app.Usagef("--direct and --url exclude each other: --url is a way through mcptray")
	}
	exe, warnings := installedBinary(env.Exe)
	g := &clients.Gateway{Command: exe, UseURL: *f.url}
	if def, err := registry.DefaultPath(); err != nil || def != cfg.Path {
		g.Config = cfg.Path
	}
	if *f.direct {
		// A server with a keyring secret still goes through mcptray.
		o.SecretsVia = g
		return nil, nil
	}
	if *f.url {
		want, key, err := app.EndpointPortAndKey(cfg)
		if err != nil {
			return nil, err
		}
		port, warning, err := app.URLEntryPort(cfg, want)
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
	return warnings, nil
}

// installedBinary is the mcptray binary entries through mcptray run: exe
// (the running one) with symbolic links resolved, or the headless build
// beside it ([HeadlessBinary]). A binary in a go-build folder is said: `go
// run` deletes it when it exits.
func installedBinary(exe string) (string, []string) {
	if exe == "" {
		exe, _ = os.Executable()
	}
	exe = app.HeadlessBeside(exe)
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
