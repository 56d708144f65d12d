package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"time"

	"mcptray/healthcheck"
	"mcptray/registry"
)

// tailLines is how many stderr lines a diagnosis and a snapshot carry.
const tailLines = 20

// displayCommand is the command line as written in the config: ${env:VAR}
// references stay references, so no secret is shown.
func displayCommand(s *registry.Server) string {
	parts := []string{quoteArg(s.Command)}
	for _, a := range s.Args {
		parts = append(parts, quoteArg(a))
	}
	return strings.Join(parts, " ")
}

func quoteArg(a string) string {
	if a != "" && !strings.ContainsAny(a, " \t\"'\\$`") {
		return a
	}
	return "'" + strings.ReplaceAll(a, "'", `'"'"'`) + "'"
}

func evidence(lines []LogLine) []string {
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		out = append(out, "stderr: "+l.Text)
	}
	return out
}

func diagInvalid(err error) *healthcheck.Diagnosis {
	var d *healthcheck.Diagnosis
	if errors.As(err, &d) {
		return d
	}
	return &healthcheck.Diagnosis{
		Code:    healthcheck.CodeInvalidConfig,
		Message: err.Error(),
		Fix:     "Fix this entry in servers.toml (`mcptray config validate` shows every problem with its line), then reload.",
	}
}

func diagUnset(e *registry.UnsetVarError) *healthcheck.Diagnosis {
	return &healthcheck.Diagnosis{
		Code:    healthcheck.CodeUnsetVariable,
		Message: fmt.Sprintf("%s refers to ${env:%s}, which is not set", e.Field, e.Var),
		Fix: fmt.Sprintf("Set %s in your shell profile and restart mcptray (the app and the daemon read your login shell's "+
			"environment; check and up read the terminal's).", e.Var),
	}
}

func diagSecret(e *registry.SecretRefError) *healthcheck.Diagnosis {
	d := &healthcheck.Diagnosis{
		Code:    healthcheck.CodeUnsetVariable,
		Message: fmt.Sprintf("%s refers to ${keyring:%s}, which is not stored", e.Field, e.Name),
		Fix:     fmt.Sprintf("Store it: run `mcptray secret set %s` (the value is read without echo), then restart the server.", e.Name),
	}
	if e.Err == nil {
		d.Message = fmt.Sprintf("%s refers to ${keyring:%s}, but this mcptray has no secret store", e.Field, e.Name)
	} else if !errors.Is(e.Err, registry.ErrSecretNotFound) {
		d.Message = fmt.Sprintf("%s refers to ${keyring:%s}, which could not be read: %v", e.Field, e.Name, e.Err)
		d.Fix = "Unlock the OS keyring (or set MCPTRAY_KEYRING=file), then restart the server."
	}
	return d
}

func diagCommand(s *registry.Server, e *CommandError) *healthcheck.Diagnosis {
	if errors.Is(e, ErrNotExecutable) {
		return &healthcheck.Diagnosis{
			Code:     healthcheck.CodePermissionDenied,
			Message:  fmt.Sprintf("%s is not executable", e.Path),
			Evidence: []string{"command: " + s.Command},
			Fix:      fmt.Sprintf("Make it executable (chmod +x %s) or point command at the right file.", e.Path),
		}
	}
	fix := fmt.Sprintf("Install %s, or set command to its full path (run `%s %s` in a terminal to find it).", s.Command, findCommand, s.Command)
	var ev []string
	if e.Searched != "" {
		ev = append(ev, "PATH searched: "+e.Searched)
	}
	return &healthcheck.Diagnosis{
		Code:     healthcheck.CodeCommandNotFound,
		Message:  fmt.Sprintf("command %q not found", s.Command),
		Evidence: ev,
		Fix:      fix,
	}
}

func diagBadCwd(cwd string, err error) *healthcheck.Diagnosis {
	msg := fmt.Sprintf("working folder %s does not exist", cwd)
	switch {
	case err == nil:
		msg = fmt.Sprintf("working folder %s is not a folder", cwd)
	case errors.Is(err, fs.ErrPermission):
		msg = fmt.Sprintf("working folder %s cannot be entered (permission denied)", cwd)
	}
	return &healthcheck.Diagnosis{
		Code:    healthcheck.CodeBadCwd,
		Message: msg,
		Fix:     "Create the folder or fix cwd in servers.toml.",
	}
}

// diagSpawn explains an error from starting the process itself.
func diagSpawn(s *registry.Server, path string, err error) *healthcheck.Diagnosis {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Op == "chdir" {
		return diagBadCwd(s.Cwd, err)
	}
	switch {
	case errors.Is(err, syscall.ENOENT):
		// The file exists (it was just resolved), so its interpreter does not.
		return &healthcheck.Diagnosis{
			Code:    healthcheck.CodeCommandNotFound,
			Message: fmt.Sprintf("%s could not be run: the interpreter named in its first line (#!) was not found", path),
			Fix:     "Install that interpreter, or check the #! line of the script.",
		}
	case errors.Is(err, fs.ErrPermission):
		return &healthcheck.Diagnosis{
			Code:    healthcheck.CodePermissionDenied,
			Message: fmt.Sprintf("%s could not be run: permission denied", path),
			Fix:     "Check the file's permissions and the folders above it.",
		}
	}
	if transientSpawnError(err) {
		return &healthcheck.Diagnosis{
			Code:     CodeOutOfResources,
			Message:  fmt.Sprintf("%s could not be started: the system is out of resources (%v)", path, err),
			Evidence: []string{err.Error()},
			Fix:      "mcptray tries again with backoff. If it persists, close programs holding many files or processes, or raise the limit (ulimit -n, ulimit -u).",
		}
	}
	return &healthcheck.Diagnosis{
		Code:    healthcheck.CodeExitedDuringStartup,
		Message: fmt.Sprintf("%s could not be started: %v", path, err),
		Fix:     "Run the command in a terminal to see the error: " + displayCommand(s),
	}
}

// diagExit explains a process that ended on its own.
func diagExit(s *registry.Server, exit ExitInfo, tail []LogLine, duringStartup bool) *healthcheck.Diagnosis {
	ev := evidence(tail)
	if duringStartup {
		fix := "Run the command in a terminal to see the full error: " + displayCommand(s)
		if len(tail) == 0 {
			fix = "It wrote nothing to stderr. " + fix
		}
		return &healthcheck.Diagnosis{
			Code:     healthcheck.CodeExitedDuringStartup,
			Message:  "exited during startup: " + exit.Describe(),
			Evidence: ev,
			Fix:      fix,
		}
	}
	return &healthcheck.Diagnosis{
		Code:     healthcheck.CodeCrashed,
		Message:  "crashed: " + exit.Describe(),
		Evidence: ev,
		Fix:      "The last stderr lines above usually say why; the full log is in mcptray's log folder.",
	}
}

// diagConnect turns a Checker.Connect error into a diagnosis.
func diagConnect(name string, err error, timedOut bool) *healthcheck.Diagnosis {
	var d *healthcheck.Diagnosis
	if errors.As(err, &d) {
		return d
	}
	if timedOut || errors.Is(err, context.DeadlineExceeded) {
		return &healthcheck.Diagnosis{
			Code:     healthcheck.CodeHandshakeTimeout,
			Message:  "the server did not complete the MCP handshake in time",
			Evidence: []string{err.Error()},
			Fix:      "A first start can be slow (npx downloads the package): raise startup_timeout in [settings], or check that the server speaks MCP on stdout.",
		}
	}
	return &healthcheck.Diagnosis{
		Code:    healthcheck.CodeNotMCP,
		Message: "the MCP handshake failed: " + err.Error(),
		Fix:     fmt.Sprintf("Check that the command starts an MCP server (`mcptray check %s`, or Test in the server's Edit form in the app, shows what it sent).", name),
	}
}

// diagProbe explains a failed liveness probe. The health check's own
// diagnosis (it says what was sent and how long it waited) is kept when the
// probe gave one.
func diagProbe(err error, timeout bool, failures int, limit time.Duration) *healthcheck.Diagnosis {
	var hd *healthcheck.Diagnosis
	if errors.As(err, &hd) && (hd.Code == healthcheck.CodeProbeTimeout) == timeout {
		d := *hd
		if !timeout && failures > 1 {
			d.Message = fmt.Sprintf("%d liveness probes in a row failed; the last: %s", failures, d.Message)
		}
		return &d
	}
	if timeout {
		d := &healthcheck.Diagnosis{
			Code:    healthcheck.CodeProbeTimeout,
			Message: fmt.Sprintf("the liveness probe got no answer within %s: the server looks hung", roundDuration(limit)),
			Fix:     "mcptray restarts it; if it keeps happening, raise probe_timeout in [settings] or look at its log.",
		}
		if err != nil {
			d.Evidence = []string{err.Error()}
		}
		return d
	}
	return &healthcheck.Diagnosis{
		Code:     healthcheck.CodeProbeFailed,
		Message:  fmt.Sprintf("%d liveness probes in a row failed", failures),
		Evidence: []string{err.Error()},
		Fix:      "mcptray restarts it; its log usually says why it stopped answering.",
	}
}

// Codes of diagnoses only the supervisor makes.
const (
	// CodeOutOfResources: the process could not be started for want of
	// file descriptors, processes or memory (EMFILE, ENFILE, EAGAIN,
	// ENOMEM). Not the server's fault: retried with backoff.
	CodeOutOfResources healthcheck.Code = "out-of-resources"
	// CodeFlapping: the server keeps crashing and coming back. A warning
	// while it is up.
	CodeFlapping healthcheck.Code = "flapping"
)

// transientSpawnError reports whether a spawn failed for want of resources,
// which a later try may find.
func transientSpawnError(err error) bool {
	for _, e := range []error{syscall.EMFILE, syscall.ENFILE, syscall.EAGAIN, syscall.ENOMEM} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
