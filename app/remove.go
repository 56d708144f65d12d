package app

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"mcptray/registry"
	"mcptray/registry/bundle"
)

// BundleFolder is the folder a server added from an MCP bundle was
// unpacked into.
type BundleFolder struct {
	Server string
	// Bundle is the bundle's NAME@VERSION (its source without "mcpb:").
	Bundle string
	Folder string
}

// BundleFolders are the unpacked folders of the servers names of cfg that
// were added from MCP bundles, which removing them may delete: a folder
// under dir (mcptray's bundles folder; "" is [bundle.DefaultDir]) that
// still exists and that no server staying in cfg runs from.
func BundleFolders(cfg *registry.Config, names []string, dir string) ([]BundleFolder, error) {
	if dir == "" {
		d, err := bundle.DefaultDir()
		if err != nil {
			return nil, err
		}
		dir = d
	}
	var out []BundleFolder
	for _, s := range cfg.Servers {
		src, ok := strings.CutPrefix(s.Source, "mcpb:")
		if !ok || !slices.Contains(names, s.Name) || s.Cwd == "" {
			continue
		}
		folder := filepath.Clean(s.Cwd)
		if rel, err := filepath.Rel(dir, folder); err != nil || rel == "." || !filepath.IsLocal(rel) {
			continue // not one mcptray unpacked
		}
		if st, err := os.Stat(folder); err != nil || !st.IsDir() {
			continue
		}
		shared := slices.ContainsFunc(cfg.Servers, func(o *registry.Server) bool {
			return !slices.Contains(names, o.Name) && o.Cwd != "" && filepath.Clean(o.Cwd) == folder
		})
		if !shared {
			out = append(out, BundleFolder{Server: s.Name, Bundle: src, Folder: folder})
		}
	}
	return out, nil
}

// RemoveServers removes the servers names from cfg and saves it (the file
// as it was is kept as servers.toml.bak), then deletes the unpacked
// folders of del (from [BundleFolders]) under dir ("" is
// [bundle.DefaultDir]). An unknown name is an error and nothing changes.
func RemoveServers(cfg *registry.Config, names []string, del []BundleFolder, dir string) error {
	for _, n := range names {
		if cfg.Server(n) == nil {
			var known []string
			for _, s := range cfg.Servers {
				known = append(known, s.Name)
			}
			return Usagef("no server named %q in %s (it has: %s)", n, cfg.Path, strings.Join(known, ", "))
		}
	}
	cfg.Servers = slices.DeleteFunc(cfg.Servers, func(s *registry.Server) bool { return slices.Contains(names, s.Name) })
	if err := registry.Save(cfg); err != nil {
		return err
	}
	if err := DeleteBundleFolders(del, dir); err != nil {
		return fmt.Errorf("removed %s from %s, but %w", strings.Join(names, ", "), cfg.Path, err)
	}
	return nil
}

// DeleteBundleFolders deletes the unpacked folders del (from
// [BundleFolders]) under dir ("" is [bundle.DefaultDir]), once their
// servers are removed.
func DeleteBundleFolders(del []BundleFolder, dir string) error {
	if len(del) == 0 {
		return nil
	}
	if dir == "" {
		d, err := bundle.DefaultDir()
		if err != nil {
			return err
		}
		dir = d
	}
	var failed []string
	for _, f := range del {
		if err := bundle.Remove(dir, f.Folder); err != nil {
			failed = append(failed, err.Error())
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("an unpacked bundle folder was not deleted: %s", strings.Join(failed, "; "))
	}
	return nil
}
