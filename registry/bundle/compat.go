package bundle

import (
	"context"
	"fmt"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"mcptray/internal/lazyre"
)

// Host is the machine a bundle is to run on.
type Host struct {
	// GOOS is the platform (default: runtime.GOOS).
	GOOS string
	// Resolve finds a command on the login shell's PATH (the supervisor's
	// resolver; default: exec.LookPath).
	Resolve func(cmd string) (string, error)
	// Version runs path --version (default: that, with a 10s limit).
	Version func(path string) (string, error)
}

func (h *Host) withDefaults() Host {
	var o Host
	if h != nil {
		o = *h
	}
	if o.GOOS == "" {
		o.GOOS = runtime.GOOS
	}
	if o.Resolve == nil {
		o.Resolve = exec.LookPath
	}
	if o.Version == nil {
		o.Version = func(path string) (string, error) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			out, err := exec.CommandContext(ctx, path, "--version").Output()
			return strings.TrimSpace(string(out)), err
		}
	}
	return o
}

// Platform is GOOS as the spec (and Node's process.platform) names it.
func Platform(goos string) string {
	if goos == "windows" {
		return "win32"
	}
	return goos
}

// runtimeCommand is the command a server type runs with; "" for binary.
func runtimeCommand(serverType, goos string) []string {
	switch serverType {
	case "node":
		return []string{"node"}
	case "python":
		if goos == "windows" {
			return []string{"python", "python3"}
		}
		return []string{"python3", "python"}
	case "uv":
		return []string{"uv"}
	}
	return nil
}

var installHint = map[string]string{
	"node":   "install Node.js: https://nodejs.org or your package manager's nodejs",
	"python": "install Python 3: https://www.python.org/downloads/ or your package manager's python3",
	"uv":     "install uv: https://docs.astral.sh/uv/getting-started/installation/",
}

// Check refuses a bundle that does not run here: a platform it does not
// list, a runtime missing from the login shell's PATH, or one older (or
// newer) than its compatibility.runtimes allow.
func (b *Bundle) Check(host *Host) error {
	h := host.withDefaults()
	m := b.Manifest
	name := m.Name + " " + m.Version
	plat := Platform(h.GOOS)
	if c := m.Compatibility; c != nil && len(c.Platforms) > 0 && !slices.Contains(c.Platforms, plat) {
		return &Error{Bundle: name, Reason: fmt.Sprintf("it runs on %s, not on this %s", strings.Join(c.Platforms, ", "), plat)}
	}
	cmds := runtimeCommand(m.Server.Type, h.GOOS)
	if len(cmds) == 0 {
		return nil
	}
	kind := m.Server.Type
	if kind == "uv" {
		kind = "uv"
	}
	var path string
	var lookErr error
	for _, c := range cmds {
		if p, err := h.Resolve(c); err == nil {
			path = p
			break
		} else if lookErr == nil {
			lookErr = err
		}
	}
	if path == "" {
		return &Error{Bundle: name, Reason: fmt.Sprintf("it is a %s server and %s is not on your login shell's PATH: %s", m.Server.Type, cmds[0], installHint[kind]), Err: lookErr}
	}
	want := ""
	if m.Compatibility != nil {
		want = m.Compatibility.Runtimes[kindFor(m.Server.Type)]
	}
	if want == "" {
		return nil
	}
	out, err := h.Version(path)
	if err != nil {
		return &Error{Bundle: name, Reason: fmt.Sprintf("%s --version failed, so its version cannot be checked against %s", path, want), Err: err}
	}
	have := versionIn(out)
	if have == "" {
		return &Error{Bundle: name, Reason: fmt.Sprintf("%s --version printed %q, no version to check against %s", path, out, want)}
	}
	cons, _ := parseConstraint(want) // validated with the manifest
	if !cons.allows(have) {
		return &Error{Bundle: name, Reason: fmt.Sprintf("it needs %s %s and %s is %s", kindFor(m.Server.Type), want, path, have)}
	}
	return nil
}

func kindFor(serverType string) string {
	if serverType == "uv" {
		return "python"
	}
	return serverType
}

var versionRE = lazyre.New(`\d+(\.\d+){0,2}`)

// versionIn finds the version in `node --version` ("v22.3.0") or `python3
// --version` ("Python 3.12.1") output.
func versionIn(s string) string { return versionRE().FindString(s) }

// constraint is a semver range: alternatives (||) of comparator sets.
type constraint [][]comparator

type comparator struct {
	op string // >=, >, <=, <, =
	v  [3]int
}

var comparatorRE = lazyre.New(`^(>=|<=|>|<|=|\^|~)?\s*v?(\d+)(?:\.(\d+|x|\*))?(?:\.(\d+|x|\*))?$`)

// parseConstraint reads the ranges compatibility.runtimes uses (">=16.0.0",
// ">=3.8,<4.0", "^18", ">=1 <2 || >=3").
func parseConstraint(s string) (constraint, error) {
	var out constraint
	for _, alt := range strings.Split(s, "||") {
		var set []comparator
		fields := strings.FieldsFunc(alt, func(r rune) bool { return r == ',' || r == ' ' })
		// ">= 16" is one comparator written with a space.
		for i := 0; i < len(fields); i++ {
			f := fields[i]
			if (f == ">=" || f == "<=" || f == ">" || f == "<" || f == "=" || f == "^" || f == "~") && i+1 < len(fields) {
				f += fields[i+1]
				i++
			}
			cs, err := parseComparator(f)
			if err != nil {
				return nil, fmt.Errorf("version range %q: %v", s, err)
			}
			set = append(set, cs...)
		}
		if len(set) == 0 {
			return nil, fmt.Errorf("version range %q is empty", s)
		}
		out = append(out, set)
	}
	return out, nil
}

func parseComparator(f string) ([]comparator, error) {
	m := comparatorRE().FindStringSubmatch(f)
	if m == nil {
		return nil, fmt.Errorf("%q is not a comparison such as >=18.0.0", f)
	}
	var v [3]int
	parts := 1
	for i, p := range m[2:5] {
		if p == "" || p == "x" || p == "*" {
			break
		}
		v[i], _ = strconv.Atoi(p)
		parts = i + 1
	}
	next := func(level int) [3]int {
		n := v
		n[level]++
		for i := level + 1; i < 3; i++ {
			n[i] = 0
		}
		return n
	}
	switch op := m[1]; op {
	case "^":
		level := 0
		for level < 2 && v[level] == 0 && level < parts-1 {
			level++
		}
		return []comparator{{">=", v}, {"<", next(level)}}, nil
	case "~":
		level := min(1, parts-1)
		return []comparator{{">=", v}, {"<", next(level)}}, nil
	case "", "=":
		if parts < 3 {
			return []comparator{{">=", v}, {"<", next(parts - 1)}}, nil
		}
		return []comparator{{"=", v}}, nil
	default:
		return []comparator{{op, v}}, nil
	}
}

func (c constraint) allows(version string) bool {
	var v [3]int
	for i, p := range strings.SplitN(version, ".", 3) {
		v[i], _ = strconv.Atoi(p)
	}
	for _, set := range c {
		ok := true
		for _, cmp := range set {
			d := compare3(v, cmp.v)
			switch cmp.op {
			case ">=":
				ok = ok && d >= 0
			case ">":
				ok = ok && d > 0
			case "<=":
				ok = ok && d <= 0
			case "<":
				ok = ok && d < 0
			case "=":
				ok = ok && d == 0
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func compare3(a, b [3]int) int {
	for i := range 3 {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}
