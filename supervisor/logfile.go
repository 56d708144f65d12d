package supervisor

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// logFile appends a server's stderr to NAME.log, rotating it to NAME.log.1
// when it passes its size cap, so a chatty server cannot fill the disk.
// Write errors switch the file off: the ring still has the lines, and one
// broken disk must not stop a server.
type logFile struct {
	path string
	max  int64

	mu   sync.Mutex // guards the fields below
	f    *os.File
	size int64
	err  error // first error; the file is off once set
	buf  bytes.Buffer
}

// openLogFile returns nil (a no-op logFile) when dir is "".
func openLogFile(dir, name string, max int64) *logFile {
	if dir == "" {
		return nil
	}
	return &logFile{path: filepath.Join(dir, name+".log"), max: max}
}

func (l *logFile) write(lines []LogLine) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Reset()
	for _, ln := range lines {
		l.buf.WriteString(ln.Time.UTC().Format("2006-01-02T15:04:05.000Z "))
		l.buf.WriteString(ln.Text)
		if ln.Partial {
			l.buf.WriteString(" …")
		}
		l.buf.WriteByte('\n')
	}
	l.writeLocked(l.buf.Bytes())
}

// note writes a line of mcptray's own ("started pid 123") so the file reads
// as a history.
func (l *logFile) note(t time.Time, format string, args ...any) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writeLocked(fmt.Appendf(nil, "%s --- mcptray: %s\n", t.UTC().Format("2006-01-02T15:04:05.000Z"), fmt.Sprintf(format, args...)))
}

func (l *logFile) writeLocked(p []byte) {
	if l.err != nil {
		return
	}
	if l.f != nil && l.size+int64(len(p)) > l.max {
		l.f.Close()
		l.f = nil
		l.err = rotate(l.path)
	}
	if l.f == nil && l.err == nil {
		l.f, l.size, l.err = openAppend(l.path)
		// A file left near its cap by an earlier run is rotated at once.
		if l.err == nil && l.size > 0 && l.size+int64(len(p)) > l.max {
			l.f.Close()
			l.f = nil
			if l.err = rotate(l.path); l.err == nil {
				l.f, l.size, l.err = openAppend(l.path)
			}
		}
	}
	if l.err != nil {
		return
	}
	n, err := l.f.Write(p)
	l.size += int64(n)
	if err != nil {
		l.err = err
	}
}

func rotate(path string) error {
	if err := os.Rename(path, path+".1"); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// openAppend opens (creating it and its folder, private to the user) a log
// file for appending and returns its size.
func openAppend(path string) (*os.File, int64, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, 0, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}

func (l *logFile) close() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
}
