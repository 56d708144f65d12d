package gateway

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// PeerIsSameUser reports whether the process at the other end of a local
// TCP connection runs as this process's user: the kernel names the owner
// of the peer's socket. It asks for that one socket (sock_diag), and reads
// the whole socket table (/proc/net/tcp) only where sock_diag is not
// there. It is nil where neither can be read.
var PeerIsSameUser = peerIsSameUser

func peerIsSameUser(local, remote net.Addr) (bool, error) {
	l, lok := local.(*net.TCPAddr)
	r, rok := remote.(*net.TCPAddr)
	if !lok || !rok {
		return false, fmt.Errorf("not a TCP connection")
	}
	uid, err := diagOwner(r, l)
	if err == nil {
		return uid == os.Getuid(), nil
	}
	if errors.Is(err, unix.ENOENT) {
		return false, fmt.Errorf("the peer of %s is not a socket of this machine", remote)
	}
	return tableOwner(l, r)
}

// tableOwner finds the peer's owner in the socket table.
func tableOwner(l, r *net.TCPAddr) (bool, error) {
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		uid, found, err := socketOwner(table, r, l)
		if err != nil {
			return false, err
		}
		if found {
			return uid == os.Getuid(), nil
		}
	}
	return false, fmt.Errorf("the peer of %s is not in the socket table", r)
}

// Kernel ABI of sock_diag (linux/inet_diag.h, linux/sock_diag.h).
const (
	sizeofNlMsghdr     = 16
	sizeofInetDiagReq  = 56 // struct inet_diag_req_v2
	sizeofInetDiagMsg  = 72 // struct inet_diag_msg
	inetDiagUIDOffset  = 64 // of idiag_uid in inet_diag_msg
	inetDiagNoCookie   = 0xffffffff
	inetDiagAllStates  = 0xffffffff
	sockDiagByFamily   = unix.SOCK_DIAG_BY_FAMILY
	netlinkMsgError    = unix.NLMSG_ERROR
	netlinkFlagRequest = unix.NLM_F_REQUEST
)

// diagOwner asks the kernel (NETLINK_SOCK_DIAG) for the owner of the TCP
// socket whose own address is from and whose peer is to: one lookup,
// whatever the number of sockets on the machine.
func diagOwner(from, to *net.TCPAddr) (int, error) {
	family, src, dst := uint8(unix.AF_INET), from.IP.To4(), to.IP.To4()
	if src == nil || dst == nil {
		family, src, dst = unix.AF_INET6, from.IP.To16(), to.IP.To16()
	}
	if src == nil || dst == nil {
		return 0, fmt.Errorf("not an IP address: %s, %s", from, to)
	}
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	tv := unix.Timeval{Sec: 2}
	_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)

	req := make([]byte, sizeofNlMsghdr+sizeofInetDiagReq)
	ne := binary.NativeEndian
	ne.PutUint32(req[0:], uint32(len(req)))
	ne.PutUint16(req[4:], sockDiagByFamily)
	ne.PutUint16(req[6:], netlinkFlagRequest)
	ne.PutUint32(req[8:], 1) // seq
	b := req[sizeofNlMsghdr:]
	b[0], b[1] = family, unix.IPPROTO_TCP
	ne.PutUint32(b[4:], inetDiagAllStates)
	id := b[8:] // struct inet_diag_sockid: ports and addresses in network order
	binary.BigEndian.PutUint16(id[0:], uint16(from.Port))
	binary.BigEndian.PutUint16(id[2:], uint16(to.Port))
	copy(id[4:20], src)
	copy(id[20:36], dst)
	ne.PutUint32(id[40:], inetDiagNoCookie)
	ne.PutUint32(id[44:], inetDiagNoCookie)
	if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return 0, err
	}
	buf := make([]byte, 8192)
	n, _, err := unix.Recvfrom(fd, buf, 0)
	if err != nil {
		return 0, err
	}
	buf = buf[:n]
	if len(buf) < sizeofNlMsghdr {
		return 0, fmt.Errorf("sock_diag: a short answer (%d bytes)", len(buf))
	}
	switch ne.Uint16(buf[4:]) {
	case netlinkMsgError:
		if len(buf) < sizeofNlMsghdr+4 {
			return 0, fmt.Errorf("sock_diag: a short error")
		}
		if errno := int32(ne.Uint32(buf[sizeofNlMsghdr:])); errno != 0 {
			return 0, unix.Errno(-errno)
		}
		return 0, unix.ENOENT
	case sockDiagByFamily:
		if len(buf) < sizeofNlMsghdr+sizeofInetDiagMsg {
			return 0, fmt.Errorf("sock_diag: a short answer (%d bytes)", len(buf))
		}
		return int(ne.Uint32(buf[sizeofNlMsghdr+inetDiagUIDOffset:])), nil
	}
	return 0, fmt.Errorf("sock_diag: an answer of type %d", ne.Uint16(buf[4:]))
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
