package supervisor

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"mcptray/internal/filemode"
)

func split(max int, chunks ...string) []LogLine {
	sp := lineSplitter{max: max, now: time.Now}
	var out []LogLine
	for _, c := range chunks {
		out = sp.write([]byte(c), out)
	}
	return sp.flush(out)
}

func TestLineSplitter(t *testing.T) {
	type piece struct {
		text    string
		partial bool
	}
	tests := []struct {
		name   string
		max    int
		chunks []string
		want   []piece
	}{
		{"lines", 100, []string{"a\nb\n"}, []piece{{"a", false}, {"b", false}}},
		{"line across chunks", 100, []string{"hel", "lo\nwor", "ld\n"}, []piece{{"hello", false}, {"world", false}}},
		{"crlf", 100, []string{"a\r\nb\r\n"}, []piece{{"a", false}, {"b", false}}},
		{"empty lines kept", 100, []string{"\n\n"}, []piece{{"", false}, {"", false}}},
		{"unfinished last line", 100, []string{"done\nhalf"}, []piece{{"done", false}, {"half", true}}},
		{"long line cut", 4, []string{"abcdefghij\n"}, []piece{{"abcd", true}, {"efgh", true}, {"ij", false}}},
		{"long line across chunks", 4, []string{"abc", "def", "ghi\n"}, []piece{{"abcd", true}, {"efgh", true}, {"i", false}}},
		{"cut at a rune boundary", 4, []string{"ab€cd\n"}, []piece{{"ab", true}, {"€c", true}, {"d", false}}},
		{"invalid utf-8", 100, []string{"bad \xff\xfe!\n"}, []piece{{"bad \uFFFD!", false}}},
		{"no input", 100, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := split(tt.max, tt.chunks...)
			var pieces []piece
			for _, l := range got {
				if !utf8.ValidString(l.Text) {
					t.Errorf("invalid UTF-8 in %q", l.Text)
				}
				pieces = append(pieces, piece{l.Text, l.Partial})
			}
			if fmt.Sprint(pieces) != fmt.Sprint(tt.want) {
				t.Errorf("got %+v, want %+v", pieces, tt.want)
			}
		})
	}
}

func TestRingBounds(t *testing.T) {
	tests := []struct {
		name              string
		maxLines          int
		maxBytes          int64
		add               int // lines of 10 bytes
		wantLines         int
		wantFirst, wantNx uint64
	}{
		{"under both caps", 100, 1 << 20, 50, 50, 1, 51},
		{"line cap", 10, 1 << 20, 25, 10, 16, 26},
		{"byte cap", 1000, 95, 25, 9, 17, 26},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRing(tt.maxLines, tt.maxBytes)
			for i := range tt.add {
				r.add([]LogLine{{Text: fmt.Sprintf("line %04d", i)[:9] + "x"}})
			}
			n, b := r.stats()
			if n != tt.wantLines || b > tt.maxBytes || n > tt.maxLines {
				t.Errorf("%d lines, %d bytes", n, b)
			}
			lines, next := r.since(0)
			if len(lines) != tt.wantLines || lines[0].Seq != tt.wantFirst || next != tt.wantNx {
				t.Fatalf("since(0): %d lines from %d, next %d", len(lines), lines[0].Seq, next)
			}
			more, next2 := r.since(next)
			if len(more) != 0 || next2 != next {
				t.Errorf("since(next): %d lines, next %d", len(more), next2)
			}
			r.add([]LogLine{{Text: "new"}})
			more, _ = r.since(next)
			if len(more) != 1 || more[0].Text != "new" || more[0].Seq != next {
				t.Errorf("new line: %+v", more)
			}
			if tail := r.tail(3); len(tail) != 3 || tail[2].Text != "new" {
				t.Errorf("tail: %+v", tail)
			}
		})
	}
}

func TestRingMemoryStaysBounded(t *testing.T) {
	r := newRing(1000, 1<<20)
	for i := range 200000 {
		r.add([]LogLine{{Text: "some output line", Seq: uint64(i)}})
	}
	if n, _ := r.stats(); n != 1000 {
		t.Fatalf("%d lines", n)
	}
	if c := cap(r.lines); c > 4000 {
		t.Errorf("backing array grew to %d lines for a cap of 1000", c)
	}
}

func TestLogFileRotates(t *testing.T) {
	dir := t.TempDir()
	lf := openLogFile(dir, "srv", 1000)
	line := []LogLine{{Time: time.Now(), Text: strings.Repeat("y", 90)}}
	for range 50 {
		lf.write(line)
	}
	lf.note(time.Now(), "started pid %d", 42)
	lf.close()
	cur, err := os.Stat(filepath.Join(dir, "srv.log"))
	if err != nil {
		t.Fatal(err)
	}
	old, err := os.Stat(filepath.Join(dir, "srv.log.1"))
	if err != nil {
		t.Fatal(err)
	}
	if cur.Size() > 1000 || old.Size() > 1000 {
		t.Errorf("sizes %d and %d, cap 1000", cur.Size(), old.Size())
	}
	if !filemode.Matches(cur.Mode(), 0o600) {
		t.Errorf("mode %v, want 0600", cur.Mode().Perm())
	}
	b, _ := os.ReadFile(filepath.Join(dir, "srv.log"))
	if !strings.Contains(string(b), "mcptray: started pid 42") {
		t.Errorf("note missing: %q", b)
	}
	// A new logFile on a full file rotates before writing.
	lf = openLogFile(dir, "srv", 1000)
	lf.write([]LogLine{{Time: time.Now(), Text: strings.Repeat("z", 900)}})
	lf.close()
	if st, _ := os.Stat(filepath.Join(dir, "srv.log")); st.Size() > 1000 {
		t.Errorf("size %d after reopen", st.Size())
	}
}

// stats returns the live line count and bytes.
func (r *ring) stats() (int, int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.lines) - r.start, r.bytes
}
