// Package catalog reads the MCP Registry (the official one at
// registry.modelcontextprotocol.io, or an organisation's own with the same
// read API) and turns a server.json into a servers.toml entry: npm, PyPI and
// OCI packages become the command that runs them, a remote its URL, and the
// inputs the entry declares (environment variables, headers, arguments and
// their {placeholders}) are filled from what the person gives, secrets going
// to the keyring. Answers are cached on disk with their ETag.
package catalog

import (
	"fmt"
	"slices"
	"strings"

	"mcptray/internal/lazyre"
)

// Response is one server as the registry's API answers it: the publisher's
// server.json and the registry's own metadata.
type Response struct {
	Server ServerJSON   `json:"server"`
	Meta   ResponseMeta `json:"_meta"`
}

// ResponseMeta is the registry-managed part of an answer.
type ResponseMeta struct {
	Official *Official `json:"io.modelcontextprotocol.registry/official,omitempty"`
}

// Official is what the official registry says about a version.
type Official struct {
	Status          string `json:"status,omitempty"` // active, deprecated, deleted
	StatusMessage   string `json:"statusMessage,omitempty"`
	StatusChangedAt string `json:"statusChangedAt,omitempty"`
	PublishedAt     string `json:"publishedAt,omitempty"`
	UpdatedAt       string `json:"updatedAt,omitempty"`
	IsLatest        bool   `json:"isLatest,omitempty"`
}

// Status is the version's lifecycle status ("active" when the registry
// says nothing).
func (r *Response) Status() string {
	if r.Meta.Official == nil || r.Meta.Official.Status == "" {
		return "active"
	}
	return r.Meta.Official.Status
}

// ServerJSON is the server.json a publisher wrote.
type ServerJSON struct {
	Schema      string      `json:"$schema,omitempty"`
	Name        string      `json:"name"`
	Title       string      `json:"title,omitempty"`
	Description string      `json:"description"`
	Version     string      `json:"version"`
	WebsiteURL  string      `json:"websiteUrl,omitempty"`
	Repository  *Repository `json:"repository,omitempty"`
	Packages    []Package   `json:"packages,omitempty"`
	Remotes     []Transport `json:"remotes,omitempty"`
	// VersionDetail is the 2025-07-09 shape's version; only its presence
	// matters (it marks a server.json mcptray cannot read).
	VersionDetail any `json:"version_detail,omitempty"`
}

// Repository is where the server's source lives.
type Repository struct {
	URL       string `json:"url"`
	Source    string `json:"source,omitempty"`
	Subfolder string `json:"subfolder,omitempty"`
}

// Package is one way to run the server from a package registry.
type Package struct {
	RegistryType         string     `json:"registryType"`
	RegistryBaseURL      string     `json:"registryBaseUrl,omitempty"`
	Identifier           string     `json:"identifier"`
	Version              string     `json:"version,omitempty"`
	FileSHA256           string     `json:"fileSha256,omitempty"`
	RuntimeHint          string     `json:"runtimeHint,omitempty"`
	Transport            Transport  `json:"transport"`
	RuntimeArguments     []Argument `json:"runtimeArguments,omitempty"`
	PackageArguments     []Argument `json:"packageArguments,omitempty"`
	EnvironmentVariables []KeyValue `json:"environmentVariables,omitempty"`
}

// Transport is a package's transport or a remote.
type Transport struct {
	Type      string           `json:"type"` // stdio, streamable-http, sse
	URL       string           `json:"url,omitempty"`
	Headers   []KeyValue       `json:"headers,omitempty"`
	Variables map[string]Input `json:"variables,omitempty"`
}

// Input is a value the person may have to give.
type Input struct {
	Description string           `json:"description,omitempty"`
	IsRequired  bool             `json:"isRequired,omitempty"`
	Format      string           `json:"format,omitempty"` // string, number, boolean, filepath
	Value       string           `json:"value,omitempty"`  // fixed; {name} refers to Variables
	IsSecret    bool             `json:"isSecret,omitempty"`
	Default     string           `json:"default,omitempty"`
	Placeholder string           `json:"placeholder,omitempty"`
	Choices     []string         `json:"choices,omitempty"`
	Variables   map[string]Input `json:"variables,omitempty"`
}

// Argument is a positional or named (--flag value) command-line argument.
type Argument struct {
	Input
	Type       string `json:"type"` // positional, named
	Name       string `json:"name,omitempty"`
	ValueHint  string `json:"valueHint,omitempty"`
	IsRepeated bool   `json:"isRepeated,omitempty"`
}

// KeyValue is an environment variable or an HTTP header.
type KeyValue struct {
	Input
	Name string `json:"name"`
}

// Schema versions of server.json this package reads: the camelCase shape
// (2025-09-16 on). The 2025-07-09 shape spelled every field in snake_case.
var knownSchemas = []string{"2025-09-16", "2025-09-29", "2025-10-11", "2025-10-17", "2025-12-11"}

var schemaVersionRE = lazyre.New(`/schemas/([^/]+)/server\.schema\.json$`)

// SchemaError is a server.json in a shape mcptray does not read.
type SchemaError struct {
	Server, Schema, Reason string
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("%s: server.json schema %s: %s", e.Server, e.Schema, e.Reason)
}

// CheckSchema refuses a server.json of a schema version this package does
// not know, with the reason. No $schema at all is read as the current shape
// (the API's ServerDetail does not require it).
func (s *ServerJSON) CheckSchema() error {
	if s.VersionDetail != nil {
		v := orNone(s.Schema)
		if m := schemaVersionRE().FindStringSubmatch(s.Schema); m != nil {
			v = m[1]
		}
		return &SchemaError{Server: s.Name, Schema: v, Reason: "this is the 2025-07-09 snake_case format (version_detail, registry_type), which registries stopped serving in 2025-09; ask the registry for the current entry"}
	}
	if s.Schema == "" {
		return nil
	}
	m := schemaVersionRE().FindStringSubmatch(s.Schema)
	if m == nil {
		return &SchemaError{Server: s.Name, Schema: s.Schema, Reason: "not a server.json schema URL (…/schemas/VERSION/server.schema.json)"}
	}
	v := m[1]
	switch {
	case slices.Contains(knownSchemas, v):
		return nil
	case v == "2025-07-09":
		return &SchemaError{Server: s.Name, Schema: v, Reason: "the snake_case format of 2025-07-09, which mcptray does not read"}
	case v > knownSchemas[len(knownSchemas)-1] || !strings.HasPrefix(v, "20"):
		return &SchemaError{Server: s.Name, Schema: v, Reason: fmt.Sprintf("unknown to this mcptray (it reads %s to %s); a newer mcptray may read it", knownSchemas[0], knownSchemas[len(knownSchemas)-1])}
	default:
		return &SchemaError{Server: s.Name, Schema: v, Reason: fmt.Sprintf("not a published version (this mcptray reads %s)", strings.Join(knownSchemas, ", "))}
	}
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// HowItRuns names the ways the server can run, for a listing: "npm",
// "PyPI", "OCI image", "MCP bundle", "NuGet", "remote URL".
func (s *ServerJSON) HowItRuns() []string {
	var out []string
	add := func(k string) {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	for _, p := range s.Packages {
		add(kindName(p.RegistryType))
	}
	if len(s.Remotes) > 0 {
		add("remote URL")
	}
	return out
}

func kindName(registryType string) string {
	switch registryType {
	case "npm":
		return "npm"
	case "pypi":
		return "PyPI"
	case "oci":
		return "OCI image"
	case "mcpb":
		return "MCP bundle"
	case "nuget":
		return "NuGet"
	case "cargo":
		return "Cargo"
	default:
		return registryType
	}
}
