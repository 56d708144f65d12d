//go:build !linux

package gateway

import "net"

// PeerIsSameUser is nil where the owner of a TCP peer cannot be read: the
// key alone keeps other users out there.
var PeerIsSameUser func(local, remote net.Addr) (bool, error)
