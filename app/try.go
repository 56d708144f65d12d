package app

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
)

// What the window needs to try a server that is not drawing: the forms of
// prompts and resource templates, and where content is saved.

// SaveDir is where the window saves what servers send that it cannot
// show: the Downloads folder ($XDG_DOWNLOAD_DIR, else ~/Downloads), or
// the home folder when there is none.
func SaveDir() string {
	if d := os.Getenv("XDG_DOWNLOAD_DIR"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return os.TempDir()
	}
	if st, err := os.Stat(filepath.Join(home, "Downloads")); err == nil && st.IsDir() {
		return filepath.Join(home, "Downloads")
	}
	return home
}

// SaveContent writes data to a new file in dir named after what it came
// from (get-tiny-image-1.png, …; never over a file) and returns its path.
func SaveContent(dir, from string, data []byte, mimeType string) (string, error) {
	sv := NewSaver(dir, from)
	return sv.Write(data, mimeType)
}

// DrawablePNG is a PNG as a browser draws it: ancillary chunks (colour
// profile, text, EXIF…) whose checksum is wrong are left out, as libpng
// does, where Go's decoder refuses the whole image. server-everything's
// tiny image has such a profile. Anything else is returned as it is.
func DrawablePNG(data []byte) []byte {
	const sig = "\x89PNG\r\n\x1a\n"
	if !bytes.HasPrefix(data, []byte(sig)) {
		return data
	}
	out := append([]byte(nil), sig...)
	dropped := false
	for rest := data[len(sig):]; len(rest) > 0; {
		if len(rest) < 12 {
			return data
		}
		n := binary.BigEndian.Uint32(rest)
		if uint64(n)+12 > uint64(len(rest)) {
			return data
		}
		chunk := rest[:12+n]
		rest = rest[12+n:]
		typ := chunk[4:8]
		ancillary := typ[0]&0x20 != 0
		if ancillary && crc32.ChecksumIEEE(chunk[4:8+n]) != binary.BigEndian.Uint32(chunk[8+n:]) {
			dropped = true
			continue
		}
		out = append(out, chunk...)
	}
	if !dropped {
		return data
	}
	return out
}
