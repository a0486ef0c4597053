package codec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"time"
)

// ErrBadMsgID reports that a message id string cannot be decoded.
var ErrBadMsgID = errors.New("codec: malformed message id")

const upperHex = "0123456789ABCDEF"

func appendUpperHex(dst, b []byte) []byte {
	for _, c := range b {
		dst = append(dst, upperHex[c>>4], upperHex[c&0xF])
	}
	return dst
}

// AppendOffsetMsgID appends the offset message id of a record to dst:
// upper-case hex of the store host address (4 or 16 bytes), its port as
// int32 and physicalOffset as int64 — 32 characters for IPv4, 56 for IPv6
// (MessageDecoder.createMessageId). It does not allocate when dst has room.
func AppendOffsetMsgID(dst []byte, storeHost netip.AddrPort, physicalOffset int64) []byte {
	var buf [28]byte
	raw := appendHost(buf[:0], storeHost)
	raw = binary.BigEndian.AppendUint64(raw, uint64(physicalOffset))
	return appendUpperHex(dst, raw)
}

// OffsetMsgID returns AppendOffsetMsgID as a string (one allocation).
func OffsetMsgID(storeHost netip.AddrPort, physicalOffset int64) string {
	var buf [56]byte
	return string(AppendOffsetMsgID(buf[:0], storeHost, physicalOffset))
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// DecodeOffsetMsgID parses an offset message id back into store host and
// physical offset (MessageDecoder.decodeMessageId): 32 hex characters mean
// IPv4, 56 mean IPv6; either case is accepted. Errors wrap ErrBadMsgID.
func DecodeOffsetMsgID(id string) (netip.AddrPort, int64, error) {
	if len(id) != 32 && len(id) != 56 {
		return netip.AddrPort{}, 0, fmt.Errorf("%w: %q has %d characters, want 32 or 56", ErrBadMsgID, id, len(id))
	}
	var raw [28]byte
	for i := 0; i < len(id)/2; i++ {
		hi, ok1 := unhex(id[2*i])
		lo, ok2 := unhex(id[2*i+1])
		if !ok1 || !ok2 {
			return netip.AddrPort{}, 0, fmt.Errorf("%w: %q: not hex at %d", ErrBadMsgID, id, 2*i)
		}
		raw[i] = hi<<4 | lo
	}
	alen := 4
	var addr netip.Addr
	if len(id) == 56 {
		alen = 16
		addr = netip.AddrFrom16([16]byte(raw[:16]))
	} else {
		addr = netip.AddrFrom4([4]byte(raw[:4]))
	}
	port := binary.BigEndian.Uint32(raw[alen:])
	if port > 0xFFFF {
		return netip.AddrPort{}, 0, fmt.Errorf("%w: %q: port %d", ErrBadMsgID, id, port)
	}
	off := int64(binary.BigEndian.Uint64(raw[alen+4:]))
	return netip.AddrPortFrom(addr, uint16(port)), off, nil
}

// UniqIDGenerator makes client-style unique message ids (the UNIQ_KEY
// property) for messages that arrive without one, laid out like the Java
// client's MessageClientIDSetter.createUniqID: upper-case hex of ip (4 or 16
// bytes), pid (int16), a per-process int32, milliseconds since the start of
// the current month in local time (int32) and a counter (int16) — 32
// characters with an IPv4 address. Safe for concurrent use.
type UniqIDGenerator struct {
	prefix []byte // hex of ip + pid + seed

	mu         sync.Mutex
	monthStart int64 // milliseconds since epoch
	nextMonth  int64
	counter    uint16
}

// NewUniqIDGenerator returns a generator for host ip; pid and seed fill the
// process fields (any values that make ids differ between broker processes
// on one host, e.g. os.Getpid() and a random int32).
func NewUniqIDGenerator(ip netip.Addr, pid int32, seed int32) *UniqIDGenerator {
	var raw [22]byte
	b := raw[:0]
	if a := ip.Unmap(); a.Is4() {
		v := a.As4()
		b = append(b, v[:]...)
	} else if a.Is6() {
		v := a.As16()
		b = append(b, v[:]...)
	} else {
		b = append(b, 127, 0, 0, 1)
	}
	b = binary.BigEndian.AppendUint16(b, uint16(pid))
	b = binary.BigEndian.AppendUint32(b, uint32(seed))
	return &UniqIDGenerator{prefix: appendUpperHex(nil, b)}
}

// Next returns a new id for the given wall-clock time (milliseconds since
// epoch). Ids from one generator differ as long as fewer than 65536 are made
// within one millisecond.
func (g *UniqIDGenerator) Next(nowMillis int64) string {
	g.mu.Lock()
	if nowMillis >= g.nextMonth || nowMillis < g.monthStart {
		t := time.UnixMilli(nowMillis).Local()
		start := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.Local)
		g.monthStart, g.nextMonth = start.UnixMilli(), start.AddDate(0, 1, 0).UnixMilli()
	}
	delta := uint32(nowMillis - g.monthStart)
	g.counter++
	cnt := g.counter
	g.mu.Unlock()
	var buf [56]byte
	out := append(buf[:0], g.prefix...)
	var tail [6]byte
	binary.BigEndian.PutUint32(tail[:], delta)
	binary.BigEndian.PutUint16(tail[4:], cnt)
	return string(appendUpperHex(out, tail[:]))
}
