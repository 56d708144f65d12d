//go:build !windows

package wine

func running() bool { return false }
