package gateway

import (
	"net"
	"os"
	"testing"
)

// sock_diag names the owner of a connection's peer socket, as the socket
// table does, without reading the table.
func TestDiagOwner(t *testing.T) {
	for _, network := range []string{"tcp4", "tcp6"} {
		addr := "127.0.0.1:0"
		if network == "tcp6" {
			addr = "[::1]:0"
		}
		ln, err := net.Listen(network, addr)
		if err != nil {
			t.Logf("%s: %v", network, err)
			continue
		}
		defer ln.Close()
		c, err := net.Dial(network, ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		s, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		l, r := s.LocalAddr().(*net.TCPAddr), s.RemoteAddr().(*net.TCPAddr)
		uid, err := diagOwner(r, l)
		if err != nil || uid != os.Getuid() {
			t.Fatalf("%s: the peer's owner = %d, %v; want %d", network, uid, err, os.Getuid())
		}
		same, err := tableOwner(l, r)
		if err != nil || !same {
			t.Fatalf("%s: the socket table says %v, %v", network, same, err)
		}
		// A peer that is not there is not found.
		gone := *r
		gone.Port = 1
		if _, err := diagOwner(&gone, l); err == nil {
			t.Fatalf("%s: a socket that does not exist has an owner", network)
		}
	}
}
