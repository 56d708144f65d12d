package app

import (
	"errors"
	"fmt"
	"mime"
	"os"
	"path/filepath"
	"strings"
)

// Saver writes binary content to new files in dir named after the tool or
// resource: get-tiny-image-1.png, get-tiny-image-2.png… It never
// overwrites a file.
type Saver struct {
	dir, prefix string
	n           int
	err         error // the first failed save
}

// Save writes data and returns what to print: the file's path, or why it
// could not be saved.
func (s *Saver) Save(data []byte, mimeType string) string {
	path, err := s.Write(data, mimeType)
	if err != nil {
		if s.err == nil {
			s.err = fmt.Errorf("saving content: %w", err)
		}
		return "not saved: " + err.Error()
	}
	return "saved to " + path
}

// Write writes data to the next free name and returns its path.
func (s *Saver) Write(data []byte, mimeType string) (string, error) {
	ext := extension(mimeType)
	for {
		s.n++
		path := filepath.Join(s.dir, fmt.Sprintf("%s-%d%s", s.prefix, s.n, ext))
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, os.ErrExist) && s.n < 10000 {
			continue
		}
		if err == nil {
			_, err = f.Write(data)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				os.Remove(path)
			}
		}
		if err != nil {
			return "", err
		}
		return path, nil
	}
}

var knownExtensions = map[string]string{
	"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp", "image/svg+xml": ".svg",
	"audio/wav": ".wav", "audio/x-wav": ".wav", "audio/mpeg": ".mp3", "audio/ogg": ".ogg", "audio/webm": ".webm",
	"application/pdf": ".pdf", "application/gzip": ".gz", "application/json": ".json", "text/plain": ".txt",
}

func extension(mimeType string) string {
	base, _, _ := mime.ParseMediaType(mimeType)
	if e, ok := knownExtensions[base]; ok {
		return e
	}
	if exts, _ := mime.ExtensionsByType(base); len(exts) > 0 {
		return exts[0]
	}
	return ".bin"
}

// safeFileName makes a tool name or URI fit for a file name.
func safeFileName(s string) string {
	if i := strings.LastIndexAny(s, "/:"); i >= 0 && i < len(s)-1 {
		s = s[i+1:]
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	out := strings.Trim(b.String(), ".")
	if out == "" || len(out) > 64 {
		out = "content"
	}
	return out
}

// NewSaver saves into dir, naming the files after from (a tool's or a
// resource's name).
func NewSaver(dir, from string) *Saver { return &Saver{dir: dir, prefix: safeFileName(from)} }

// Err is the first save that failed, if any.
func (s *Saver) Err() error { return s.err }
