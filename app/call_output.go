package app

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/term"
)

// saver writes binary content to new files in dir named after the tool or
// resource: get-tiny-image-1.png, get-tiny-image-2.png… It never
// overwrites a file.
type saver struct {
	dir, prefix string
	n           int
	err         error // the first failed save
}

// save writes data and returns what to print: the file's path, or why it
// could not be saved.
func (s *saver) save(data []byte, mimeType string) string {
	path, err := s.write(data, mimeType)
	if err != nil {
		if s.err == nil {
			s.err = fmt.Errorf("saving content: %w", err)
		}
		return "not saved: " + err.Error()
	}
	return "saved to " + path
}

// write writes data to the next free name and returns its path.
func (s *saver) write(data []byte, mimeType string) (string, error) {
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

// progressLine shows progress notifications on stderr: one line redrawn
// in place on a terminal, plain lines otherwise. Other stderr output
// (server logs) goes through above, so it never mixes with the line.
type progressLine struct {
	w   io.Writer
	tty bool

	mu    sync.Mutex // protects shown and serialises writes
	shown bool       // a progress line is on the screen
}

func newProgressLine(w io.Writer) *progressLine {
	f, ok := w.(*os.File)
	return &progressLine{w: w, tty: ok && term.IsTerminal(int(f.Fd()))}
}

func (p *progressLine) show(n *mcp.ProgressNotificationParams) {
	text := ProgressText(n)
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.tty {
		fmt.Fprintf(p.w, "progress: %s\n", text)
		return
	}
	fmt.Fprintf(p.w, "\r\x1b[K%s", text)
	p.shown = true
}

// ProgressText is a progress notification in one line: a bar when the
// total is known, then the message.
func ProgressText(n *mcp.ProgressNotificationParams) string {
	var b strings.Builder
	if n.Total > 0 {
		const width = 20
		filled := min(width, max(0, int(n.Progress/n.Total*width)))
		fmt.Fprintf(&b, "[%s%s] %g/%g", strings.Repeat("#", filled), strings.Repeat("-", width-filled), n.Progress, n.Total)
	} else {
		fmt.Fprintf(&b, "%g", n.Progress)
	}
	if n.Message != "" {
		b.WriteString(" " + VisibleLine(n.Message))
	}
	return b.String()
}

// above prints a line of its own, above the progress line.
func (p *progressLine) above(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.shown = false
	}
	fmt.Fprintln(p.w, line)
}

// done clears the progress line.
func (p *progressLine) done() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.shown = false
	}
}
