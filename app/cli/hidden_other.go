//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly

package cli

// echoOff is not done here: term.ReadPassword turns echo off itself.
func echoOff(int) (func(), bool) { return nil, false }
