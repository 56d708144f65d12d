package gateway

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// PortFile keeps the local endpoint's port picked for a config (beside
// servers.toml and the key) when [settings] gateway_port names none.
const PortFile = "gateway.port"

// The range a port is picked from: above the well-known and common service
// ports, below every system's ephemeral range (Linux 32768–60999, macOS and
// Windows 49152–65535), so no outgoing connection of the machine takes it
// by chance.
const (
	PickMin = 20000
	PickMax = 32767
)

// PortPath is where the picked port for the config at configPath lives.
func PortPath(configPath string) string { return filepath.Join(filepath.Dir(configPath), PortFile) }

// EnsurePort returns the local endpoint's port kept at path, picking it
// the first time: a free port of [PickMin, PickMax], chosen at random so
// that the users of one machine get different ones. An install that has a
// key from before ports were picked keeps [DefaultPort], which the
// entries it wrote name. Two processes picking at once agree on one.
func EnsurePort(path string) (int, error) {
	if p, err := readPort(path); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return p, err
	}
	port := 0
	if _, err := os.Stat(filepath.Join(filepath.Dir(path), KeyFile)); err == nil {
		port = DefaultPort
	} else {
		for range 50 {
			n, err := rand.Int(rand.Reader, big.NewInt(PickMax-PickMin+1))
			if err != nil {
				return 0, err
			}
			p := PickMin + int(n.Int64())
			if ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p))); err == nil {
				ln.Close()
				port = p
				break
			}
		}
		if port == 0 {
			return 0, fmt.Errorf("no free port found in %d-%d for the local endpoint; set gateway_port in [settings]", PickMin, PickMax)
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return 0, fmt.Errorf("the gateway port: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return readPort(path)
	}
	if err != nil {
		return 0, fmt.Errorf("the gateway port: %w", err)
	}
	_, err = f.WriteString(strconv.Itoa(port) + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return 0, fmt.Errorf("the gateway port %s: %w", path, err)
	}
	return port, nil
}

func readPort(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	p, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || p < 1024 || p > 65535 {
		return 0, fmt.Errorf("the gateway port file %s holds %q, not a port from 1024 to 65535 (delete it and a new one is picked)", path, strings.TrimSpace(string(b)))
	}
	return p, nil
}
