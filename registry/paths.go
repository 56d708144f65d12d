package registry

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// EnvConfig names the environment variable that points at the config file.
const EnvConfig = "MCPTRAY_CONFIG"

// Location is where the config file is, and how that was decided.
type Location struct {
	Path string
	// Explicit is true when the path came from --config or $MCPTRAY_CONFIG:
	// such a path must exist; only the default location is created on first
	// run.
	Explicit bool
	Source   string // "--config", "$MCPTRAY_CONFIG" or "default"
}

// Locate resolves the config path: flag, else $MCPTRAY_CONFIG, else
// os.UserConfigDir()/mcptray/servers.toml.
func Locate(flag string) (Location, error) {
	if flag != "" {
		p, err := filepath.Abs(ExpandHome(flag, homeDir()))
		return Location{Path: p, Explicit: true, Source: "--config"}, err
	}
	if env := os.Getenv(EnvConfig); env != "" {
		p, err := filepath.Abs(ExpandHome(env, homeDir()))
		return Location{Path: p, Explicit: true, Source: "$" + EnvConfig}, err
	}
	p, err := DefaultPath()
	return Location{Path: p, Source: "default"}, err
}

// DefaultPath is the config used when neither --config nor $MCPTRAY_CONFIG
// names one: os.UserConfigDir()/mcptray/servers.toml.
func DefaultPath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("find the config folder: %w (set $%s or pass --config)", err, EnvConfig)
	}
	return filepath.Join(dir, "mcptray", "servers.toml"), nil
}

func homeDir() string {
	h, _ := os.UserHomeDir()
	return h
}

// ErrNoConfig is returned by [Open] for an explicit path that does not exist.
var ErrNoConfig = errors.New("config file does not exist")

// Open loads the config at loc. At the default location, when nothing is
// there yet, it first writes the commented default config (whose demo server
// runs `exe serve-demo`) and reports created=true. An explicit path that does
// not exist is an error wrapping ErrNoConfig.
func Open(loc Location, exe string) (cfg *Config, created bool, err error) {
	if _, err := os.Stat(loc.Path); errors.Is(err, fs.ErrNotExist) {
		if loc.Explicit {
			return nil, false, fmt.Errorf("%s (from %s): %w", loc.Path, loc.Source, ErrNoConfig)
		}
		if err := Save(defaultAt(loc.Path, exe)); err != nil {
			return nil, false, err
		}
		created = true
	}
	cfg, err = Load(loc.Path)
	return cfg, created, err
}

// OpenForUpdate loads the config at loc for a command that adds to it
// (import). When no file is there, at the default location or an explicit
// path, it returns the commented default config in memory, as first run
// writes it: [Save] creates the file (and its folder); nothing is written
// before that, so a dry run leaves no trace. [Config.Saved] is nil for such
// a config.
func OpenForUpdate(loc Location, exe string) (*Config, error) {
	cfg, err := Load(loc.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return defaultAt(loc.Path, exe), nil
	}
	return cfg, err
}

// defaultAt is the default config, not yet written to path.
func defaultAt(path, exe string) *Config {
	cfg, err := Parse(path, DefaultConfig(exe))
	if err != nil {
		panic("registry: the default config does not parse: " + err.Error())
	}
	return cfg
}

// DefaultConfig is the commented servers.toml written on first run. Its one
// server, demo, is mcptray's own built-in MCP server, so a fresh machine shows
// a healthy server with no npm and no network.
func DefaultConfig(exe string) []byte {
	return []byte(strings.ReplaceAll(defaultConfig, "@EXE@", TOMLString(exe)))
}

const defaultConfig = `# mcptray: the MCP servers this machine runs and watches.
#
# Each [servers.NAME] table is one server. NAME: letters, digits, '-', '_'.
# Edit this file by hand or from the mcptray window; mcptray picks up changes.
# Check it with:  mcptray config validate

[settings]
probe_interval  = "30s"   # how often each server's liveness is checked
probe_timeout   = "10s"   # a probe slower than this counts as failed
startup_timeout = "60s"   # time a server gets from spawn/connect to ready
# gateway_port  = 24817   # 127.0.0.1 port of the gateway's URLs for clients (unset: one
#                         # picked once for you, kept in gateway.port beside this file)
# approve_new_servers = false  # true: a newly added server's tools reach no client
#                              # until approved (mcptray tools approve SERVER TOOL)

# mcptray's built-in demo server: a small, real MCP server (tools echo, add,
# time; one resource; one prompt). Remove it once you have your own.
[servers.demo]
description = "mcptray's built-in demo server"
command = @EXE@
args = ["serve-demo"]

# A local stdio server from npm (needs Node.js):
#
# [servers.filesystem]
# command = "npx"
# args    = ["-y", "@modelcontextprotocol/server-filesystem", "~/Documents"]
#
# A server that needs a secret: reference it, never paste it here.
# ${env:VAR} is read from mcptray's environment when the server starts.
#
# [servers.github]
# command = "npx"
# args    = ["-y", "@modelcontextprotocol/server-github"]
# env     = { GITHUB_PERSONAL_ACCESS_TOKEN = "${env:GITHUB_TOKEN}" }
#
# A remote server (Streamable HTTP; transport = "sse" for the old HTTP+SSE):
#
# [servers.remote]
# url     = "https://example.com/mcp"
# headers = { Authorization = "Bearer ${env:EXAMPLE_TOKEN}" }
#
# Per-server options: restart = "on-failure" | "always" | "never",
# disabled = false, cwd = "~/projects", description = "...", and for the
# clients that reach a server through mcptray (mcptray connect, the gateway):
#   start     = "auto"    # "auto": with mcptray; "lazy": with its first
#                         # client; "manual": when you start it
#                         # (autostart = false is the older spelling)
#   idle_stop = "10m"     # stop it after this long without a client using
#                         # it; its next client starts it again (0: never)
#   share     = true      # false: every client session gets its own process
#                         # (servers with per-connection state, a browser)
`
