package gateway

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// DefaultPort is the local endpoint's port of installs from before ports
// were picked per person ([EnsurePort]): their entries name it. When the
// port is taken, the daemon takes the next free one of the following
// [PortRange] (and entries written then name that one).
const (
	DefaultPort = 39427
	PortRange   = 20
)

// KeyFile is the per-install credential's file name, beside servers.toml.
const KeyFile = "gateway.key"

// KeyPath is where the credential for the config at configPath lives.
func KeyPath(configPath string) string { return filepath.Join(filepath.Dir(configPath), KeyFile) }

// EnsureKey returns the local endpoint's credential kept at path, making
// it (32 random bytes, 0600) the first time. Two processes making it at
// once agree on one.
func EnsureKey(path string) (string, error) {
	if k, err := ReadKey(path); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return k, err
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	k := base64.RawURLEncoding.EncodeToString(b)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("the gateway key: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return ReadKey(path)
	}
	if err != nil {
		return "", fmt.Errorf("the gateway key: %w", err)
	}
	_, err = f.WriteString(k + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return "", fmt.Errorf("the gateway key %s: %w", path, err)
	}
	return k, nil
}

// ReadKey reads the credential at path.
func ReadKey(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	k := strings.TrimSpace(string(b))
	if len(k) < 32 {
		return "", fmt.Errorf("the gateway key %s is malformed (%d characters; delete it and a new one is made)", path, len(k))
	}
	return k, nil
}

// URL is server name's address on the local endpoint, credential included
// (clients that cannot send headers reach it too).
func URL(port int, key, name string) string {
	return fmt.Sprintf("http://127.0.0.1:%d/mcp/%s/%s", port, url.PathEscape(name), key)
}

// ProfileURL is profile name's aggregate on the local endpoint at port.
func ProfileURL(port int, key, name string) string {
	return fmt.Sprintf("http://127.0.0.1:%d%s%s/%s", port, ProfilePathPrefix, url.PathEscape(name), key)
}

// CataloguesDir is where the daemon of the config at configPath keeps each
// server's last catalogue ([Options.CatalogueDir]), beside servers.toml.
func CataloguesDir(configPath string) string {
	return filepath.Join(filepath.Dir(configPath), "catalogues")
}
