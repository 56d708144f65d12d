package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
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
	gw  *gateway.Gateway
	exe string

	mu      sync.Mutex // guards the fields below
	key     string
	ln      net.Listener // nil when not listening
	port    int
	problem string // why not listening
	// moves hands run a listener to serve instead of the one it serves
	// (gateway_port changed on reload), while running says run serves;
	// before and after, a move only swaps ln.
	moves   chan endpoint
	running bool
}

// endpoint is a listener of the local endpoint and its key.
type endpoint struct {
	ln  net.Listener
	key string
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
	d := &daemonGateway{gw: gateway.New(eng.Supervisor(), opts), moves: make(chan endpoint, 1)}
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

// listening is the endpoint's port, 0 when it is off.
func (d *daemonGateway) listening() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ln == nil {
		return 0
	}
	return d.port
}

// settingsChanged moves the local endpoint to the port a reloaded
// config asks for (cfg holds the new settings), and says so; nothing
// moves when the port is not free, and the note says why.
func (d *daemonGateway) settingsChanged(cfg *registry.Config, was, now registry.Settings) []string {
	if was.GatewayPort == now.GatewayPort {
		return nil
	}
	want, key, err := EndpointPortAndKey(cfg)
	d.mu.Lock()
	defer d.mu.Unlock()
	old := "off"
	if d.ln != nil {
		old = fmt.Sprintf("on 127.0.0.1:%d", d.port)
	}
	if err != nil {
		return []string{fmt.Sprintf("[settings] gateway_port changed, but %v: the local HTTP endpoint stays %s", err, old)}
	}
	if d.ln != nil && want == d.port {
		return nil
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(want)))
	if err != nil {
		why := err.Error()
		if addrInUse(err) {
			why = "another program listens there"
		}
		return []string{fmt.Sprintf("[settings] gateway_port asks for port %d, which cannot be used (%s): the local HTTP endpoint stays %s", want, why, old)}
	}
	prev := d.ln
	d.ln, d.port, d.key, d.problem = ln, want, key, ""
	if d.running {
		// A move run has not taken yet is replaced by this one (its
		// listener closed), so the send never waits.
		select {
		case ep := <-d.moves:
			ep.ln.Close()
		default:
		}
		d.moves <- endpoint{ln, key}
	} else if prev != nil {
		prev.Close() // run serves d.ln when it starts
	}
	return []string{fmt.Sprintf("[settings] gateway_port: the local HTTP endpoint moved from %s to 127.0.0.1:%d; entries written with a URL name the old port: write them again (`mcptray install --client CLIENT --url NAME...`, or Export in the app); entries through `mcptray connect` are not affected", strings.TrimPrefix(old, "on "), want)}
}

// run serves the endpoint and follows the servers until ctx ends; a
// move of the endpoint serves the new listener and closes the old one.
func (d *daemonGateway) run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { _ = d.gw.Run(ctx) })
	serve := func(ep endpoint) *http.Server {
		hs := d.gw.HTTPServer(ctx, gateway.HTTPOptions{Key: ep.key, SameUser: gateway.PeerIsSameUser})
		wg.Go(func() { _ = hs.Serve(ep.ln) })
		return hs
	}
	stop := func(hs *http.Server) {
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if hs.Shutdown(sctx) != nil {
			hs.Close()
		}
	}
	var hs *http.Server
	d.mu.Lock()
	d.running = true
	if d.ln != nil {
		hs = serve(endpoint{d.ln, d.key})
	}
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		d.running = false
		d.mu.Unlock()
	}()
	for {
		select {
		case ep := <-d.moves:
			if old := hs; old != nil {
				wg.Go(func() { stop(old) })
			}
			hs = serve(ep)
		case <-ctx.Done():
			d.mu.Lock()
			d.running = false
			select {
			case ep := <-d.moves: // a move that came too late to be served
				ep.ln.Close()
			default:
			}
			d.mu.Unlock()
			if hs != nil {
				stop(hs)
			}
			wg.Wait()
			return
		}
	}
}

// info is /v1/gateway's answer.
func (d *daemonGateway) info(eng *control.Local) control.GatewayInfo {
	d.mu.Lock()
	listening, port, key, problem := d.ln != nil, d.port, d.key, d.problem
	d.mu.Unlock()
	gi := control.GatewayInfo{Port: port, Problem: problem, Servers: []control.GatewayServer{}}
	byName := map[string]gateway.Server{}
	for _, s := range d.gw.Servers() {
		byName[s.Name] = s
	}
	for _, st := range eng.Snapshot().Servers {
		gs := control.GatewayServer{Name: st.Name, Command: []string{d.exe, "connect", st.Name}, Sessions: []gateway.Session{}}
		if listening {
			gs.URL = gateway.URL(port, key, st.Name)
		}
		if s, ok := byName[st.Name]; ok {
			gs.Sessions, gs.Usage = s.Sessions, s.Usage
		}
		gi.Servers = append(gi.Servers, gs)
	}
	if !listening {
		port = 0
	}
	gi.Profiles = control.Profiles(d.gw, d.exe, port, key)
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
