// Package healthcheck is the MCP client side of mcptray: it connects to a
// server (over the stdio pipes the supervisor hands it, or over Streamable
// HTTP / SSE), detects the protocol era, discovers what the server is and
// offers, probes its liveness, and turns every failure into a diagnosis a
// person can act on. It never starts or stops processes: that is the
// supervisor's job.
package healthcheck

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Era is the protocol generation a server speaks.
type Era string

const (
	// EraModern is the stateless protocol of 2026-07-28 and later
	// (server/discover, per-request _meta, no ping).
	EraModern Era = "modern"
	// EraLegacy is the initialize handshake of 2024-11-05 … 2025-11-25.
	EraLegacy Era = "legacy"
)

// ServerInfo is the server's identity.
type ServerInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Title   string `json:"title,omitempty"`
}

// Tool is one tool the server offers.
type Tool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	// OutputSchema is the schema of the tool's structuredContent, when
	// it declares one.
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	// Annotations are the tool's hints (read-only, destructive,
	// idempotent, open-world) as declared; nil when it declares none.
	Annotations *mcp.ToolAnnotations `json:"annotations,omitempty"`
}

// Resource is one resource the server offers.
type Resource struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
}

// ResourceTemplate is one resource template the server offers.
type ResourceTemplate struct {
	URITemplate string `json:"uriTemplate"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
}

// Prompt is one prompt the server offers.
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
}

// PromptArgument is one argument of a prompt.
type PromptArgument struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// Report is what a successful connection found out about a server.
type Report struct {
	Era Era `json:"era"`
	// EraSource says how the era was found, for a person reading it
	// ("server/discover answered", "server/discover unanswered; initialize",
	// "remembered from an earlier start").
	EraSource       string          `json:"eraSource,omitempty"`
	ProtocolVersion string          `json:"protocolVersion"`
	ServerInfo      ServerInfo      `json:"serverInfo"`
	Capabilities    json.RawMessage `json:"capabilities"` // as declared
	Instructions    string          `json:"instructions,omitempty"`

	Tools             []Tool             `json:"tools"`
	Resources         []Resource         `json:"resources"`
	ResourceTemplates []ResourceTemplate `json:"resourceTemplates"`
	Prompts           []Prompt           `json:"prompts"`

	// ConnectLatency is the time from the first byte sent to a completed
	// handshake (discovery lists not included).
	ConnectLatency time.Duration `json:"-"`
	// Diagnoses holds problems that did not stop the connection
	// (stdout-noise, list-failed, deprecated-transport).
	Diagnoses []Diagnosis `json:"diagnostics,omitempty"`
}

// Degraded reports whether a declared capability failed to list.
func (r *Report) Degraded() bool {
	return slices.ContainsFunc(r.Diagnoses, func(d Diagnosis) bool { return d.Code == CodeListFailed })
}

// Code is a stable diagnosis identifier, fit for scripts and docs.
type Code string

// Diagnosis codes.
const (
	CodeCommandNotFound     Code = "command-not-found"
	CodePermissionDenied    Code = "permission-denied"
	CodeBadCwd              Code = "bad-cwd"
	CodeUnsetVariable       Code = "unset-variable"
	CodeExitedDuringStartup Code = "exited-during-startup"
	CodeStdoutNoise         Code = "stdout-noise"
	CodeHandshakeTimeout    Code = "handshake-timeout"
	CodeVersionMismatch     Code = "version-mismatch"
	CodeAuthRequired        Code = "auth-required"
	CodeHTTPStatus          Code = "http-status"
	CodeConnectionRefused   Code = "connection-refused"
	CodeDNSError            Code = "dns-error"
	CodeTLSError            Code = "tls-error"
	CodeNotMCP              Code = "not-mcp"
	CodeListFailed          Code = "list-failed"
	CodeProbeTimeout        Code = "probe-timeout"
	CodeProbeFailed         Code = "probe-failed"
	CodeDeprecatedTransport Code = "deprecated-transport"
	CodeInvalidConfig       Code = "invalid-config"
	CodeCrashed             Code = "crashed"
	// CodeConnectionFailed is a network failure that is neither a refused
	// connection, a name lookup nor TLS (a reset, a timeout while dialling).
	CodeConnectionFailed Code = "connection-failed"
	// CodeHandshakeFailed means the server answered initialize (or
	// server/discover) with an error that says nothing about the version.
	CodeHandshakeFailed Code = "handshake-failed"
	// CodeTokenNotSaved means a sign-in's refreshed token could not be
	// written to the secret store: it serves this run only.
	CodeTokenNotSaved Code = "token-not-saved"
	// CodeHiddenInstructions means a tool's definition carries signs of
	// instructions hidden from the person (invisible or bidirectional
	// characters, terminal escapes, injection phrasing, a very long
	// description): a warning, the server still serves.
	CodeHiddenInstructions Code = "hidden-instructions"
	// CodeInterrupted means the check was stopped (Ctrl-C, a signal, a
	// cancel) before this server had an outcome: nothing is known of it.
	CodeInterrupted Code = "interrupted"
)

// Diagnosis is a failure explained: a stable code, a sentence a person can
// act on, the evidence behind it and a suggested fix. It is also an error.
type Diagnosis struct {
	Code     Code     `json:"code"`
	Message  string   `json:"message"`
	Evidence []string `json:"evidence,omitempty"`
	Fix      string   `json:"fix,omitempty"`

	// Err is the underlying cause callers may branch on with errors.Is
	// (for example ErrDiedDuringDiscover); it is never shown to a person.
	Err error `json:"-"`
}

// Unwrap returns the underlying cause, if any.
func (d *Diagnosis) Unwrap() error { return d.Err }

// Error is the code, the message and the evidence the message does not
// already say: an error never repeats its own text.
func (d *Diagnosis) Error() string {
	var extra []string
	for _, e := range d.Evidence {
		if !strings.Contains(d.Message, e) {
			extra = append(extra, e)
		}
	}
	if len(extra) == 0 {
		return fmt.Sprintf("%s: %s", d.Code, d.Message)
	}
	return fmt.Sprintf("%s: %s (%s)", d.Code, d.Message, strings.Join(extra, "; "))
}
