package clients

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"mcptray/registry"
)

// Skipped is a server [Select] left out, and why.
type Skipped struct {
	Name string
	// Invalid is why the entry cannot run (nil when it was left out for
	// being disabled).
	Invalid error
}

func (s Skipped) String() string {
	if s.Invalid != nil {
		return fmt.Sprintf("servers.%s: %v", s.Name, s.Invalid)
	}
	return fmt.Sprintf("servers.%s: disabled (name it to include it anyway)", s.Name)
}

// UnknownServerError is a name servers.toml does not have.
type UnknownServerError struct {
	Name, Path string
	Known      []string
}

func (e *UnknownServerError) Error() string {
	return fmt.Sprintf("no server named %q in %s (it has: %s)", e.Name, e.Path, strings.Join(e.Known, ", "))
}

// ErrNoServers is a selection with nothing in it.
var ErrNoServers = errors.New("no servers to export")

// Select is the one rule for which servers an export, a copy or an install
// takes from servers.toml: the named ones (a disabled one too: naming it is
// asking for it), else every valid, enabled one, in file order. A named
// server that does not exist or is invalid is an error; unnamed invalid and
// disabled ones are returned as skipped. No server at all is an error.
func Select(cfg *registry.Config, names []string) ([]*registry.Server, []Skipped, error) {
	var known []string
	for _, s := range cfg.Servers {
		known = append(known, s.Name)
	}
	for _, n := range names {
		if !slices.Contains(known, n) {
			return nil, nil, &UnknownServerError{Name: n, Path: cfg.Path, Known: known}
		}
	}
	var out []*registry.Server
	var skipped []Skipped
	for _, s := range cfg.Servers {
		named := slices.Contains(names, s.Name)
		switch {
		case len(names) > 0 && !named:
		case s.Invalid != nil && named:
			return nil, nil, fmt.Errorf("servers.%s is invalid: %v (fix it: mcptray config validate)", s.Name, s.Invalid)
		case s.Invalid != nil:
			skipped = append(skipped, Skipped{Name: s.Name, Invalid: s.Invalid})
		case s.Disabled && !named:
			skipped = append(skipped, Skipped{Name: s.Name})
		default:
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, skipped, fmt.Errorf("%w in %s", ErrNoServers, cfg.Path)
	}
	return out, skipped, nil
}

// Output is what an export renders: a snippet, add commands or install
// links.
type Output string

const (
	OutputSnippet  Output = "snippet"
	OutputCLI      Output = "cli"
	OutputDeepLink Output = "deeplink"
)

// Outputs lists what the client can render, snippet first.
func (c *Client) Outputs() []Output {
	out := []Output{OutputSnippet}
	if c.HasCLI() {
		out = append(out, OutputCLI)
	}
	if c.HasDeepLink() {
		out = append(out, OutputDeepLink)
	}
	return out
}

// Render renders servers as the output asked for. An output the client does
// not have is ErrUnsupported.
func (c *Client) Render(out Output, servers []*registry.Server, opts *Options) (*Result, error) {
	switch out {
	case OutputSnippet, "":
		return c.Snippet(servers, opts)
	case OutputCLI:
		return c.CLI(servers, opts)
	case OutputDeepLink:
		return c.DeepLinks(servers, opts)
	}
	return nil, fmt.Errorf("unknown output %q (want snippet, cli or deeplink)", out)
}
