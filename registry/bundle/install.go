package bundle

import (
	"fmt"
	"os"
	"path/filepath"

	"mcptray/registry/catalog"
	"mcptray/registry/secrets"
)

// Installed is a bundle unpacked, and the entry that runs it.
type Installed struct {
	Manifest *Manifest
	Folder   string
	Plan     *catalog.Plan
}

// DefaultDir is where bundles are unpacked: mcptray's data folder's
// bundles/.
func DefaultDir() (string, error) {
	d, err := secrets.DataDir()
	if err != nil {
		return "", fmt.Errorf("find mcptray's data folder: %w", err)
	}
	return filepath.Join(d, "bundles"), nil
}

// Install verifies the bundle at path, checks it runs on host, makes its
// entry from opts and unpacks it under dir (see [Bundle.Folder]). Every
// refusal comes before anything is written, so a refused bundle leaves
// nothing behind. The plan's secrets are not stored yet: keep them with
// [catalog.Plan.KeepSecrets] when the entry is written.
func Install(path, dir string, host *Host, opts *EntryOptions) (*Installed, error) {
	b, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	if err := b.Check(host); err != nil {
		return nil, err
	}
	folder := b.Folder(dir)
	plan, err := b.Entry(folder, opts)
	if err != nil {
		return nil, err
	}
	if _, err := b.Unpack(dir); err != nil {
		return nil, err
	}
	return &Installed{Manifest: b.Manifest, Folder: folder, Plan: plan}, nil
}

// Remove deletes an unpacked bundle's folder (and its name's folder when no
// other version is left). It refuses a folder outside dir.
func Remove(dir, folder string) error {
	rel, err := filepath.Rel(dir, folder)
	if err != nil || rel == "." || !filepath.IsLocal(rel) {
		return fmt.Errorf("%s is not a bundle folder under %s", folder, dir)
	}
	if err := os.RemoveAll(folder); err != nil {
		return err
	}
	_ = os.Remove(filepath.Dir(folder)) // only when no other version is left
	return nil
}
