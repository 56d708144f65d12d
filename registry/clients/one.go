package clients

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"mcptray/registry"
)

// One entry for every server: the client runs `mcptray connect` (the
// profile default) or `mcptray connect --profile PROFILE`, one MCP server
// over all of a profile's servers, instead of one entry per server.

// OneEntryName is the entry a profile's install writes: "mcptray" for the
// default profile, "mcptray-PROFILE" for another.
func OneEntryName(profile string) string {
	if profile == "" || profile == registry.DefaultProfile {
		return "mcptray"
	}
	return "mcptray-" + profile
}

// OneEntryArgs are the bridge's arguments for profile's entry.
func (g *Gateway) OneEntryArgs(profile string) []string {
	args := []string{"connect"}
	if g.Config != "" {
		args = append(args, "--config", g.Config)
	}
	if profile != "" && profile != registry.DefaultProfile {
		args = append(args, "--profile", profile)
	}
	return args
}

// OneEntry is profile's one entry as a server to write: the bridge over
// all of the profile's servers, carrying none of their settings.
func OneEntry(profile string, g *Gateway) *registry.Server {
	return &registry.Server{Name: OneEntryName(profile), Command: g.Command, Args: g.OneEntryArgs(profile),
		Description: fmt.Sprintf("mcptray profile %s: every server of it as one", cmpOr(profile, registry.DefaultProfile))}
}

// perServerEntry reports whether s is an entry mcptray wrote for one server
// (`mcptray connect NAME`, or the server's URL on the local endpoint), not
// a profile's entry.
func perServerEntry(s *registry.Server) bool {
	switch RouteOf(s) {
	case RouteURL:
		name, _, _ := registry.LocalEndpoint(s.URL)
		return name != ""
	case RouteConnect:
		for i := 1; i < len(s.Args); i++ {
			switch a := s.Args[i]; {
			case a == "--profile" || strings.HasPrefix(a, "--profile="):
				return false
			case a == "--config":
				i++
			case strings.HasPrefix(a, "-"):
			default:
				return true
			}
		}
	}
	return false
}

// MergeOne writes profile's one entry into src and removes the per-server
// entries mcptray wrote before (the change lists them in Removed, and a
// note says they were replaced). Direct entries, and every other key,
// stay.
func (c *Client) MergeOne(file string, src []byte, profile string, g *Gateway, opts *Options) (*Change, error) {
	return c.mergeOne(file, src, profile, g, opts, nil)
}

// MergeOneFor is MergeOne that also notes the direct entries named like
// servers the profile holds: the client runs those itself beside the one
// entry (mcptray cannot tell whether it wrote them, so they stay).
func (c *Client) MergeOneFor(file string, src []byte, profile string, g *Gateway, opts *Options, servers []string) (*Change, error) {
	return c.mergeOne(file, src, profile, g, opts, servers)
}

func (c *Client) mergeOne(file string, src []byte, profile string, g *Gateway, opts *Options, servers []string) (*Change, error) {
	o := opts.withDefaults()
	if o.Scope == "" {
		o.Scope = c.scopes[0]
	}
	name := OneEntryName(profile)
	var replace, twice []string
	if im, err := c.importAll(file, src, o); err == nil {
		for _, s := range im.Servers {
			switch {
			case s.Name != name && perServerEntry(s):
				replace = append(replace, s.Name)
			case RouteOf(s) == RouteDirect && slices.Contains(servers, s.Name):
				twice = append(twice, s.Name)
			}
		}
	}
	cur := src
	var removed []string
	if len(replace) > 0 {
		rm, err := c.Remove(file, src, replace, opts)
		if err != nil {
			return nil, err
		}
		cur, removed = rm.New, rm.Removed
	}
	direct := *o
	direct.Gateway, direct.SecretsVia, direct.Resolve = nil, nil, nil
	entry := OneEntry(profile, g)
	ch, err := c.Merge(file, cur, []*registry.Server{entry}, &direct)
	if err != nil {
		return nil, err
	}
	ch.Old, ch.Existed = src, src != nil
	ch.Removed = removed
	if len(removed) > 0 {
		if bytes.Equal(ch.New, cur) {
			ch.New = cur // the entry was there: only the removals change the file
		}
		ch.Notes = append(ch.Notes, fmt.Sprintf("%s replaces the per-server entries mcptray wrote (%s): `mcptray uninstall --client %s %s` puts them back",
			name, strings.Join(removed, ", "), c.ID, name))
	}
	if len(twice) > 0 {
		ch.Warnings = append(ch.Warnings, fmt.Sprintf("%s stay as direct entries: the client runs them itself beside %s, which offers them too; remove them with `mcptray uninstall --client %s %s`",
			strings.Join(twice, ", "), name, c.ID, strings.Join(twice, " ")))
	}
	return ch, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// InstallOne writes profile's one entry into the client's file like
// [Client.Install], replacing the per-server entries mcptray wrote.
// servers are the profile's servers (for the warning about direct entries
// of theirs, see [Client.MergeOneFor]).
func (c *Client) InstallOne(profile string, g *Gateway, opts *Options, fo *FileOptions, servers ...string) (*Change, error) {
	return c.editFile(opts, fo, func(path string, old []byte) (*Change, error) {
		return c.mergeOne(path, old, profile, g, opts, servers)
	})
}

// UninstallOne removes profile's one entry. When the file is still what
// installing it made of one of its backups, that backup comes back byte
// for byte (the per-server entries with it); otherwise the entry alone is
// removed, and a note says why the others did not come back.
func (c *Client) UninstallOne(profile string, opts *Options, fo *FileOptions) (*Change, error) {
	name := OneEntryName(profile)
	return c.editFile(opts, fo, func(path string, cur []byte) (*Change, error) {
		g := c.oneEntryGateway(path, cur, name, opts)
		for _, b := range backupsNewestFirst(path) {
			if g == nil {
				break
			}
			old, err := os.ReadFile(b)
			if err != nil {
				continue
			}
			made, err := c.MergeOne(path, old, profile, g, opts)
			if err != nil || !bytes.Equal(registry.MatchLineEndings(old, made.New), cur) || !made.Changed() {
				continue
			}
			ch := &Change{Client: c, Path: path, Old: cur, New: old, Existed: cur != nil, Removed: []string{name}, Added: made.Removed,
				secrets: append(c.fileSecrets(path, cur, opts.withDefaults()), c.fileSecrets(path, old, opts.withDefaults())...)}
			ch.Notes = append(ch.Notes, fmt.Sprintf("restored %s byte for byte: the file as it was before %s was installed", filepath.Base(b), name))
			return ch, nil
		}
		ch, err := c.Remove(path, cur, []string{name}, opts)
		if err != nil {
			return nil, err
		}
		if len(ch.Removed) > 0 {
			ch.Notes = append(ch.Notes, "the file changed since "+name+" was installed (or no backup of it is left): only "+name+" was removed; install the servers you want again (mcptray install --per-server)")
		}
		return ch, nil
	})
}

// oneEntryGateway is the route the one entry called name in src was
// written with (its command and --config), nil when src has no such entry.
func (c *Client) oneEntryGateway(file string, src []byte, name string, opts *Options) *Gateway {
	im, err := c.importAll(file, src, opts.withDefaults())
	if err != nil {
		return nil
	}
	for _, s := range im.Servers {
		if s.Name != name || RouteOf(s) != RouteConnect {
			continue
		}
		g := &Gateway{Command: s.Command}
		if i := slices.Index(s.Args, "--config"); i >= 0 && i+1 < len(s.Args) {
			g.Config = s.Args[i+1]
		}
		return g
	}
	return nil
}

// backupsNewestFirst are path's timestamped backups, newest first.
func backupsNewestFirst(path string) []string {
	m, _ := filepath.Glob(path + ".mcptray-backup-*")
	slices.Sort(m)
	slices.Reverse(m)
	return m
}
