package cli

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/term"
)

// readHidden prints prompt and reads a line from the terminal f without
// echo. Echo goes off before the prompt shows: what is typed as soon as
// it shows (or typed ahead) is not echoed either, which it would be
// between the prompt and term.ReadPassword turning echo off.
func readHidden(w io.Writer, f *os.File, prompt string) ([]byte, error) {
	fd := int(f.Fd())
	restore, ok := echoOff(fd)
	if !ok {
		fmt.Fprint(w, prompt)
		b, err := term.ReadPassword(fd)
		fmt.Fprintln(w)
		return b, err
	}
	defer restore()
	fmt.Fprint(w, prompt)
	var line []byte
	var buf [1]byte
	for {
		n, err := f.Read(buf[:])
		if n > 0 {
			switch buf[0] {
			case '\n':
				fmt.Fprintln(w)
				return line, nil
			case '\r':
			case '\b', 0x7f:
				if len(line) > 0 {
					line = line[:len(line)-1]
				}
			default:
				line = append(line, buf[0])
			}
		}
		if err != nil {
			fmt.Fprintln(w)
			if err == io.EOF && len(line) > 0 {
				return line, nil
			}
			return line, err
		}
	}
}
