package bundle

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Limits on what a bundle may unpack to: a bundle with its node_modules is
// tens of megabytes; one that claims gigabytes is a zip bomb.
const (
	maxFiles     = 100000
	maxTotalSize = 2 << 30
)

// signatureHeader starts the PKCS#7 block `mcpb sign` appends after the
// zip; the zip is what comes before it.
var signatureHeader = []byte("MCPB_SIG_V1")

// Bundle is an opened, verified bundle.
type Bundle struct {
	Path     string
	Manifest *Manifest
	SHA256   string // of the file

	f     *os.File
	zr    *zip.Reader
	files []*zip.File // regular files, checked
}

// Error is a bundle refused, with the reason.
type Error struct {
	Bundle string
	Reason string
	Err    error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Bundle, e.Reason, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Bundle, e.Reason)
}

func (e *Error) Unwrap() error { return e.Err }

// Open verifies the bundle at path: a zip whose every entry stays inside
// its folder and is a regular file or a folder (no links, no devices),
// within the size limits, with a valid manifest.json whose entry point is in
// the archive. Close it when done.
func Open(path string) (*Bundle, error) {
	name := filepath.Base(path)
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{Bundle: name, Reason: "cannot open it", Err: err}
	}
	b := &Bundle{Path: path, f: f}
	if err := b.open(name); err != nil {
		f.Close()
		return nil, err
	}
	return b, nil
}

// Close releases the file.
func (b *Bundle) Close() error { return b.f.Close() }

func (b *Bundle) open(name string) error {
	st, err := b.f.Stat()
	if err != nil {
		return &Error{Bundle: name, Reason: "cannot read it", Err: err}
	}
	size := st.Size()
	sum, err := fileSHA256(b.f)
	if err != nil {
		return &Error{Bundle: name, Reason: "cannot read it", Err: err}
	}
	b.SHA256 = sum
	if i := lastIndexIn(b.f, size, signatureHeader); i >= 0 {
		size = i
	}
	zr, err := zip.NewReader(io.NewSectionReader(b.f, 0, size), size)
	if err != nil {
		return &Error{Bundle: name, Reason: "not a zip archive (an MCP bundle is a zip with manifest.json)", Err: err}
	}
	b.zr = zr
	if len(zr.File) > maxFiles {
		return &Error{Bundle: name, Reason: fmt.Sprintf("holds %d files, more than the %d mcptray unpacks", len(zr.File), maxFiles)}
	}
	var total uint64
	var manifest *zip.File
	seen := map[string]bool{}
	for _, zf := range zr.File {
		clean, err := cleanRel(zf.Name)
		if err != nil {
			return &Error{Bundle: name, Reason: "a path escapes the bundle's folder", Err: err}
		}
		mode := zf.Mode()
		switch {
		case mode&fs.ModeSymlink != 0:
			return &Error{Bundle: name, Reason: fmt.Sprintf("%s is a symbolic link, which could point outside the bundle's folder", zf.Name)}
		case mode.IsDir() || strings.HasSuffix(zf.Name, "/"):
			continue
		case !mode.IsRegular():
			return &Error{Bundle: name, Reason: fmt.Sprintf("%s is not a regular file (%v)", zf.Name, mode.Type())}
		}
		key := strings.ToLower(clean) // case-insensitive file systems would merge them
		if seen[key] {
			return &Error{Bundle: name, Reason: fmt.Sprintf("%s is in the archive twice", zf.Name)}
		}
		seen[key] = true
		total += zf.UncompressedSize64
		if total > maxTotalSize {
			return &Error{Bundle: name, Reason: fmt.Sprintf("unpacks to more than %d GiB", maxTotalSize>>30)}
		}
		if clean == "manifest.json" {
			manifest = zf
		}
		b.files = append(b.files, zf)
	}
	if manifest == nil {
		return &Error{Bundle: name, Reason: "no manifest.json at the top of the archive"}
	}
	data, err := readAll(manifest, 1<<20)
	if err != nil {
		return &Error{Bundle: name, Reason: "cannot read manifest.json", Err: err}
	}
	m, err := ParseManifest(name, data)
	if err != nil {
		return err
	}
	entry, _ := cleanRel(m.Server.EntryPoint)
	if !seen[strings.ToLower(entry)] {
		return &ManifestError{Bundle: name, Field: "server.entry_point", Reason: fmt.Sprintf("%s is not in the bundle", m.Server.EntryPoint)}
	}
	b.Manifest = m
	return nil
}

func readAll(zf *zip.File, limit int64) ([]byte, error) {
	rc, err := zf.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("larger than %d KiB", limit>>10)
	}
	return data, nil
}

// lastIndexIn finds the last sep in the file's final 64 KiB (where a
// signature block sits), -1 when none.
func lastIndexIn(f *os.File, size int64, sep []byte) int64 {
	start := max(0, size-64<<10)
	buf := make([]byte, size-start)
	if _, err := f.ReadAt(buf, start); err != nil && !errors.Is(err, io.EOF) {
		return -1
	}
	i := bytes.LastIndex(buf, sep)
	if i < 0 {
		return -1
	}
	return start + int64(i)
}

// Folder is where a bundle unpacks under dir: dir/NAME/VERSION.
func (b *Bundle) Folder(dir string) string {
	return filepath.Join(dir, b.Manifest.Name, b.Manifest.Version)
}

// Unpack writes the bundle into its folder under dir (see [Bundle.Folder]),
// replacing an earlier unpack of the same version, and returns the folder.
// It unpacks into a temporary folder beside it first: on a failure nothing
// is left behind, and the earlier unpack stays.
func (b *Bundle) Unpack(dir string) (string, error) {
	name := filepath.Base(b.Path)
	dest := b.Folder(dir)
	parent := filepath.Dir(dest)
	createdParent := false
	if _, err := os.Stat(parent); errors.Is(err, fs.ErrNotExist) {
		createdParent = true
	}
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return "", &Error{Bundle: name, Reason: "cannot make its folder", Err: err}
	}
	tmp, err := os.MkdirTemp(parent, "."+b.Manifest.Version+".unpacking-")
	if err != nil {
		return "", &Error{Bundle: name, Reason: "cannot make its folder", Err: err}
	}
	fail := func(err error) (string, error) {
		os.RemoveAll(tmp)
		if createdParent {
			os.Remove(parent) // only when empty
		}
		return "", err
	}
	root, err := os.OpenRoot(tmp)
	if err != nil {
		return fail(&Error{Bundle: name, Reason: "cannot open its folder", Err: err})
	}
	defer root.Close()
	for _, zf := range b.files {
		rel, _ := cleanRel(zf.Name)
		if err := extract(root, rel, zf); err != nil {
			return fail(&Error{Bundle: name, Reason: "cannot unpack " + zf.Name, Err: err})
		}
	}
	// Windows renames no folder something holds open.
	root.Close()
	// Replace an earlier unpack of this version, keeping it until the new
	// one is in place.
	var old string
	if _, err := os.Lstat(dest); err == nil {
		old = tmp + ".old"
		if err := os.Rename(dest, old); err != nil {
			return fail(&Error{Bundle: name, Reason: "cannot replace " + dest, Err: err})
		}
	}
	if err := os.Rename(tmp, dest); err != nil {
		if old != "" {
			_ = os.Rename(old, dest)
		}
		return fail(&Error{Bundle: name, Reason: "cannot move it into " + dest, Err: err})
	}
	if old != "" {
		os.RemoveAll(old)
	}
	return dest, nil
}

// extract writes one file through root, which refuses any path (or link)
// leading outside the folder.
func extract(root *os.Root, rel string, zf *zip.File) error {
	if d := filepath.Dir(filepath.FromSlash(rel)); d != "." {
		if err := root.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	perm := fs.FileMode(0o600)
	if zf.Mode()&0o111 != 0 {
		perm = 0o700 // a binary server, or a script it runs
	}
	out, err := root.OpenFile(filepath.FromSlash(rel), os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	rc, err := zf.Open()
	if err != nil {
		out.Close()
		return err
	}
	defer rc.Close()
	// The zip reader checks the CRC at the end of the file: a damaged
	// archive fails here.
	n, err := io.Copy(out, io.LimitReader(rc, int64(zf.UncompressedSize64)+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && uint64(n) != zf.UncompressedSize64 {
		err = fmt.Errorf("its size is not the %d bytes the archive says", zf.UncompressedSize64)
	}
	return err
}
