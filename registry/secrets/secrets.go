// Package secrets keeps the values a person does not want in servers.toml:
// secrets referred to as ${keyring:NAME} and the tokens of remote servers
// they signed in to. They live in the OS keyring (Secret Service on Linux,
// Keychain on macOS, Credential Manager on Windows) or, where there is none
// (headless Linux, CI), in a file readable only by the user.
package secrets

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"mcptray/registry"
)

// Service is the name entries carry in the OS keyring.
const Service = "mcptray"

// ErrNotFound means no value is stored under the key.
var ErrNotFound = registry.ErrSecretNotFound

// Store holds values by key. Keys are printable text without newlines;
// values are any text.
type Store interface {
	Get(key string) (string, error) // ErrNotFound when absent
	Set(key, value string) error
	Delete(key string) error // ErrNotFound when absent
	// List returns the stored keys that start with prefix, sorted.
	List(prefix string) ([]string, error)
	// Where says where values are kept, for messages ("the OS keyring
	// (Secret Service)", "/home/me/.local/share/mcptray/secrets.json").
	Where() string
}

// Key prefixes: what kind of value a key holds.
const (
	SecretPrefix = "secret:" // a person's named secret, ${keyring:NAME}
	TokenPrefix  = "oauth:"  // a sign-in to a remote server, by its URL
)

// SecretKey is the key of the named secret NAME.
func SecretKey(name string) string { return SecretPrefix + name }

// TokenKey is the key of the sign-in to the server at url.
func TokenKey(url string) string { return TokenPrefix + url }

// ValidName checks a secret's name: what ${keyring:NAME} can refer to.
func ValidName(name string) error {
	if name == "" {
		return errors.New("a secret's name cannot be empty")
	}
	if len(name) > 128 {
		return fmt.Errorf("secret name %q is longer than 128 characters", name[:20]+"…")
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-.", r)) {
			return fmt.Errorf("secret name %q: use letters, digits, '_', '-' and '.' only", name)
		}
	}
	return nil
}

// Options chooses a store.
type Options struct {
	// Kind is "keyring", "file" or "" (automatic: the OS keyring when it
	// answers, else the file). Default: $MCPTRAY_KEYRING.
	Kind string
	// File is the file store's path; default [DefaultFile].
	File string
	// Notice receives the one-line explanation when the automatic choice
	// falls back to the file. Nil discards it.
	Notice func(string)
	// Wait bounds how long the OS keyring has to answer when it is
	// opened (default 3 s); one that does not is taken as absent.
	Wait time.Duration
}

// DefaultWait is how long the OS keyring has to answer [Open].
const DefaultWait = 3 * time.Second

// Open returns the store to use.
func Open(opts *Options) (Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Kind == "" {
		o.Kind = os.Getenv("MCPTRAY_KEYRING")
	}
	if o.Wait <= 0 {
		o.Wait = DefaultWait
	}
	if o.File == "" {
		f, err := DefaultFile()
		if err != nil && o.Kind == "file" {
			return nil, err
		}
		o.File = f
	}
	switch strings.ToLower(o.Kind) {
	case "file":
		return &FileStore{Path: o.File}, nil
	case "keyring", "os":
		ks := newKeyring()
		if err := ks.available(o.Wait); err != nil {
			return nil, fmt.Errorf("MCPTRAY_KEYRING=keyring, but %w", err)
		}
		return ks, nil
	case "", "auto":
		// A file store made earlier stays the store: switching to a keyring
		// that appeared later would lose what the file holds.
		if o.File != "" {
			if _, err := os.Stat(o.File); err == nil {
				return &FileStore{Path: o.File}, nil
			}
		}
		ks := newKeyring()
		err := ks.available(o.Wait)
		if err == nil {
			return ks, nil
		}
		if o.File == "" {
			return nil, fmt.Errorf("no OS keyring (%v) and no folder for a file store", err)
		}
		if o.Notice != nil {
			o.Notice(fmt.Sprintf("no OS keyring (%s); secrets will be kept in %s, readable only by you (MCPTRAY_KEYRING=file chooses this, =keyring insists on a keyring)", shortErr(err), o.File))
		}
		return &FileStore{Path: o.File}, nil
	default:
		return nil, fmt.Errorf("MCPTRAY_KEYRING=%q: use keyring, file or auto", o.Kind)
	}
}

// DefaultFile is the file store's path: secrets.json in [DataDir].
func DefaultFile() (string, error) {
	d, err := DataDir()
	if err != nil {
		return "", fmt.Errorf("find a folder for the secrets file: %w", err)
	}
	return filepath.Join(d, "secrets.json"), nil
}

// DataDir is mcptray's data folder (the secrets file, unpacked MCP
// bundles): $XDG_DATA_HOME/mcptray (~/.local/share/mcptray on Linux), or
// the user config folder's mcptray elsewhere.
func DataDir() (string, error) {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "mcptray"), nil
	}
	if home, err := os.UserHomeDir(); err == nil && dataUnderHome {
		return filepath.Join(home, ".local", "share", "mcptray"), nil
	}
	d, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "mcptray"), nil
}

func shortErr(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

func withPrefix(keys []string, prefix string) []string {
	var out []string
	for _, k := range keys {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
