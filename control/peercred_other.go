//go:build unix && !linux && !darwin

package control

import "net"

// peerUID cannot tell the peer here; the socket folder's 0700 mode guards.
func peerUID(*net.UnixConn) (int, error) { return -1, errNoPeerCred }
