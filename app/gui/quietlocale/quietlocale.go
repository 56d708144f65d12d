// Package quietlocale keeps Fyne from logging "Fyne error: Error parsing
// user locale C" to stderr at start-up when the locale is a language-less
// one such as C.UTF-8 (the default of containers and minimal systems).
//
// Fyne's lang package reads the locale in its init function, so every
// command of the desktop build (the daemon, the demo server a first-run
// config runs, `mcptray status`) would print it, and a server's stderr shown
// in the app would start with it. This package has to act before that init:
// Go initialises packages in import-path order among those whose imports are
// ready, and this one imports only os and strings, which are ready long
// before fyne.io/fyne/v2/lang (it imports text/template, which sorts after
// mcptray/...). It sets the variable the locale comes from to plain "C",
// which Fyne reads as "no locale" without complaint; app/gui's init, which
// runs after Fyne's, calls Restore, so servers and commands see the user's
// environment unchanged.
package quietlocale

import (
	"os"
	"strings"
)

// saved is the variable changed by init and its value; set only by init,
// read by Restore (both before main, on one goroutine).
var saved struct {
	name, value string
	changed     bool
}

func init() {
	// The variables Fyne's locale library reads, in its order: the first
	// one set decides.
	for _, name := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		v := os.Getenv(name)
		if v == "" {
			continue
		}
		if languageless(v) {
			saved.name, saved.value, saved.changed = name, v, true
			os.Setenv(name, "C")
		}
		return
	}
}

// languageless says whether v is C or POSIX with a codeset or modifier
// (C.UTF-8, POSIX.UTF-8, C@euro): a locale with no language, which Fyne
// cannot parse. Plain C and POSIX it handles.
func languageless(v string) bool {
	base, _, _ := strings.Cut(v, ".")
	base, _, _ = strings.Cut(base, "@")
	return base != v && (base == "C" || base == "POSIX")
}

// Restore puts back the variable init changed.
func Restore() {
	if saved.changed {
		os.Setenv(saved.name, saved.value)
		saved.changed = false
	}
}
