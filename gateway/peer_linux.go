package gateway

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

// PeerIsSameUser reports whether the process at the other end of a local
// TCP connection runs as this process's user: the kernel's socket table
// (/proc/net/tcp) names the owner of the peer's socket. It is nil where
// that cannot be read.
var PeerIsSameUser = peerIsSameUser

func peerIsSameUser(local, remote net.Addr) (bool, error) {
	l, lok := local.(*net.TCPAddr)
	r, rok := remote.(*net.TCPAddr)
	if !lok || !rok {
		return false, fmt.Errorf("not a TCP connection")
	}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		uid, found, err := socketOwner(table, r, l)
		if err != nil {
			return false, err
		}
		if found {
			return uid == os.Getuid(), nil
		}
	}
	return false, fmt.Errorf("the peer of %s is not in the socket table", remote)
}

// socketOwner finds the socket whose local address is from and remote
// address is to, and returns its owner's uid.
func socketOwner(table string, from, to *net.TCPAddr) (uid int, found bool, err error) {
	f, err := os.Open(table)
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 8 {
			continue
		}
		if !sameAddr(fields[1], from) || !sameAddr(fields[2], to) {
			continue
		}
		uid, err := strconv.Atoi(fields[7])
		return uid, err == nil, err
	}
	return 0, false, sc.Err()
}

// sameAddr compares a socket table address (hex, in the kernel's byte
// order per 32-bit word, then ":" and the hex port) with a.
func sameAddr(field string, a *net.TCPAddr) bool {
	hexIP, hexPort, ok := strings.Cut(field, ":")
	if !ok {
		return false
	}
	port, err := strconv.ParseUint(hexPort, 16, 16)
	if err != nil || int(port) != a.Port {
		return false
	}
	raw, err := hex.DecodeString(hexIP)
	if err != nil || len(raw)%4 != 0 {
		return false
	}
	ip := make(net.IP, len(raw))
	for i := 0; i < len(raw); i += 4 {
		binary.BigEndian.PutUint32(ip[i:], binary.LittleEndian.Uint32(raw[i:]))
	}
	var want net.IP
	if len(ip) == net.IPv4len {
		want = a.IP.To4()
	} else {
		want = a.IP.To16()
	}
	return want != nil && ip.Equal(want)
}
