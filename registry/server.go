// Package registry owns the user's configured MCP servers: the servers.toml
// schema, loading with precise positions for every error, validation,
// ${env:VAR} and ~ expansion, and atomic saving. It is the leaf of mcptray's
// dependency graph: standard library plus a TOML parser, nothing else.
package registry

import (
	"maps"
	"slices"
	"time"
)

// Transport names how mcptray talks to a server.
type Transport string

const (
	TransportStdio Transport = "stdio" // a local process, JSON-RPC over stdin/stdout
	TransportHTTP  Transport = "http"  // Streamable HTTP
	TransportSSE   Transport = "sse"   // deprecated HTTP+SSE (2024-11-05)
)

// RestartPolicy says when the supervisor restarts a process that exited.
type RestartPolicy string

const (
	RestartOnFailure RestartPolicy = "on-failure" // the default
	RestartAlways    RestartPolicy = "always"
	RestartNever     RestartPolicy = "never"
)

// StartMode says when a server starts.
type StartMode string

const (
	StartAuto   StartMode = "auto"   // with the engine (the default)
	StartLazy   StartMode = "lazy"   // with its first client, through the gateway
	StartManual StartMode = "manual" // only when a person starts it
)

// Server is one [servers.NAME] entry. Fields hold the text as written in the
// file: ${env:VAR} references and ~ are expanded only by [Server.Expand], at
// start or connect time, so secrets stay references until they are needed.
type Server struct {
	Name string

	// A stdio server.
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string

	// A remote server.
	URL string
	// TransportName is the `transport` key as written ("" when absent);
	// [Server.Transport] gives the effective value.
	TransportName Transport
	Headers       map[string]string

	// Either kind.
	//
	// Start is the `start` key as written ("" when absent); Autostart is
	// the older `autostart` key (default true), which says the same as
	// start = "auto" (true) or "manual" (false) and decides only when Start
	// is "". The loader keeps Autostart equal to "starts with the engine".
	// [Server.StartMode] gives the effective value.
	Start     StartMode
	Autostart bool
	// IdleStop (`idle_stop`): the supervisor stops the server once no
	// client has used it for this long; it starts again with its next
	// client. 0 means never.
	IdleStop time.Duration
	// Unshared is `share = false`: every client session gets a process
	// of its own instead of sharing one.
	Unshared    bool
	Restart     RestartPolicy
	Disabled    bool
	Description string
	// Source says where the entry came from when mcptray wrote it from a
	// catalog: "registry:NAME@VERSION" (the MCP Registry) or
	// "mcpb:NAME@VERSION" (an MCP bundle). "" for an entry written by hand.
	Source string

	// Line is the line of the [servers.NAME] header in the file (0 when the
	// server did not come from a file).
	Line int
	// Invalid holds why this entry cannot run; nil for a valid entry. A bad
	// entry is kept (so it can be shown and fixed) but never started.
	Invalid error
}

// IsRemote reports whether the server is reached over the network.
func (s *Server) IsRemote() bool { return s.URL != "" && s.Command == "" }

// Transport is the effective transport: stdio for a command, http for a url
// unless the file says sse.
func (s *Server) Transport() Transport {
	switch {
	case s.Command != "":
		return TransportStdio
	case s.TransportName != "":
		return s.TransportName
	default:
		return TransportHTTP
	}
}

// RestartPolicy is the effective restart policy.
func (s *Server) RestartPolicy() RestartPolicy {
	if s.Restart == "" {
		return RestartOnFailure
	}
	return s.Restart
}

// StartMode is the effective start mode.
func (s *Server) StartMode() StartMode {
	switch {
	case s.Start != "":
		return s.Start
	case s.Autostart:
		return StartAuto
	default:
		return StartManual
	}
}

// Valid reports whether the entry can be started.
func (s *Server) Valid() bool { return s.Invalid == nil }

// Equal reports whether two entries describe the same server, field by field
// (ignoring its position in the file). The supervisor restarts a server on
// reload only when this is false.
func (s *Server) Equal(o *Server) bool {
	return s.Name == o.Name && s.Command == o.Command && slices.Equal(s.Args, o.Args) &&
		maps.Equal(s.Env, o.Env) && s.Cwd == o.Cwd && s.URL == o.URL &&
		s.TransportName == o.TransportName && maps.Equal(s.Headers, o.Headers) &&
		s.StartMode() == o.StartMode() && s.IdleStop == o.IdleStop && s.Unshared == o.Unshared &&
		s.Restart == o.Restart && s.Disabled == o.Disabled &&
		s.Description == o.Description && s.Source == o.Source && errString(s.Invalid) == errString(o.Invalid)
}

// Clone returns a deep copy.
func (s *Server) Clone() *Server {
	c := *s
	c.Args = slices.Clone(s.Args)
	c.Env = maps.Clone(s.Env)
	c.Headers = maps.Clone(s.Headers)
	return &c
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// ValidName reports whether name is a valid server name: 1-64 letters,
// digits, '-' or '_'.
func ValidName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !isBareKeyChar(name[i]) { // the same characters as a bare TOML key
			return false
		}
	}
	return true
}

// Settings is the [settings] table. Zero fields mean "use the default"; call
// [Settings.WithDefaults] to fill them.
type Settings struct {
	ProbeInterval  time.Duration
	ProbeTimeout   time.Duration
	StartupTimeout time.Duration
	LogLimitBytes  int64 // stderr ring cap in bytes
	LogLimitLines  int   // stderr ring cap in lines
	// GatewayPort is the 127.0.0.1 port of the gateway's HTTP endpoint.
	GatewayPort int
	// Separator joins a server's name and a tool's in an aggregate's
	// names (SERVER__TOOL); "" is [DefaultSeparator].
	Separator string
	// ApproveNewServers holds every tool of a server mcptray has not seen
	// before until the person approves it (registry/tooltrust).
	ApproveNewServers bool
	// Registry is the base URL of the MCP Registry `search` and `add`
	// read ("" means [DefaultRegistry]); organisations run their own.
	Registry string
}

// Defaults for [Settings].
const (
	DefaultProbeInterval  = 30 * time.Second
	DefaultProbeTimeout   = 10 * time.Second
	DefaultStartupTimeout = 60 * time.Second
	DefaultLogLimitBytes  = 2 << 20
	DefaultLogLimitLines  = 10000
	// DefaultGatewayPort is the gateway's port when [settings] leaves it
	// out (the gateway package's DefaultPort: the same number).
	DefaultGatewayPort = 39427
	// The range gateway_port may take: no port that needs privileges.
	MinGatewayPort = 1024
	MaxGatewayPort = 65535
	// DefaultRegistry is the official MCP Registry.
	DefaultRegistry = "https://registry.modelcontextprotocol.io"
)

// WithDefaults returns s with every zero field set to its default.
func (s Settings) WithDefaults() Settings {
	if s.ProbeInterval <= 0 {
		s.ProbeInterval = DefaultProbeInterval
	}
	if s.ProbeTimeout <= 0 {
		s.ProbeTimeout = DefaultProbeTimeout
	}
	if s.StartupTimeout <= 0 {
		s.StartupTimeout = DefaultStartupTimeout
	}
	if s.LogLimitBytes <= 0 {
		s.LogLimitBytes = DefaultLogLimitBytes
	}
	if s.LogLimitLines <= 0 {
		s.LogLimitLines = DefaultLogLimitLines
	}
	if s.GatewayPort <= 0 {
		s.GatewayPort = DefaultGatewayPort
	}
	if s.Registry == "" {
		s.Registry = DefaultRegistry
	}
	return s
}
