// Package lazyre holds regular expressions that are compiled at first
// use, not as the program starts: every command would otherwise pay for
// the patterns of every other one (a counted repetition alone can take a
// fifth of a millisecond to compile).
package lazyre

import (
	"regexp"
	"sync"
)

// New returns expr, compiled the first time it is asked for (and panicking
// then, as regexp.MustCompile does, when expr does not compile).
func New(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
