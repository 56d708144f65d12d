// Package bundle installs MCP bundles (.mcpb, formerly .dxt): a zip holding
// a manifest.json and the server it describes. It verifies the archive
// (no path escaping its folder, no links, sizes bounded, checksums),
// validates the manifest, checks the bundle runs on this platform with the
// runtimes it needs, unpacks it into mcptray's data folder under its name
// and version, and turns its mcp_config into a servers.toml entry: user
// configuration filled from the person's values, sensitive ones kept in the
// keyring. What it refuses it refuses with the reason, leaving nothing
// behind.
package bundle

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
)

// Manifest is manifest.json (the MCPB manifest spec, versions 0.1 to 0.4).
type Manifest struct {
	ManifestVersion string                `json:"manifest_version,omitempty"`
	DXTVersion      string                `json:"dxt_version,omitempty"` // the older name of manifest_version
	Name            string                `json:"name"`
	DisplayName     string                `json:"display_name,omitempty"`
	Version         string                `json:"version"`
	Description     string                `json:"description"`
	Author          *Author               `json:"author"`
	Repository      *Repository           `json:"repository,omitempty"`
	Homepage        string                `json:"homepage,omitempty"`
	Server          *Server               `json:"server"`
	Compatibility   *Compatibility        `json:"compatibility,omitempty"`
	UserConfig      map[string]UserOption `json:"user_config,omitempty"`
}

// Author is who made the bundle.
type Author struct {
	Name  string `json:"name"`
	Email string `json:"email,omitempty"`
	URL   string `json:"url,omitempty"`
}

// Repository is where its source lives.
type Repository struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

// Server says how to run the bundled server.
type Server struct {
	Type       string     `json:"type"` // node, python, binary, uv
	EntryPoint string     `json:"entry_point"`
	MCPConfig  *MCPConfig `json:"mcp_config,omitempty"`
}

// MCPConfig is the command line, with ${__dirname}, ${user_config.X} and
// the other variables of the spec.
type MCPConfig struct {
	Command           string                 `json:"command"`
	Args              []string               `json:"args,omitempty"`
	Env               map[string]string      `json:"env,omitempty"`
	PlatformOverrides map[string]MCPOverride `json:"platform_overrides,omitempty"`
}

// MCPOverride replaces parts of MCPConfig on one platform.
type MCPOverride struct {
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
}

// Compatibility is where the bundle runs.
type Compatibility struct {
	Platforms []string          `json:"platforms,omitempty"` // darwin, win32, linux
	Runtimes  map[string]string `json:"runtimes,omitempty"`  // node, python: version constraints
}

// UserOption is one user_config field.
type UserOption struct {
	Type        string   `json:"type"` // string, number, boolean, directory, file
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Required    bool     `json:"required,omitempty"`
	Default     any      `json:"default,omitempty"` // string, number, boolean or []string
	Multiple    bool     `json:"multiple,omitempty"`
	Sensitive   bool     `json:"sensitive,omitempty"`
	Min         *float64 `json:"min,omitempty"`
	Max         *float64 `json:"max,omitempty"`
}

// knownManifestVersions are the spec versions this package reads.
var knownManifestVersions = []string{"0.1", "0.2", "0.3", "0.4"}

// ManifestError is an invalid manifest.json.
type ManifestError struct {
	Bundle string
	Field  string
	Reason string
}

func (e *ManifestError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s: manifest.json: %s", e.Bundle, e.Reason)
	}
	return fmt.Sprintf("%s: manifest.json: %s: %s", e.Bundle, e.Field, e.Reason)
}

// ParseManifest reads and validates manifest.json; bundle names the file in
// messages.
func ParseManifest(bundle string, data []byte) (*Manifest, error) {
	bad := func(field, format string, args ...any) error {
		return &ManifestError{Bundle: bundle, Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	var m Manifest
	dec := json.NewDecoder(strings.NewReader(string(data)))
	if err := dec.Decode(&m); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return nil, bad("", "not JSON (%v at byte %d)", se, se.Offset)
		case errors.As(err, &te):
			return nil, bad(te.Field, "must be %s, not a JSON %s", te.Type, te.Value)
		default:
			return nil, bad("", "not JSON: %v", err)
		}
	}
	v := m.ManifestVersion
	if v == "" {
		v = m.DXTVersion
	}
	switch {
	case v == "":
		return nil, bad("manifest_version", "missing (the spec version the manifest follows, such as \"0.3\")")
	case !slices.Contains(knownManifestVersions, v):
		return nil, bad("manifest_version", "%q is not a version this mcptray reads (%s)", v, strings.Join(knownManifestVersions, ", "))
	case m.Name == "":
		return nil, bad("name", "missing")
	case m.Version == "":
		return nil, bad("version", "missing")
	case m.Description == "":
		return nil, bad("description", "missing")
	case m.Author == nil || m.Author.Name == "":
		return nil, bad("author.name", "missing")
	case m.Server == nil:
		return nil, bad("server", "missing")
	}
	if !safeElem(m.Name) {
		return nil, bad("name", "%q cannot name a folder (no /, \\, .. or control characters)", m.Name)
	}
	if !safeElem(m.Version) {
		return nil, bad("version", "%q cannot name a folder", m.Version)
	}
	s := m.Server
	switch s.Type {
	case "node", "python", "binary", "uv":
	case "":
		return nil, bad("server.type", "missing (node, python, binary or uv)")
	default:
		return nil, bad("server.type", "%q is not node, python, binary or uv", s.Type)
	}
	if s.EntryPoint == "" {
		return nil, bad("server.entry_point", "missing")
	}
	if _, err := cleanRel(s.EntryPoint); err != nil {
		return nil, bad("server.entry_point", "%v", err)
	}
	if s.MCPConfig == nil && s.Type != "uv" {
		return nil, bad("server.mcp_config", "missing (only a uv server may leave it out)")
	}
	if s.MCPConfig != nil && s.MCPConfig.Command == "" {
		return nil, bad("server.mcp_config.command", "missing")
	}
	if c := m.Compatibility; c != nil {
		for _, p := range c.Platforms {
			if !slices.Contains([]string{"darwin", "win32", "linux"}, p) {
				return nil, bad("compatibility.platforms", "%q is not darwin, win32 or linux", p)
			}
		}
		for _, k := range slices.Sorted(maps.Keys(c.Runtimes)) {
			if k != "node" && k != "python" {
				return nil, bad("compatibility.runtimes", "%q is not node or python", k)
			}
			if _, err := parseConstraint(c.Runtimes[k]); err != nil {
				return nil, bad("compatibility.runtimes."+k, "%v", err)
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m.UserConfig)) {
		o := m.UserConfig[k]
		field := "user_config." + k
		switch o.Type {
		case "string", "number", "boolean", "directory", "file":
		default:
			return nil, bad(field+".type", "%q is not string, number, boolean, directory or file", o.Type)
		}
		if o.Title == "" {
			return nil, bad(field+".title", "missing")
		}
		if o.Multiple && o.Type != "directory" && o.Type != "file" {
			return nil, bad(field+".multiple", "only a directory or file field can take several values")
		}
		if o.Sensitive && o.Type != "string" {
			return nil, bad(field+".sensitive", "only a string field can be sensitive")
		}
		if o.Default != nil {
			if _, err := o.defaults(); err != nil {
				return nil, bad(field+".default", "%v", err)
			}
		}
	}
	// Every ${user_config.X} must name a field.
	for _, ref := range m.configRefs() {
		if _, ok := m.UserConfig[ref]; !ok {
			return nil, bad("server.mcp_config", "${user_config.%s} names no user_config field", ref)
		}
	}
	return &m, nil
}

// configRefs lists the user_config names mcp_config refers to.
func (m *Manifest) configRefs() []string {
	c := m.Server.MCPConfig
	if c == nil {
		return nil
	}
	var out []string
	scan := func(s string) {
		for _, mm := range varRE().FindAllStringSubmatch(s, -1) {
			if n, ok := strings.CutPrefix(mm[1], "user_config."); ok && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	all := []MCPOverride{{Command: c.Command, Args: c.Args, Env: c.Env}}
	for _, k := range slices.Sorted(maps.Keys(c.PlatformOverrides)) {
		all = append(all, c.PlatformOverrides[k])
	}
	for _, o := range all {
		scan(o.Command)
		for _, a := range o.Args {
			scan(a)
		}
		for _, k := range slices.Sorted(maps.Keys(o.Env)) {
			scan(o.Env[k])
		}
	}
	return out
}

// defaults is the field's default as strings (several for a multiple one).
func (o UserOption) defaults() ([]string, error) {
	switch d := o.Default.(type) {
	case nil:
		return nil, nil
	case string:
		return []string{d}, nil
	case bool:
		return []string{fmt.Sprint(d)}, nil
	case float64:
		return []string{formatNumber(d)}, nil
	case []any:
		var out []string
		for _, e := range d {
			s, ok := e.(string)
			if !ok {
				return nil, errors.New("a list default must hold strings")
			}
			out = append(out, s)
		}
		return out, nil
	default:
		return nil, fmt.Errorf("must be a string, number, boolean or list of strings")
	}
}

func formatNumber(f float64) string {
	if f == float64(int64(f)) {
		return fmt.Sprint(int64(f))
	}
	return fmt.Sprint(f)
}

// safeElem reports whether s can be one folder name.
func safeElem(s string) bool {
	if s == "" || s == "." || s == ".." || len(s) > 128 {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(`/\:*?"<>|`, r) {
			return false
		}
	}
	return true
}

// cleanRel checks that name (a path inside the bundle, / separated) stays
// inside it, and returns it cleaned.
func cleanRel(name string) (string, error) {
	n := strings.ReplaceAll(name, `\`, "/")
	if n == "" || strings.HasPrefix(n, "/") || (len(n) >= 2 && n[1] == ':') {
		return "", fmt.Errorf("%q is not a relative path inside the bundle", name)
	}
	for _, e := range strings.Split(n, "/") {
		if e == ".." {
			return "", fmt.Errorf("%q leaves the bundle's folder (..)", name)
		}
	}
	for _, r := range n {
		if r < 0x20 || r == 0x7f {
			return "", fmt.Errorf("%q holds a control character", name)
		}
	}
	return path.Clean(n), nil
}
