package app

import (
	"slices"

	"mcptray/registry"
)

// Imported is what merging servers read from an AI client's file into a
// config did: the names added, replaced and skipped (taken already, with
// no replace), and the servers it wrote (added or replacing), whose
// literal secrets are the ones to keep in the keyring.
type Imported struct {
	Added, Replaced, Skipped []string
	Written                  []*registry.Server
}

// MergeImported adds servers to cfg, replacing the ones of the same name
// when replace, else skipping them. The command line's import and the
// window's both merge through it.
func MergeImported(cfg *registry.Config, servers []*registry.Server, replace bool) Imported {
	var im Imported
	for _, s := range servers {
		if i := slices.IndexFunc(cfg.Servers, func(o *registry.Server) bool { return o.Name == s.Name }); i >= 0 {
			if !replace {
				im.Skipped = append(im.Skipped, s.Name)
				continue
			}
			cfg.Servers[i] = s
			im.Replaced = append(im.Replaced, s.Name)
		} else {
			cfg.Servers = append(cfg.Servers, s)
			im.Added = append(im.Added, s.Name)
		}
		im.Written = append(im.Written, s)
	}
	return im
}
