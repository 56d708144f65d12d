package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"mcptray/control"
	"mcptray/gateway"
	"mcptray/healthcheck"
	"mcptray/registry"
	"mcptray/registry/tooltrust"
)

// daemonGateway is the daemon's gateway: the relay itself, and the local
// HTTP endpoint when it could listen.
type daemonGateway struct {
	gw      *gateway.Gateway
	key     string
	ln      net.Listener // nil when not listening
	port    int
	problem string // why not listening
	exe     string
}

// startGateway makes the gateway of eng's servers and takes the local
// endpoint's port: the configured one, else the next free one.
func startGateway(cfg *registry.Config, eng *control.Local, trust *tooltrust.Store, logf func(string, ...any)) (*daemonGateway, error) {
	opts := &gateway.Options{Trust: trust}
	if cfg.Path != "" {
		// A lazy server's tools are listed by an aggregate from its last
		// catalogue, kept beside the config.
		opts.CatalogueDir = gateway.CataloguesDir(cfg.Path)
	}
	d := &daemonGateway{gw: gateway.New(eng.Supervisor(), opts)}
	eng.ServeProfiles(d.gw)
	d.exe, _ = HeadlessBinary()
	want, key, err := EndpointPortAndKey(cfg)
	if err != nil {
		d.problem = err.Error()
		logf("the local HTTP endpoint is off: %v", err)
		return d, nil
	}
	d.key = key
	var errs []error
	for p := want; p < want+gateway.PortRange && p <= 65535; p++ {
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			errs = append(errs, err)
			if !addrInUse(err) {
				break
			}
			continue
		}
		d.ln, d.port = ln, p
		if p != want {
			logf("port %d is taken: the local HTTP endpoint listens on %d (entries written now name %d; those written with %d do not reach it; free %d or set gateway_port in [settings])", want, p, p, want, want)
		}
		return d, nil
	}
	d.problem = fmt.Sprintf("cannot listen on 127.0.0.1:%d-%d: %v", want, want+gateway.PortRange-1, errors.Join(errs...))
	logf("the local HTTP endpoint is off: %s", d.problem)
	return d, nil
}

// run serves the endpoint and follows the servers until ctx ends.
func (d *daemonGateway) run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { _ = d.gw.Run(ctx) })
	if d.ln != nil {
		hs := d.gw.HTTPServer(ctx, gateway.HTTPOptions{Key: d.key, SameUser: gateway.PeerIsSameUser})
		wg.Go(func() { _ = hs.Serve(d.ln) })
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		if hs.Shutdown(sctx) != nil {
			hs.Close()
		}
		cancel()
	}
	wg.Wait()
}

// info is /v1/gateway's answer.
func (d *daemonGateway) info(eng *control.Local) control.GatewayInfo {
	gi := control.GatewayInfo{Port: d.port, Problem: d.problem, Servers: []control.GatewayServer{}}
	byName := map[string]gateway.Server{}
	for _, s := range d.gw.Servers() {
		byName[s.Name] = s
	}
	for _, st := range eng.Snapshot().Servers {
		gs := control.GatewayServer{Name: st.Name, Command: []string{d.exe, "connect", st.Name}, Sessions: []gateway.Session{}}
		if d.ln != nil {
			gs.URL = gateway.URL(d.port, d.key, st.Name)
		}
		if s, ok := byName[st.Name]; ok {
			gs.Sessions, gs.Usage = s.Sessions, s.Usage
		}
		gi.Servers = append(gi.Servers, gs)
	}
	port := 0
	if d.ln != nil {
		port = d.port
	}
	gi.Profiles = control.Profiles(d.gw, d.exe, port, d.key)
	return gi
}

// HeadlessName is the headless build's file name beside the desktop one.
const HeadlessName = "mcptray-headless"

// HeadlessBinary is what AI clients' entries, bridges and the daemon run:
// the headless build beside this binary when there is one (a third of the
// desktop build's memory: no GUI libraries to load), else this binary,
// symlinks resolved.
func HeadlessBinary() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	return HeadlessBeside(exe), nil
}

// HeadlessBeside is [HeadlessBinary] for the binary exe.
func HeadlessBeside(exe string) string {
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	ext := filepath.Ext(exe)
	if strings.TrimSuffix(filepath.Base(exe), ext) == HeadlessName {
		return exe
	}
	sibling := filepath.Join(filepath.Dir(exe), HeadlessName+ext)
	if fi, err := os.Stat(sibling); err == nil && fi.Mode().IsRegular() && runnable(fi.Mode()) {
		return sibling
	}
	return exe
}

// runnable says whether a regular file of mode m may be run. Windows keeps
// no execute bits (Go reports 0666 for every writable file): there the
// name's extension, the one this binary has, is what makes it a program.
func runnable(m fs.FileMode) bool {
	return runtime.GOOS == "windows" || m&0o111 != 0
}

// openTrust is the store of approved tool definitions beside cfg, which
// the gateway holds changed tools by. One that cannot be read is said
// and left out: every tool then reaches the clients, as before approvals.
func openTrust(cfg *registry.Config, logf func(string, ...any)) *tooltrust.Store {
	st, err := OpenTrust(cfg)
	if err != nil {
		logf("tools are not held for approval: %v", err)
		return nil
	}
	return st
}

// OpenTrust opens the tool approvals of cfg (tooltrust.PathFor beside its
// file), with its [settings] approve_new_servers.
func OpenTrust(cfg *registry.Config) (*tooltrust.Store, error) {
	return tooltrust.Open(tooltrust.PathFor(cfg.Path), &tooltrust.Options{HoldNewServers: cfg.Settings.ApproveNewServers})
}

// HeldCallError is why a call of server's tool must not be sent (nil when
// it may): the tool is held for approval in cfg's tool approvals, as every
// client session through mcptray is refused it. rep, the session's report,
// is recorded first, so a definition that changed since it was approved is
// held even when no daemon saw it change.
func HeldCallError(cfg *registry.Config, server, tool string, rep *healthcheck.Report) error {
	st, err := OpenTrust(cfg)
	if err != nil {
		return fmt.Errorf("reading the tool approvals: %w", err)
	}
	if rep != nil && len(rep.Tools) > 0 {
		defs := make([]json.RawMessage, 0, len(rep.Tools))
		for _, t := range rep.Tools {
			if b, err := json.Marshal(t); err == nil {
				defs = append(defs, b)
			}
		}
		if err := st.Observe(server, defs); err != nil {
			return fmt.Errorf("recording the tools of %s in %s: %w", server, st.Path(), err)
		}
	}
	h, ok := st.Held(server, tool)
	if !ok {
		return nil
	}
	why := tooltrust.Held{Server: server, Tool: tool, Reason: h.Reason}.Why()
	return fmt.Errorf("tool %s of server %s is held back from clients since %s, and nothing was sent: %s", tool, server, h.Since.Local().Format(time.DateTime), why)
}
