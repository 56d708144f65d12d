package control

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"mcptray/registry"
)

// watchFile calls changed once it watches the file at path (the file may
// have changed since it was last read), and then each time the file may
// have changed on disk, after a quiet moment (edits come in bursts: an editor's write,
// rename, chmod), until ctx ends. It follows what a person does to a config
// file: edits in place, replacement by rename, a symlink whose target is
// edited or replaced or which is pointed elsewhere, and the folder deleted
// and created again. problem is called with why some of that cannot be
// followed, and with nil once it can again. It returns an error only when
// it cannot watch at all.
func watchFile(ctx context.Context, path string, debounce time.Duration, changed func(), problem func(error)) error {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer fw.Close()
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	w := &fileWatch{fw: fw, path: abs}
	lastProblem := ""
	arm := func() {
		err := w.arm()
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if msg != lastProblem {
			lastProblem = msg
			problem(err)
		}
	}
	arm()
	changed()
	timer := time.NewTimer(debounce)
	timer.Stop()
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-fw.Events:
			if !ok {
				return errors.New("the file watcher stopped")
			}
			if !w.matters(ev.Name) {
				continue
			}
			// A folder or link on the way may have gone or come: watch
			// what is there now before the next edit.
			arm()
			timer.Reset(debounce)
		case err, ok := <-fw.Errors:
			if !ok {
				return errors.New("the file watcher stopped")
			}
			// Events were lost (an overflow): read the file to be sure.
			if !errors.Is(err, fsnotify.ErrEventOverflow) {
				problem(err)
				lastProblem = err.Error()
			}
			arm()
			timer.Reset(debounce)
		case <-timer.C:
			arm()
			changed()
		}
	}
}

// fileWatch is the set of folders watched for one file.
type fileWatch struct {
	fw   *fsnotify.Watcher
	path string
	// names are the paths whose changes matter: the file, each link on
	// the way to its target, the target, and folders not there (yet).
	names []string
}

// maxLinks bounds a chain of symlinks (as the kernel's ELOOP does).
const maxLinks = 40

// arm watches the folder of the file, of every symlink on the way to its
// target and of the target (or, where a folder is missing, the nearest
// folder above it that exists, to see it come back), and stops watching
// folders no longer on the way.
func (w *fileWatch) arm() error {
	var names []string
	dirs := map[string]bool{}
	add := func(p string) {
		names = append(names, p)
		dir := filepath.Dir(p)
		for {
			if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
				dirs[dir] = true
				return
			}
			names = append(names, dir)
			up := filepath.Dir(dir)
			if up == dir {
				return
			}
			dir = up
		}
	}
	p := w.path
	chain := []string{p}
	for range maxLinks {
		add(p)
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			break
		}
		target, err := os.Readlink(p)
		if err != nil {
			break
		}
		if !filepath.IsAbs(target) {
			// Relative to the link's real folder, as the kernel reads it.
			dir := filepath.Dir(p)
			if real, err := filepath.EvalSymlinks(dir); err == nil {
				dir = real
			}
			target = filepath.Join(dir, target)
		}
		p = filepath.Clean(target)
		chain = append(chain, p)
	}
	// Folders on the way may be links too (~/.config/mcptray pointing into
	// a dotfiles checkout; a link's target under a profile's "current"
	// folder link, as home-manager's generations are): watch where each
	// folder link on the way to the file and to every link's target is,
	// and where the links it points through are, to see one pointed
	// elsewhere.
	seen := map[string]bool{}
	var folderLinks func(p string, depth int)
	folderLinks = func(p string, depth int) {
		for dir := filepath.Dir(p); dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
			fi, err := os.Lstat(dir)
			if err != nil || fi.Mode()&os.ModeSymlink == 0 || seen[dir] {
				continue
			}
			seen[dir] = true
			add(dir)
			if target, err := os.Readlink(dir); err == nil && depth < maxLinks {
				if !filepath.IsAbs(target) {
					target = filepath.Join(filepath.Dir(dir), target)
				}
				folderLinks(filepath.Join(filepath.Clean(target), "x"), depth+1)
			}
		}
	}
	for _, p := range chain {
		folderLinks(p, 0)
	}
	// The file that is read in the end (registry writes the same one).
	if real, err := registry.ResolveLinks(w.path); err == nil && real != p {
		add(real)
	}
	w.names = names

	var errs []error
	for dir := range dirs {
		if err := w.fw.Add(dir); err != nil {
			errs = append(errs, fmt.Errorf("watch %s: %w", dir, err))
		}
	}
	for _, dir := range w.fw.WatchList() {
		if !dirs[dir] {
			_ = w.fw.Remove(dir)
		}
	}
	return errors.Join(errs...)
}

// matters reports whether an event on name can change what the file reads:
// it is one of the names, or a folder above one.
func (w *fileWatch) matters(name string) bool {
	name = filepath.Clean(name)
	for _, n := range w.names {
		if n == name || strings.HasPrefix(n, name+string(filepath.Separator)) {
			return true
		}
	}
	return false
}
