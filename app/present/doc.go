// Package present is the words both front ends show for the engine's state:
// a server's summary and state detail, the one way a duration is written,
// what of a server's text is made visible (control characters escaped),
// which trace frames are the engine's own, and the masks over secrets in
// URLs. It is pure: no I/O, no flag, no Fyne.
package present
