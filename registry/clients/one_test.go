package clients

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"mcptray/registry"
)

// Installing one entry replaces the per-server entries mcptray wrote and
// keeps the rest; uninstalling it gives the file back byte for byte.
func TestInstallOneEntry(t *testing.T) {
	g := &Gateway{Command: "/opt/mcptray/mcptray-headless"}
	servers := []*registry.Server{{Name: "demo", Command: "x"}, {Name: "memory", Command: "y"}}
	for _, id := range []string{"claude-code", "cursor", "vscode", "codex", "gemini", "opencode", "zed", "continue"} {
		t.Run(id, func(t *testing.T) {
			c, err := Lookup(id)
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(t.TempDir(), "config")
			var theirs []string
			if fx, ok := fixtures[id]; ok {
				if err := os.WriteFile(file, []byte(fx), 0o600); err != nil {
					t.Fatal(err)
				}
				theirs = entryNames(t, c, file)
			}
			opts := &Options{Gateway: g, OS: "linux", HostOS: "linux"}
			clock := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
			fo := &FileOptions{Path: file, Now: func() time.Time { clock = clock.Add(time.Second); return clock }}
			if _, err := c.Install(servers, opts, fo); err != nil {
				t.Fatal(err)
			}
			before, _ := os.ReadFile(file)

			ch, err := c.InstallOne("", g, opts, fo)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ch.Added, []string{"mcptray"}) || !slices.Equal(ch.Removed, []string{"demo", "memory"}) {
				t.Errorf("added %v, removed %v", ch.Added, ch.Removed)
			}
			if !slices.ContainsFunc(ch.Notes, func(n string) bool {
				return strings.Contains(n, "mcptray replaces the per-server entries mcptray wrote (demo, memory)")
			}) {
				t.Errorf("notes: %q", ch.Notes)
			}
			d := ch.Diff()
			if !strings.Contains(d, "mcptray-headless") || !strings.Contains(d, "-") {
				t.Errorf("diff:\n%s", d)
			}
			names := entryNames(t, c, file)
			if slices.Contains(names, "demo") || slices.Contains(names, "memory") || !slices.Contains(names, "mcptray") {
				t.Errorf("entries after InstallOne: %v", names)
			}
			for _, n := range theirs {
				if !slices.Contains(names, n) {
					t.Errorf("the entry %s that was there was not kept: %v", n, names)
				}
			}
			// Twice changes nothing.
			if again, err := c.InstallOne("", g, opts, fo); err != nil || again.Changed() {
				t.Errorf("installing again: %v, changed %v", err, again != nil && again.Changed())
			}
			// A profile's entry sits beside it, and leaves the default's.
			if ch, err := c.InstallOne("work", g, opts, fo); err != nil || !slices.Equal(ch.Added, []string{"mcptray-work"}) || len(ch.Removed) != 0 {
				t.Fatalf("install mcptray-work: %v %+v", err, ch)
			}
			if ch, err := c.UninstallOne("work", opts, fo); err != nil || !slices.Equal(ch.Removed, []string{"mcptray-work"}) {
				t.Fatalf("uninstall mcptray-work: %v %+v", err, ch)
			}
			ch, err = c.UninstallOne("", opts, fo)
			if err != nil {
				t.Fatal(err)
			}
			if after, _ := os.ReadFile(file); !bytes.Equal(after, before) {
				t.Errorf("uninstall did not restore the file byte for byte:\n--- before\n%s\n--- after\n%s", before, after)
			}
			if !slices.Equal(ch.Added, []string{"demo", "memory"}) || !slices.ContainsFunc(ch.Notes, func(n string) bool { return strings.HasPrefix(n, "restored ") }) {
				t.Errorf("uninstall: added %v, notes %q", ch.Added, ch.Notes)
			}
		})
	}
}

// When the file changed after the install, uninstall removes the one entry
// alone and says why the others did not come back.
func TestUninstallOneAfterAChange(t *testing.T) {
	c, _ := Lookup("cursor")
	g := &Gateway{Command: "/usr/bin/mcptray"}
	file := filepath.Join(t.TempDir(), "mcp.json")
	opts := &Options{Gateway: g, OS: "linux", HostOS: "linux"}
	fo := &FileOptions{Path: file}
	if _, err := c.Install([]*registry.Server{{Name: "demo", Command: "x"}}, opts, fo); err != nil {
		t.Fatal(err)
	}
	if _, err := c.InstallOne("", g, opts, fo); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Install([]*registry.Server{{Name: "later", Command: "z"}}, &Options{OS: "linux", HostOS: "linux"}, fo); err != nil {
		t.Fatal(err)
	}
	ch, err := c.UninstallOne("", opts, fo)
	if err != nil {
		t.Fatal(err)
	}
	names := entryNames(t, c, file)
	if !slices.Equal(names, []string{"later"}) || !slices.ContainsFunc(ch.Notes, func(n string) bool { return strings.Contains(n, "only mcptray was removed") }) {
		t.Errorf("entries %v, notes %q", names, ch.Notes)
	}
}

// entryNames are the entries of the client's file, mcptray's own too.
func entryNames(t *testing.T, c *Client, file string) []string {
	t.Helper()
	im, err := c.importAll(file, mustRead(t, file), (&Options{OS: "linux", HostOS: "linux"}).withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range im.Servers {
		names = append(names, s.Name)
	}
	return names
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
