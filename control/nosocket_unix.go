//go:build unix

package control

func isNoSocket(error) bool { return false }
