//go:build !windows

package app

// hostGlob is nil: client paths on this system have no wildcards.
var hostGlob func(string) ([]string, error)
