package healthcheck

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"mcptray/internal/human"
	"mcptray/internal/lazyre"
	"mcptray/registry"
)

// Limits on what a diagnosis quotes, so one chatty server cannot bloat a
// snapshot or a terminal.
const (
	maxQuotedLines = 20
	maxQuotedLine  = 300
	maxQuotedBody  = 300
)

// quote shortens one line of server output for evidence.
func quote(line string) string {
	line = strings.TrimRight(line, "\r\n")
	if len(line) > maxQuotedLine {
		line = line[:maxQuotedLine] + "…"
	}
	return fmt.Sprintf("%q", line)
}

// safeURL is a URL as messages show it: registry.MaskURL, the one mask of
// the credentials a URL can hold (userinfo, secret query values, the local
// endpoint's key); the path is kept because it tells /mcp from /sse.
var safeURL = registry.MaskURL

// scrub replaces the raw URL in an error text by its safe form: Go's
// url.Error quotes the whole URL, query string and all.
func scrub(text, rawURL string) string {
	if rawURL == "" {
		return text
	}
	safe := safeURL(rawURL)
	text = strings.ReplaceAll(text, rawURL, safe)
	if u, err := url.Parse(rawURL); err == nil && u.User != nil {
		text = strings.ReplaceAll(text, u.User.String()+"@", "")
	}
	return text
}

// noiseDiagnosis explains stdout lines that were not MCP messages; ev is
// the evidence kept for each (quoted, with why when it was JSON).
func noiseDiagnosis(ev []string, total int) Diagnosis {
	ev = slices.Clone(ev)
	if total > len(ev) {
		ev = append(ev, fmt.Sprintf("(%d more lines not kept)", total-len(ev)))
	}
	return Diagnosis{
		Code: CodeStdoutNoise,
		Message: fmt.Sprintf("The server printed %d line(s) on stdout that are not MCP messages; stdout must carry only JSON-RPC, and clients that do not filter it fail on these lines.",
			total),
		Evidence: ev,
		Fix:      "Make the server log to stderr instead of stdout (remove banners and print statements, or set its logger's output to stderr).",
	}
}

// handshakeTimeout explains a handshake that ran out of time, saying what
// the server did write, because "timed out" alone sends people the wrong way.
func handshakeTimeout(after time.Duration, st wireStats) *Diagnosis {
	d := &Diagnosis{Code: CodeHandshakeTimeout}
	wait := ""
	if after > 0 {
		wait = " within " + roundWait(after)
	}
	switch {
	case st.messages == 0 && st.noiseTotal == 0:
		d.Message = "The server wrote nothing on stdout" + wait + ": it did not answer the handshake."
		d.Fix = "Check that the command starts an MCP server speaking stdio (some servers need an argument such as \"stdio\"), and read its stderr for what it is waiting on."
	case st.messages == 0:
		d.Message = fmt.Sprintf("The server wrote only lines that are not MCP messages on stdout (%d line(s))%s and never answered the handshake.", st.noiseTotal, wait)
		d.Evidence = st.noise
		d.Fix = "The lines quoted are what the server printed instead of MCP messages: make it log to stderr, or check it is started in stdio mode."
	default:
		d.Message = fmt.Sprintf("The server answered %d message(s) but did not finish the handshake%s (last request waiting: %s).", st.messages, wait, st.waitingOn)
		d.Evidence = st.noise
		d.Fix = "The server is stuck during startup: read its stderr, or raise startup_timeout if it is merely slow."
	}
	return d
}

func remoteTimeout(after time.Duration, target string, last *httpExchange) *Diagnosis {
	d := &Diagnosis{
		Code:    CodeHandshakeTimeout,
		Message: fmt.Sprintf("%s did not complete the MCP handshake within %s.", target, roundWait(after)),
		Fix:     "Check the server is up and not overloaded, or raise startup_timeout if it is merely slow.",
	}
	if last != nil {
		d.Evidence = last.evidence()
	}
	return d
}

func exitedDuringHandshake(st wireStats, duringDiscover bool) *Diagnosis {
	d := &Diagnosis{
		Code:     CodeExitedDuringStartup,
		Message:  "The server exited during the MCP handshake.",
		Evidence: st.noise,
		Fix:      "Read the server's last stderr lines: it usually says why it stopped (a missing argument, an unset variable, a crash).",
	}
	if duringDiscover {
		d.Message = "The server exited on server/discover (the first request it got), before answering anything; some legacy servers stop on a method they do not know before initialize."
		d.Fix = "Start it again and connect with initialize directly (mcptray does this by itself)."
		d.Err = ErrDiedDuringDiscover
	}
	return d
}

func versionMismatch(offered, got string) *Diagnosis {
	return &Diagnosis{
		Code: CodeVersionMismatch,
		Message: fmt.Sprintf("The server answered with protocol version %q, which mcptray does not speak (it offered %s).",
			got, offered),
		Evidence: []string{"offered: " + offered, "server answered: " + got, "mcptray speaks: " + strings.Join(supportedVersions, ", ")},
		Fix:      "Update the server (or mcptray) so both share a protocol version.",
	}
}

func handshakeRejected(method string, code int64, msg string) *Diagnosis {
	if strings.Contains(strings.ToLower(msg), "version") {
		return &Diagnosis{
			Code:     CodeVersionMismatch,
			Message:  fmt.Sprintf("The server refused %s because of the protocol version: %s", method, msg),
			Evidence: []string{fmt.Sprintf("JSON-RPC error code %d", code), "mcptray speaks: " + strings.Join(supportedVersions, ", ")},
			Fix:      "Update the server (or mcptray) so both share a protocol version.",
		}
	}
	return &Diagnosis{
		Code:     CodeHandshakeFailed,
		Message:  fmt.Sprintf("The server answered %s with an error: %s", method, msg),
		Evidence: []string{fmt.Sprintf("JSON-RPC error code %d", code)},
		Fix:      "Read the server's stderr and its documentation: it refused to start the session.",
	}
}

// networkDiagnosis classifies a failed HTTP round trip. It returns nil when
// err is not a network failure.
func networkDiagnosis(err error, rawURL string) *Diagnosis {
	if err == nil {
		return nil
	}
	u, _ := url.Parse(rawURL)
	host := rawURL
	if u != nil {
		host = u.Host
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return &Diagnosis{
			Code:     CodeDNSError,
			Message:  fmt.Sprintf("The host name %q cannot be resolved.", dnsErr.Name),
			Evidence: []string{fmt.Sprintf("lookup %s: %s", dnsErr.Name, dnsErr.Err)},
			Fix:      "Check the host name in the server's url (a typo?), and that you are on the network or VPN that knows it.",
			Err:      err,
		}
	}
	if refused(err) {
		return &Diagnosis{
			Code:     CodeConnectionRefused,
			Message:  fmt.Sprintf("Nothing is listening at %s: the connection was refused.", host),
			Evidence: []string{scrub(err.Error(), rawURL)},
			Fix:      "Start the server, or correct the port in its url.",
			Err:      err,
		}
	}
	if d := tlsDiagnosis(err, host, rawURL); d != nil {
		return d
	}
	var netErr net.Error
	var opErr *net.OpError
	if errors.As(err, &netErr) || errors.As(err, &opErr) || reset(err) {
		return &Diagnosis{
			Code:     CodeConnectionFailed,
			Message:  fmt.Sprintf("The connection to %s failed.", host),
			Evidence: []string{scrub(err.Error(), rawURL)},
			Fix:      "Check the server is running and reachable from this machine (proxy, firewall).",
			Err:      err,
		}
	}
	return nil
}

func tlsDiagnosis(err error, host, rawURL string) *Diagnosis {
	var (
		unknownAuth x509.UnknownAuthorityError
		hostErr     x509.HostnameError
		invalid     x509.CertificateInvalidError
		verifyErr   *tls.CertificateVerificationError
		recordErr   tls.RecordHeaderError
		alertErr    tls.AlertError
	)
	fix := "Use a certificate your system trusts (or add its CA to the system store), and check the url's host matches the certificate."
	switch {
	case errors.As(err, &unknownAuth), errors.As(err, &hostErr), errors.As(err, &invalid), errors.As(err, &verifyErr):
		return &Diagnosis{
			Code:     CodeTLSError,
			Message:  fmt.Sprintf("The TLS certificate of %s is not trusted.", host),
			Evidence: []string{scrub(err.Error(), rawURL)},
			Fix:      fix,
			Err:      err,
		}
	case errors.As(err, &recordErr):
		return &Diagnosis{
			Code:     CodeTLSError,
			Message:  fmt.Sprintf("%s does not speak TLS on that port.", host),
			Evidence: []string{scrub(err.Error(), rawURL)},
			Fix:      "Use http:// instead of https:// for this server, or the port where it serves TLS.",
			Err:      err,
		}
	case errors.As(err, &alertErr):
		return &Diagnosis{
			Code:     CodeTLSError,
			Message:  fmt.Sprintf("The TLS handshake with %s failed.", host),
			Evidence: []string{scrub(err.Error(), rawURL)},
			Fix:      fix,
			Err:      err,
		}
	}
	return nil
}

// resourceMetadataRE finds resource_metadata="…" in a WWW-Authenticate
// header (RFC 9728).
var resourceMetadataRE = lazyre.New(`resource_metadata\s*=\s*"?([^",\s]+)"?`)

// httpDiagnosis explains an HTTP answer that stopped the connection.
func httpDiagnosis(ex *httpExchange) *Diagnosis {
	switch ex.status {
	case 401, 403:
		d := &Diagnosis{
			Code:     CodeAuthRequired,
			Message:  fmt.Sprintf("%s requires authorisation (HTTP %d %s).", safeURL(ex.url), ex.status, statusText(ex.status)),
			Evidence: ex.evidence(),
			Fix:      "Add the credentials the server expects under [servers.NAME.headers] (for example Authorization = \"Bearer ${env:TOKEN}\"); OAuth sign-in is not done by a health check.",
		}
		if m := resourceMetadataRE().FindStringSubmatch(ex.wwwAuthenticate); m != nil {
			d.Message += " It names its OAuth resource metadata at " + m[1] + "."
			d.Evidence = append(d.Evidence, "resource metadata: "+m[1])
		}
		return d
	}
	if ex.status >= 400 {
		return &Diagnosis{
			Code:     CodeHTTPStatus,
			Message:  fmt.Sprintf("%s answered HTTP %d %s to %s.", safeURL(ex.url), ex.status, statusText(ex.status), ex.method),
			Evidence: ex.evidence(),
			Fix:      httpStatusFix(ex.status),
		}
	}
	return notMCP(ex)
}

func httpStatusFix(status int) string {
	switch {
	case status == 404 || status == 405:
		return "Check the url's path: Streamable HTTP servers usually serve /mcp, old SSE servers /sse (then set transport = \"sse\")."
	case status == 429:
		return "The server is rate limiting: wait, or raise the limit on its side."
	case status >= 500:
		return "The server failed internally: look at its logs."
	default:
		return "Check the url and the headers configured for this server."
	}
}

func notMCP(ex *httpExchange) *Diagnosis {
	what := "something that is not JSON-RPC"
	if ex.contentType != "" {
		what = fmt.Sprintf("%s, not JSON-RPC", ex.contentType)
	}
	if strings.HasPrefix(ex.contentType, "text/html") {
		what = "a web page (text/html), not JSON-RPC"
	}
	return &Diagnosis{
		Code:     CodeNotMCP,
		Message:  fmt.Sprintf("%s answered, but with %s: it is not an MCP endpoint.", safeURL(ex.url), what),
		Evidence: ex.evidence(),
		Fix:      "Point url at the server's MCP endpoint (often ending in /mcp, or /sse for old servers).",
	}
}

func statusText(code int) string {
	if t := http.StatusText(code); t != "" {
		return t
	}
	return "status"
}

func listFailed(what string, err error) Diagnosis {
	return Diagnosis{
		Code:     CodeListFailed,
		Message:  fmt.Sprintf("The server declares %s but listing them failed: %s", what, firstLine(err.Error())),
		Evidence: []string{err.Error()},
		Fix:      "The server is up but this feature is broken: read its stderr or logs.",
		Err:      err,
	}
}

func deprecatedTransport(rawURL string) Diagnosis {
	return Diagnosis{
		Code:     CodeDeprecatedTransport,
		Message:  fmt.Sprintf("%s speaks the old HTTP+SSE transport (deprecated since 2025-03-26), not Streamable HTTP.", safeURL(rawURL)),
		Evidence: []string{"POST was refused; GET opened an event stream with an endpoint event"},
		Fix:      "Set transport = \"sse\" for this server to skip the Streamable HTTP attempt, and ask its authors for Streamable HTTP.",
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// roundWait prints a wait at a precision a person reads (human.Duration,
// the one rule for waits: "9s", "450ms").
var roundWait = human.Duration
