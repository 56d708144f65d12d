package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"mcptray/gateway"
	"mcptray/registry"
)

// EndpointPortAndKey are the local endpoint's port for cfg ([settings]
// gateway_port, else the one picked once for this config and kept beside
// it) and its key. The port comes first: a key already there marks an
// install from before ports were picked, whose entries name the old
// default.
func EndpointPortAndKey(cfg *registry.Config) (int, string, error) {
	port := cfg.Settings.GatewayPort // set only when [settings] names it
	if port <= 0 {
		p, err := gateway.EnsurePort(gateway.PortPath(cfg.Path))
		if err != nil {
			return 0, "", err
		}
		port = p
	}
	key, err := gateway.EnsureKey(gateway.KeyPath(cfg.Path))
	if err != nil {
		return 0, "", err
	}
	return port, key, nil
}

// URLEntryPort is the port --url entries for cfg name: the one the daemon
// running cfg listens on (not the wanted one when that was taken at its
// start: then warning says so); with no such daemon, want when it is free
// for the daemon that the first bridge starts; else an error saying why
// no entry would reach mcptray.
func URLEntryPort(cfg *registry.Config, want int) (port int, warning string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if c, err := DialDaemon(ctx); err == nil && filepath.Clean(c.Info().ConfigPath) == filepath.Clean(cfg.Path) {
		gi, err := c.Gateway(ctx)
		if err != nil {
			return 0, "", fmt.Errorf("--url: ask the daemon for its local endpoint: %w", err)
		}
		if gi.Port <= 0 {
			return 0, "", fmt.Errorf("--url: the daemon's local endpoint is off (%s); write entries through `mcptray connect` (without --url)", gi.Problem)
		}
		if gi.Port != want {
			warning = fmt.Sprintf("port %d was taken when the daemon started: the entries name %d, where it listens; they stop reaching it if it restarts on another port (free %d, or set gateway_port in [settings] to a free port)", want, gi.Port, want)
		}
		return gi.Port, warning, nil
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(want)))
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return 0, "", fmt.Errorf("--url: port %d of mcptray's local endpoint is in use by another program, and no daemon of %s runs: entries naming it would reach that program. Free the port, set gateway_port in [settings] to a free one, or write entries through `mcptray connect` (without --url)", want, cfg.Path)
		}
		return 0, "", fmt.Errorf("--url: cannot listen on port %d of mcptray's local endpoint: %w", want, err)
	}
	ln.Close()
	return want, "", nil
}
