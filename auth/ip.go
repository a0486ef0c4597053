package auth

import (
	"net"
	"net/netip"
	"strings"
)

// validIPOrCIDR reports whether s is one IPv4/IPv6 address or a CIDR
// (IPAddressUtils.isValidIPOrCidr).
func validIPOrCIDR(s string) bool {
	if _, err := netip.ParseAddr(s); err == nil {
		return true
	}
	_, err := netip.ParsePrefix(s)
	return err == nil
}

// ipInRange reports whether ip is rng: an exact string match for a single
// address, containment for a CIDR (IPAddressUtils.isIPInRange). An IPv4
// address seen as IPv4-mapped IPv6 is compared as IPv4.
func ipInRange(ip, rng string) bool {
	if !strings.Contains(rng, "/") {
		return ip == rng
	}
	p, err := netip.ParsePrefix(rng)
	if err != nil {
		return false
	}
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return false
	}
	return p.Masked().Contains(a.Unmap())
}

// sourceIP is the host part of a peer address, as RocketMQ takes it
// (the remote address up to its last colon), without brackets or zone.
func sourceIP(addr net.Addr) string {
	switch a := addr.(type) {
	case *net.TCPAddr:
		if v4 := a.IP.To4(); v4 != nil {
			return v4.String()
		}
		return a.IP.String()
	case nil:
		return ""
	}
	s := addr.String()
	if host, _, err := net.SplitHostPort(s); err == nil {
		return host
	}
	return s
}
