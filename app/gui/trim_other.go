//go:build !linux || !cgo

package gui

// trimHeap: the C heap returns memory on its own here.
func trimHeap() {}
