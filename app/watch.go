package app

import (
	"context"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"mcptray/registry"
)

// WatchConfig loads the config at path each time it changes on disk and
// hands it to apply, until ctx ends. Edits come in bursts (an editor's
// write, rename, chmod), so it waits for a quiet moment first. A file that
// does not load is given to onErr and not applied: what runs keeps running.
func WatchConfig(ctx context.Context, path string, apply func(*registry.Config), onErr func(error)) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	// Watch the folder: editors replace the file by renaming.
	if err := w.Add(filepath.Dir(path)); err != nil {
		return err
	}
	var debounce <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev := <-w.Events:
			if filepath.Clean(ev.Name) == filepath.Clean(path) {
				debounce = time.After(300 * time.Millisecond)
			}
		case err := <-w.Errors:
			return err
		case <-debounce:
			cfg, err := registry.Load(path)
			if err != nil {
				onErr(err)
				continue
			}
			apply(cfg)
		}
	}
}
