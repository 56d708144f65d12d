//go:build !linux

package main

import "fmt"

// gatewayBench reads /proc; elsewhere it is skipped.
func gatewayBench(bin, everything, dir string, env []string, calls int) bool {
	fmt.Println("| gateway | – | – | – | skipped: Linux only (reads /proc) |")
	return false
}

// aggregateBench shares gatewayBench's helpers; elsewhere it is skipped.
func aggregateBench(bin, dir string, env []string, calls int) bool {
	fmt.Println("| aggregate | – | – | – | skipped: Linux only |")
	return false
}

// exposureBench shares gatewayBench's helpers; elsewhere it is skipped.
func exposureBench(bin, servers, dir string, env []string) {
	fmt.Println("| exposure | – | – | – | skipped: Linux only |")
}
