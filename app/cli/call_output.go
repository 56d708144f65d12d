package cli

import (
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/term"

	"mcptray/app/present"
)

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
	text := present.ProgressText(n)
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.tty {
		fmt.Fprintf(p.w, "progress: %s\n", text)
		return
	}
	fmt.Fprintf(p.w, "\r\x1b[K%s", text)
	p.shown = true
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
