//go:build !windows

package wine

func running() bool { return false }

func privilegeMissing(error) bool { return false }
