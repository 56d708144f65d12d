package app

import (
	"net"
	"path/filepath"
	"strings"
	"testing"

	"mcptray/registry"
)

// A --url entry for a port another program holds is refused with the
// reason, on every system (Windows reports a taken port as WSAEADDRINUSE,
// not EADDRINUSE).
func TestURLEntryPortRefusesAHeldPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	cfg := &registry.Config{Path: filepath.Join(t.TempDir(), "servers.toml")}
	_, _, err = URLEntryPort(cfg, port)
	if err == nil || !strings.Contains(err.Error(), "is in use by another program") {
		t.Fatalf("URLEntryPort of a held port: %v; want the refusal that says another program holds it", err)
	}
	ln.Close()
	if got, warning, err := URLEntryPort(cfg, port); err != nil || got != port || warning != "" {
		t.Fatalf("URLEntryPort of a free port: %d %q %v; want %d", got, warning, err, port)
	}
}
