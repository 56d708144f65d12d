//go:build windows && !nogui

package main

import (
	"os"

	"golang.org/x/sys/windows"
)

// The packaged desktop app is a GUI program (fyne package links it with
// -H windowsgui), and Windows gives a GUI program no console: a command run
// from a terminal (`mcptray status`) would print nothing. With a command,
// attach to the console of the terminal that started it, if any, for the
// streams that lead nowhere (a redirected stream is kept). The terminal does
// not wait for a GUI program, so scripts use the headless build, a console
// program.
func init() {
	if len(os.Args) < 2 {
		return
	}
	out, errs, in := noStream(os.Stdout), noStream(os.Stderr), noStream(os.Stdin)
	if !out && !errs && !in {
		return
	}
	const attachParentProcess = ^uint32(0) // ATTACH_PARENT_PROCESS
	if r, _, _ := windows.NewLazySystemDLL("kernel32.dll").NewProc("AttachConsole").Call(uintptr(attachParentProcess)); r == 0 {
		return // started from Explorer, or the terminal has no console
	}
	if out || errs {
		if f, err := os.OpenFile("CONOUT$", os.O_WRONLY, 0); err == nil {
			if out {
				os.Stdout = f
			}
			if errs {
				os.Stderr = f
			}
		}
	}
	if in {
		if f, err := os.OpenFile("CONIN$", os.O_RDONLY, 0); err == nil {
			os.Stdin = f
		}
	}
}

// noStream says whether f is no usable handle (what a GUI program gets).
func noStream(f *os.File) bool {
	_, err := windows.GetFileType(windows.Handle(f.Fd()))
	return err != nil
}
