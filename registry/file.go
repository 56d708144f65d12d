package registry

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Files a person owns (servers.toml, an AI client's config) are changed only
// through EditFile: under a cross-process lock, through symbolic links to the
// file they point at, never over anything but a regular file the person can
// write, with a backup that is complete before the file is replaced.

var (
	// ErrChanged is a file that another program kept changing while mcptray
	// was editing it: nothing was written.
	ErrChanged = errors.New("changed by another program while mcptray was editing it")
	// ErrReadOnly is a file its owner made read-only: mcptray does not
	// replace it.
	ErrReadOnly = errors.New("the file is read-only")
	// ErrNotRegular is a path that holds something other than a regular
	// file (a named pipe, a device, a folder, a socket).
	ErrNotRegular = errors.New("not a regular file")
	// ErrLocked is a lock another process held for longer than
	// WriteOptions.LockTimeout.
	ErrLocked = errors.New("locked by another process")
)

// WriteOptions tunes [EditFile] and [WriteFileAtomic].
type WriteOptions struct {
	// Backup, when set and the file exists, is where a copy of the current
	// file is kept before it is replaced. With Stamp it is a prefix: each
	// backup is Backup-YYYYMMDDTHHMMSSZ (with -2, -3, … within one second)
	// and older ones are pruned (see KeepBackups).
	Backup string
	// Stamp, when set, makes backups timestamped with its time.
	Stamp func() time.Time
	// KeepBackups is how many timestamped backups stay (default 5): the
	// oldest, which is the file as it was before mcptray first changed it,
	// and the newest others.
	KeepBackups int
	// Perm is the mode for a new file (default 0600). An existing file keeps
	// its mode, narrowed to Perm's bits when Narrow is set.
	Perm fs.FileMode
	// Narrow makes an existing file's mode no wider than Perm.
	Narrow bool
	// DryRun computes the change without taking the lock or writing.
	DryRun bool
	// LockTimeout is how long to wait for another process's lock on the
	// file (default 30s).
	LockTimeout time.Duration
}

// Edited is the outcome of [EditFile].
type Edited struct {
	// Path is the file as named; Target the file written, which is Path
	// with every symbolic link resolved.
	Path, Target string
	// Old is the content the change was made to (nil when the file did not
	// exist); New what it became (or would become, in a dry run).
	Old, New []byte
	// Backup is the backup written ("" when none).
	Backup string
	// Written reports whether the file was replaced.
	Written bool
}

// maxEditAttempts bounds how often a change is redone on content another
// program wrote while it was being made.
const maxEditAttempts = 5

// EditFile changes the file at path: it takes a lock beside the file (held
// against other mcptray processes), reads it, calls change with its content
// (nil when it does not exist; an empty file is a non-nil empty slice),
// writes the result to a temporary file and re-reads the file just before
// renaming over it. When another program (the client itself) changed the
// file in the meantime, change is called again on the new content; when it
// keeps changing, nothing is written and the error wraps ErrChanged. The
// result keeps the file's line endings.
//
// Symbolic links are followed to the file they point at (all levels), which
// keeps its mode and owner; the link stays a link. A path that holds
// anything but a regular file is refused before it is opened
// (ErrNotRegular), as is a read-only file (ErrReadOnly). If anything fails,
// the file, and any earlier backup of the same name, are left as they were.
func EditFile(path string, opts *WriteOptions, change func(old []byte) ([]byte, error)) (*Edited, error) {
	o := WriteOptions{}
	if opts != nil {
		o = *opts
	}
	if o.Perm == 0 {
		o.Perm = 0o600
	}
	if o.KeepBackups <= 0 {
		o.KeepBackups = 5
	}
	if o.LockTimeout <= 0 {
		o.LockTimeout = 30 * time.Second
	}
	target, err := ResolveLinks(path)
	if err != nil {
		return nil, fmt.Errorf("save %s: %w", path, err)
	}
	e := &Edited{Path: path, Target: target}
	if !o.DryRun {
		dir := filepath.Dir(target)
		if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return nil, fmt.Errorf("save %s: %w", path, err)
			}
		}
		unlock, err := lockFile(target, o.LockTimeout)
		if err != nil {
			return nil, fmt.Errorf("save %s: %w", path, err)
		}
		defer unlock()
	}
	for attempt := 1; ; attempt++ {
		cur, err := readTarget(target)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		if cur.info != nil {
			if err := checkWritable(target, cur.info); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
		}
		next, err := change(cur.data)
		if err != nil {
			return nil, err
		}
		next = MatchLineEndings(cur.data, next)
		e.Old, e.New = cur.data, next
		if bytes.Equal(cur.data, next) {
			if cur.info != nil && o.Narrow && !o.DryRun {
				if p := cur.info.Mode().Perm(); p&o.Perm != p {
					if err := os.Chmod(target, p&o.Perm); err != nil {
						return nil, fmt.Errorf("save %s: %w", path, err)
					}
				}
			}
			return e, nil
		}
		if o.DryRun {
			return e, nil
		}
		done, err := commit(target, cur, next, &o, e)
		if err != nil {
			return nil, fmt.Errorf("save %s: %w", path, err)
		}
		if done {
			return e, nil
		}
		if attempt == maxEditAttempts {
			return nil, fmt.Errorf("save %s: %w (%d attempts); nothing written: try again once it is done", path, ErrChanged, attempt)
		}
	}
}

// WriteFileAtomic replaces path with data through [EditFile].
func WriteFileAtomic(path string, data []byte, opts *WriteOptions) error {
	_, err := EditFile(path, opts, func([]byte) ([]byte, error) { return data, nil })
	return err
}

// snapshot is a file as read: data nil and info nil when it does not exist.
type snapshot struct {
	data []byte
	info fs.FileInfo
}

func (s snapshot) same(o snapshot) bool {
	return (s.info == nil) == (o.info == nil) && bytes.Equal(s.data, o.data)
}

// readTarget reads a regular file without blocking on anything else: the
// path is checked before it is opened, and opened non-blocking, so a named
// pipe put there cannot hang the read.
func readTarget(path string) (snapshot, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return snapshot{}, nil
	}
	if err != nil {
		return snapshot{}, err
	}
	if err := checkRegular(fi); err != nil {
		return snapshot{}, err
	}
	f, err := openNonblock(path)
	if err != nil {
		return snapshot{}, err
	}
	defer f.Close()
	fi, err = f.Stat()
	if err != nil {
		return snapshot{}, err
	}
	if err := checkRegular(fi); err != nil {
		return snapshot{}, err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return snapshot{}, err
	}
	if data == nil {
		data = []byte{}
	}
	return snapshot{data: data, info: fi}, nil
}

// ReadFile reads a regular file the way [EditFile] does, through symbolic
// links: anything else at path (a named pipe, a device) is refused with
// ErrNotRegular instead of being opened. os.DevNull reads as empty.
func ReadFile(path string) ([]byte, error) {
	if path == os.DevNull {
		return []byte{}, nil // --config /dev/null: an empty config
	}
	target, err := ResolveLinks(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s, err := readTarget(target)
	var pe *fs.PathError
	switch {
	case errors.As(err, &pe):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("%s: %w", path, err)
	case s.info == nil:
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	}
	return s.data, nil
}

func checkRegular(fi fs.FileInfo) error {
	m := fi.Mode()
	if m.IsRegular() {
		return nil
	}
	what := "a special file"
	switch {
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	case m&fs.ModeDevice != 0:
		what = "a device"
	case m.IsDir():
		what = "a folder"
	case m&fs.ModeSymlink != 0:
		what = "a symbolic link that changed while it was read"
	}
	return fmt.Errorf("%w: it is %s; mcptray reads and writes only regular files", ErrNotRegular, what)
}

func checkWritable(path string, fi fs.FileInfo) error {
	if fi.Mode().Perm()&0o222 == 0 || !canWrite(path) {
		return fmt.Errorf("%w (mode %04o): mcptray does not replace a file you protected; make it writable (chmod u+w) and run again", ErrReadOnly, fi.Mode().Perm())
	}
	return nil
}

// ResolveLinks follows symbolic links at path, every level, to the file they
// name (which need not exist yet): the file EditFile writes, and the one a
// watcher of path must watch.
func ResolveLinks(path string) (string, error) {
	p := path
	for range 255 {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return p, nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return p, nil
		}
		link, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(link) {
			// Relative to the link's real folder: a ".." in the link must
			// not be cleaned away against a folder that is itself a link.
			dir := filepath.Dir(p)
			if real, err := filepath.EvalSymlinks(dir); err == nil {
				dir = real
			}
			link = filepath.Join(dir, link)
		}
		p = link
	}
	return "", fmt.Errorf("too many levels of symbolic links")
}

// commit writes next over target unless target no longer holds cur; done is
// false when it changed (nothing was written).
func commit(target string, cur snapshot, next []byte, o *WriteOptions, e *Edited) (done bool, err error) {
	perm := o.Perm
	if cur.info != nil {
		perm = cur.info.Mode().Perm()
		if o.Narrow {
			perm &= o.Perm
		}
	}
	var cleanup []string
	defer func() {
		for _, n := range cleanup {
			os.Remove(n)
		}
	}()
	tmp, err := writeTemp(target, next, perm, cur.info, true)
	if tmp != "" {
		cleanup = append(cleanup, tmp)
	}
	if err != nil {
		return false, err
	}
	backup, bakTmp := "", ""
	if o.Backup != "" && cur.info != nil {
		backup = o.Backup
		if o.Stamp != nil {
			if backup, err = stampedName(o.Backup, o.Stamp()); err != nil {
				return false, fmt.Errorf("backup: %w", err)
			}
		}
		bakTmp, err = writeTemp(backup, cur.data, perm, cur.info, true)
		if bakTmp != "" {
			cleanup = append(cleanup, bakTmp)
		}
		if err != nil {
			return false, fmt.Errorf("backup: %w", err)
		}
	}
	if hookBeforeRename != nil {
		hookBeforeRename(target)
	}
	// Re-read just before the rename: the client may have written the
	// file since it was read.
	now, err := readTarget(target)
	if err != nil {
		return false, err
	}
	if !now.same(cur) {
		return false, nil
	}
	if bakTmp != "" {
		if err := rename(bakTmp, backup); err != nil {
			return false, fmt.Errorf("backup: %w", err)
		}
		cleanup = cleanup[:1]
		syncDir(filepath.Dir(backup))
	}
	if err := rename(tmp, target); err != nil {
		if o.Stamp != nil && backup != "" {
			os.Remove(backup) // a backup of a change that did not happen
		}
		return false, err
	}
	cleanup = nil
	syncDir(filepath.Dir(target))
	e.Backup, e.Written = backup, true
	if o.Stamp != nil && backup != "" {
		pruneBackups(o.Backup, o.KeepBackups)
	}
	return true, nil
}

// hookBeforeRename, when set by a test, runs after the temporary files are
// written and before the file is re-read and replaced.
var hookBeforeRename func(target string)

// hookWrite, when set by a test, can fail the write of the temporary file
// for path (the file, or its backup) as a full disk would.
var hookWrite func(path string) error

// ReplaceFile writes data to path atomically (a temporary file beside it,
// then a rename), without the lock, the re-read and the backup of
// [WriteFileAtomic], and without waiting for the disk: for mcptray's own
// records, which one process owns and which matter only while the machine
// runs (a pid record). Files a person owns go through [WriteFileAtomic].
func ReplaceFile(path string, data []byte, perm fs.FileMode) error {
	tmp, err := writeTemp(path, data, perm, nil, false)
	if err == nil {
		err = rename(tmp, path)
	}
	if err != nil && tmp != "" {
		os.Remove(tmp)
	}
	return err
}

// writeTemp writes data to a new temporary file beside path, with perm and
// the owner of like (when given), synced to disk when durable. It returns
// the temporary file's name even on error, for the caller to remove.
func writeTemp(path string, data []byte, perm fs.FileMode, like fs.FileInfo, durable bool) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return "", err
	}
	name := f.Name()
	err = func() error {
		if err := f.Chmod(perm); err != nil {
			return err
		}
		if like != nil {
			if err := keepOwner(f, like); err != nil {
				return err
			}
		}
		if hookWrite != nil {
			if err := hookWrite(path); err != nil {
				return err
			}
		}
		if _, err := f.Write(data); err != nil {
			return err
		}
		if !durable {
			return nil
		}
		return f.Sync()
	}()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return name, err
}

const stampLayout = "20060102T150405Z"

// stampedName is prefix-TIME, or prefix-TIME-N for the first N that is not
// taken: two changes in one second must not overwrite the first backup.
func stampedName(prefix string, t time.Time) (string, error) {
	base := prefix + "-" + t.UTC().Format(stampLayout)
	name := base
	for i := 2; ; i++ {
		if _, err := os.Lstat(name); errors.Is(err, fs.ErrNotExist) {
			return name, nil
		} else if err != nil {
			return "", err
		}
		name = fmt.Sprintf("%s-%d", base, i)
	}
}

// pruneBackups keeps the oldest of prefix's timestamped backups and the
// newest keep-1 others (best effort: a backup that cannot be removed stays).
func pruneBackups(prefix string, keep int) {
	dir, base := filepath.Dir(prefix), filepath.Base(prefix)+"-"
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type stamped struct {
		name string
		t    time.Time
		n    int
	}
	var all []stamped
	for _, en := range entries {
		rest, ok := strings.CutPrefix(en.Name(), base)
		if !ok || !en.Type().IsRegular() || len(rest) < len(stampLayout) {
			continue
		}
		t, err := time.Parse(stampLayout, rest[:len(stampLayout)])
		if err != nil {
			continue
		}
		n := 1
		if tail := rest[len(stampLayout):]; tail != "" {
			if n, err = strconv.Atoi(strings.TrimPrefix(tail, "-")); err != nil || !strings.HasPrefix(tail, "-") {
				continue
			}
		}
		all = append(all, stamped{en.Name(), t, n})
	}
	keep = max(keep, 2)
	if len(all) <= keep {
		return
	}
	slices.SortFunc(all, func(a, b stamped) int {
		if c := a.t.Compare(b.t); c != 0 {
			return c
		}
		return a.n - b.n
	})
	for _, s := range all[1 : len(all)-(keep-1)] {
		os.Remove(filepath.Join(dir, s.name))
	}
}

// lockName is the lock file of path: .NAME.lock beside it.
func lockName(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".lock")
}

// pollLock calls try until it takes the lock, pausing a little longer each
// time, for up to timeout. A blocking lock call could not be given up on,
// nor interrupted by a signal.
func pollLock(name string, timeout time.Duration, try func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	pause := time.Millisecond
	for {
		ok, err := try()
		if err != nil {
			return fmt.Errorf("lock %s: %w", name, err)
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: %s is held for over %s", ErrLocked, name, timeout)
		}
		time.Sleep(pause)
		pause = min(pause*2, 50*time.Millisecond)
	}
}

// MatchLineEndings gives next the line endings of old: when old's lines end
// mostly in CRLF, every bare LF in next becomes CRLF. Editors write new
// lines with LF; without this a Windows-style file would come back mixed.
func MatchLineEndings(old, next []byte) []byte {
	crlf := bytes.Count(old, []byte("\r\n"))
	if crlf == 0 || crlf*2 <= bytes.Count(old, []byte("\n")) {
		return next
	}
	var b bytes.Buffer
	b.Grow(len(next) + bytes.Count(next, []byte("\n")))
	for i, c := range next {
		if c == '\n' && (i == 0 || next[i-1] != '\r') {
			b.WriteByte('\r')
		}
		b.WriteByte(c)
	}
	return b.Bytes()
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // best effort: not supported everywhere (Windows)
		d.Close()
	}
}
