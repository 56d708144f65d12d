package registry

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// A file another program saves in place (truncated, then written, maybe in
// pieces) reads empty or half written for a moment. A reload that applied
// such a read would stop every server the missing part holds and start
// them again at the next read.
const (
	// settleGap is the time between two reads that must agree.
	settleGap = 30 * time.Millisecond
	// settleReads bounds the reads of a file that keeps changing.
	settleReads = 12
)

// ErrUnsettled is a file that changed between every two reads of
// [ReadSettled]: it is being written, and is read again at its next change.
var ErrUnsettled = errors.New("the file kept changing while it was read")

// ReadSettled is [ReadFile] for a file that may be being written: it reads
// until two reads, settleGap apart, agree (the same bytes, size and
// modification time), at most settleReads times, else it returns
// ErrUnsettled.
func ReadSettled(path string) ([]byte, error) {
	if path == os.DevNull {
		return []byte{}, nil
	}
	var prev snapshot
	var prevErr error
	for i := range settleReads {
		if i > 0 {
			time.Sleep(settleGap)
		}
		if hookSettleRead != nil {
			hookSettleRead(i)
		}
		s, err := readOnce(path)
		if i > 0 && sameRead(prev, prevErr, s, err) {
			return s.data, err
		}
		prev, prevErr = s, err
	}
	return nil, fmt.Errorf("%s: %w (%d reads, %v apart)", path, ErrUnsettled, settleReads, settleGap)
}

// hookSettleRead, when a test sets it, runs before each read of
// ReadSettled (i counts them from 0).
var hookSettleRead func(i int)

// readOnce is one read of ReadFile, keeping the file's metadata.
func readOnce(path string) (snapshot, error) {
	target, err := ResolveLinks(path)
	if err != nil {
		return snapshot{}, fmt.Errorf("%s: %w", path, err)
	}
	s, err := readTarget(target)
	var pe *fs.PathError
	switch {
	case errors.As(err, &pe):
		return snapshot{}, err
	case err != nil:
		return snapshot{}, fmt.Errorf("%s: %w", path, err)
	case s.info == nil:
		return snapshot{}, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	}
	return s, nil
}

// sameRead reports whether two reads saw the same file, or failed alike.
func sameRead(a snapshot, aErr error, b snapshot, bErr error) bool {
	if aErr != nil || bErr != nil {
		return aErr != nil && bErr != nil && aErr.Error() == bErr.Error()
	}
	return a.same(b) && a.info.Size() == b.info.Size() && a.info.ModTime().Equal(b.info.ModTime())
}

// LoadSettled is [Load] reading the file with [ReadSettled]: what a reload
// and a file watcher use, so that a save in progress is never applied.
func LoadSettled(path string) (*Config, error) {
	return loadWith(path, ReadSettled)
}
