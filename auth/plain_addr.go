package auth

import (
	"fmt"
	"strconv"
	"strings"
)

// addrMatcher is an ACL 1.0 remote-address rule
// (acl/.../plain/RemoteAddressStrategyFactory.java): blank matches
// nothing; "*" (or "*.*.*.*") everything; "a,b,c" any of several
// addresses; "10.1.1.{1,2}" the listed last parts; "10.1.*.*" or
// "10.1.1.1-100" IPv4 segment wildcards and ranges; otherwise one address.
type addrMatcher struct {
	kind byte // 0 blank, 1 any, 2 list, 3 ranges
	list []string
	lo   [4]int
	hi   [4]int
}

func parseAddrMatcher(s string) (addrMatcher, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return addrMatcher{}, nil
	case s == "*" || s == "*.*.*.*" || s == "*:*:*:*:*:*:*:*":
		return addrMatcher{kind: 1}, nil
	case strings.HasSuffix(s, "}"):
		i := strings.LastIndexByte(s, '{')
		if i < 0 || !strings.HasSuffix(s[:i], ".") {
			return addrMatcher{}, fmt.Errorf("MultipleRemoteAddressStrategy netAddress examine scope Exception netAddress: %s", s)
		}
		var list []string
		for _, p := range strings.Split(s[i+1:len(s)-1], ",") {
			list = append(list, s[:i]+strings.TrimSpace(p))
		}
		return addrMatcher{kind: 2, list: list}, nil
	case strings.Contains(s, ","):
		var list []string
		for _, p := range strings.Split(s, ",") {
			list = append(list, strings.TrimSpace(p))
		}
		return addrMatcher{kind: 2, list: list}, nil
	case strings.Contains(s, "*") || strings.Contains(s, "-"):
		parts := strings.Split(s, ".")
		if len(parts) != 4 {
			return addrMatcher{}, fmt.Errorf("RangeRemoteAddressStrategy netAddress examine scope Exception netAddress: %s", s)
		}
		m := addrMatcher{kind: 3}
		for i, p := range parts {
			lo, hi := 0, 255
			if p != "*" {
				a, b, isRange := strings.Cut(p, "-")
				var err1, err2 error
				lo, err1 = strconv.Atoi(a)
				hi = lo
				if isRange {
					hi, err2 = strconv.Atoi(b)
				}
				if err1 != nil || err2 != nil || lo < 0 || hi > 255 || lo > hi {
					return addrMatcher{}, fmt.Errorf("RangeRemoteAddressStrategy netAddress examine scope Exception netAddress: %s", s)
				}
			}
			m.lo[i], m.hi[i] = lo, hi
		}
		return m, nil
	}
	return addrMatcher{kind: 2, list: []string{s}}, nil
}

// match reports whether the peer IP ip satisfies the rule.
func (m addrMatcher) match(ip string) bool {
	switch m.kind {
	case 1:
		return true
	case 2:
		for _, a := range m.list {
			if a == ip {
				return true
			}
		}
		return false
	case 3:
		parts := strings.Split(ip, ".")
		if len(parts) != 4 {
			return false
		}
		for i, p := range parts {
			n, err := strconv.Atoi(p)
			if err != nil || n < m.lo[i] || n > m.hi[i] {
				return false
			}
		}
		return true
	}
	return false
}
