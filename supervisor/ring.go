package supervisor

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"mcptray/registry"
)

// ring is a server's bounded stderr history: whole lines with sequence
// numbers, evicted oldest first when either the line or the byte cap is
// exceeded. It outlives the processes, so a crash's last words stay readable
// after the restart.
type ring struct {
	maxLines int
	maxBytes int64

	mu    sync.Mutex // guards the fields below
	lines []LogLine  // lines[start:] are live
	start int
	bytes int64
	seq   uint64 // of the last line added
}

func newRing(maxLines int, maxBytes int64) *ring {
	return &ring{maxLines: maxLines, maxBytes: maxBytes}
}

// setLimits sets the caps; lines over them go with the next add.
func (r *ring) setLimits(maxLines int, maxBytes int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.maxLines, r.maxBytes = maxLines, maxBytes
}

// add appends lines, assigning sequence numbers.
func (r *ring) add(batch []LogLine) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, l := range batch {
		r.seq++
		l.Seq = r.seq
		r.lines = append(r.lines, l)
		r.bytes += int64(len(l.Text))
	}
	for n := len(r.lines) - r.start; n > 0 && (n > r.maxLines || r.bytes > r.maxBytes); n-- {
		r.bytes -= int64(len(r.lines[r.start].Text))
		r.lines[r.start] = LogLine{}
		r.start++
	}
	// Compact once the dead prefix is half the slice, so the backing array
	// stays within twice the cap.
	if r.start > 0 && r.start >= len(r.lines)/2 {
		n := copy(r.lines, r.lines[r.start:])
		clear(r.lines[n:])
		r.lines = r.lines[:n]
		r.start = 0
	}
}

// since returns copies of the lines with Seq >= from, and the Seq to ask for
// next time.
func (r *ring) since(from uint64) ([]LogLine, uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	live := r.lines[r.start:]
	if len(live) == 0 || from > r.seq {
		return nil, r.seq + 1
	}
	i := 0
	if first := live[0].Seq; from > first {
		i = int(from - first)
	}
	return append([]LogLine(nil), live[i:]...), r.seq + 1
}

// tail returns copies of the last n lines.
func (r *ring) tail(n int) []LogLine {
	r.mu.Lock()
	defer r.mu.Unlock()
	live := r.lines[r.start:]
	if len(live) > n {
		live = live[len(live)-n:]
	}
	return append([]LogLine(nil), live...)
}

// total is the number of lines ever added.
func (r *ring) total() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seq
}

// lineSplitter turns a byte stream into LogLines: it cuts at '\n' (dropping a
// '\r' before it), cuts lines longer than max into Partial pieces at a rune
// boundary, replaces invalid UTF-8, and keeps an unfinished line until more
// arrives or the stream ends.
type lineSplitter struct {
	max     int
	pending []byte
	now     func() time.Time
}

func (s *lineSplitter) write(p []byte, out []LogLine) []LogLine {
	now := s.now()
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			s.pending = append(s.pending, p...)
			p = nil
		} else {
			s.pending = append(s.pending, p[:i]...)
			p = p[i+1:]
			out = s.cut(out, now)
			out = append(out, LogLine{Time: now, Text: clean(bytes.TrimSuffix(s.pending, []byte{'\r'}))})
			s.pending = s.pending[:0]
			continue
		}
		out = s.cut(out, now)
	}
	return out
}

// cut emits full-size Partial pieces from the front of pending.
func (s *lineSplitter) cut(out []LogLine, now time.Time) []LogLine {
	for len(s.pending) > s.max {
		n := s.max
		// Back off to a rune boundary so a character is not split in two
		// (at most 3 bytes; invalid input just gets cut).
		for k := n; k > n-utf8.UTFMax && k > 0; k-- {
			if utf8.RuneStart(s.pending[k]) {
				n = k
				break
			}
		}
		out = append(out, LogLine{Time: now, Text: clean(s.pending[:n]), Partial: true})
		s.pending = s.pending[:copy(s.pending, s.pending[n:])]
	}
	return out
}

// flush emits the unfinished line at the end of the stream.
func (s *lineSplitter) flush(out []LogLine) []LogLine {
	if len(s.pending) > 0 {
		out = append(out, LogLine{Time: s.now(), Text: clean(s.pending), Partial: true})
		s.pending = s.pending[:0]
	}
	return out
}

func clean(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// pumpStderr reads r to its end, feeding the ring and the log file.
func pumpStderr(r io.Reader, rg *ring, lf *logFile, maxLine int, now func() time.Time, secrets []string) {
	sp := lineSplitter{max: maxLine, now: now}
	buf := make([]byte, 32<<10)
	var batch []LogLine
	for {
		n, err := r.Read(buf)
		if n > 0 {
			batch = sp.write(buf[:n], batch[:0])
		}
		if err != nil {
			batch = sp.flush(batch[:0])
		}
		if len(batch) > 0 {
			if len(secrets) > 0 {
				for i := range batch {
					batch[i].Text = registry.MaskSecrets(batch[i].Text, secrets)
				}
			}
			rg.add(batch)
			lf.write(batch)
			batch = batch[:0]
		}
		if err != nil {
			return
		}
	}
}
