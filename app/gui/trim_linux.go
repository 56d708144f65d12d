//go:build linux && cgo

package gui

/*
#include <malloc.h>
*/
import "C"

// trimHeap hands the C heap's free pages back to the system. The window's
// OpenGL state (software rendering under Mesa allocates a lot) is freed
// when it closes, but glibc keeps freed memory for reuse unless asked.
func trimHeap() { C.malloc_trim(0) }
