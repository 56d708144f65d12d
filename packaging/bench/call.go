//go:build unix

package main

import (
	"time"
)

// callBench times `cli call` of the demo server's add tool (server serves
// it) against a bare go-sdk client that starts the same server and makes
// the same call ({"a":2,"b":3}, as bareclient makes it).
func callBench(bareBin, cli, server string, env []string, runs int) (mcptray, bare time.Duration) {
	return pair(runs, env, callArgv(cli, server), []string{bareBin, "call", server, "serve-demo"})
}

// callArgv is cli's `call` of the add tool of server's demo server.
func callArgv(cli, server string) []string {
	return []string{cli, "call", "add", `{"a":2,"b":3}`, "--", server, "serve-demo"}
}
