package codec

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"strings"
	"testing"
)

// popRecordSlow is the general path AppendPopRecord stands in for.
func popRecordSlow(t *testing.T, dst, rec []byte, reconsume int32, ck *ExtraInfo) []byte {
	t.Helper()
	m, _, err := DecodeMessage(rec)
	if err != nil {
		t.Fatal(err)
	}
	if m.Properties, err = SetProperty(m.Properties, PropertyPopCK, ck.String()); err != nil {
		t.Fatal(err)
	}
	m.ReconsumeTimes = reconsume
	out, err := AppendMessage(dst, &m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func samplePopCK() ExtraInfo {
	return ExtraInfo{CkQueueOffset: 40, PopTime: 1700000000000, InvisibleTime: 60000, BrokerName: "broker-a", QueueID: 1, QueueOffset: 42}
}

// TestAppendPopRecordMatchesGeneral checks that the fast path writes the
// bytes of decode, SetProperty and AppendMessage for records of every
// layout, after whatever dst already holds.
func TestAppendPopRecordMatchesGeneral(t *testing.T) {
	cases := map[string]func(*MessageExt){
		"ipv4":            func(*MessageExt) {},
		"no properties":   func(m *MessageExt) { m.Properties = "" },
		"no trailing sep": func(m *MessageExt) { m.Properties = "TAGS\x01a" },
		"empty body":      func(m *MessageExt) { m.Body = nil },
		"v2 long topic":   func(m *MessageExt) { m.Topic = strings.Repeat("t", 300) },
		"v1 topic of 127": func(m *MessageExt) { m.Topic = strings.Repeat("t", 127) },
		"v2 topic of 128": func(m *MessageExt) { m.Topic = strings.Repeat("t", 128) },
		"v2 topic of 255": func(m *MessageExt) { m.Topic = strings.Repeat("t", 255) },
		"v2 topic of 256": func(m *MessageExt) { m.Topic = strings.Repeat("t", 256) },
		"ipv6 both": func(m *MessageExt) {
			m.BornHost, m.StoreHost = netip.MustParseAddrPort("[::1]:1"), netip.MustParseAddrPort("[::]:0")
		},
		"half message":       func(m *MessageExt) { m.SysFlag = SetTransactionType(m.SysFlag, SysFlagTransactionPrepared) },
		"negative reconsume": func(m *MessageExt) { m.ReconsumeTimes = -1 },
		"ipv6 born":          func(m *MessageExt) { m.BornHost = netip.MustParseAddrPort("[2001:db8::1]:7") },
		"ipv6 store":         func(m *MessageExt) { m.StoreHost = netip.MustParseAddrPort("[2001:db8::2]:10911") },
		"invalid hosts":      func(m *MessageExt) { m.BornHost, m.StoreHost = netip.AddrPort{}, netip.AddrPort{} },
		"big reconsume":      func(m *MessageExt) { m.ReconsumeTimes = 1 << 30 },
		"transaction offs":   func(m *MessageExt) { m.PreparedTransactionOffset = 77 },
	}
	for name, edit := range cases {
		t.Run(name, func(t *testing.T) {
			m := sampleMessage()
			edit(&m)
			rec := encodeRecord(nil, m)
			ck := samplePopCK()
			for _, reconsume := range []int32{m.ReconsumeTimes, 5} {
				prefix := []byte("earlier entries")
				want := popRecordSlow(t, bytes.Clone(prefix), rec, reconsume, &ck)
				um, _, err := UnsafeDecodeMessage(rec)
				if err != nil {
					t.Fatal(err)
				}
				got, ok := AppendPopRecord(bytes.Clone(prefix), rec, &um, reconsume, &ck)
				if !ok {
					t.Fatalf("fast path declined a canonical record")
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("fast path differs:\n got %q\nwant %q", got, want)
				}
				if _, err := DecodeMessages(got[len(prefix):]); err != nil {
					t.Fatalf("entry does not decode: %v", err)
				}
			}
		})
	}
}

// TestAppendPopRecordDeclines checks the cases the fast path leaves to the
// general one, with dst unchanged.
func TestAppendPopRecordDeclines(t *testing.T) {
	base := sampleMessage()
	canonical := encodeRecord(nil, base)
	v2m := base
	v2m.Topic = strings.Repeat("t", 200)
	v2Long := encodeRecord(nil, v2m) // decoded with the V1 magic below: not what AppendMessage writes
	cases := map[string]struct {
		rec  []byte
		edit func(m *MessageExt, ck *ExtraInfo)
	}{
		"pop_ck present": {encodeRecord(nil, func() MessageExt {
			m := base
			m.Properties += PropertyPopCK + "\x01old\x02"
			return m
		}()), nil},
		"separator in handle": {canonical, func(_ *MessageExt, ck *ExtraInfo) { ck.BrokerName = "b\x02x" }},
		"m from another record": {canonical, func(m *MessageExt, _ *ExtraInfo) {
			m.Properties = "X\x01y\x02"
			m.StoreSize++
		}},
		"magic does not match topic": {v2Long, func(m *MessageExt, _ *ExtraInfo) { m.MagicCode = MagicCodeV1 }},
		"host flags not canonical":   {canonical, func(m *MessageExt, _ *ExtraInfo) { m.SysFlag |= SysFlagBornHostV6 }},
		"properties too long": {encodeRecord(nil, func() MessageExt {
			m := base
			m.Properties = "K\x01" + strings.Repeat("v", MaxPropertiesLen-10) + "\x02"
			return m
		}()), nil},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			m, _, err := UnsafeDecodeMessage(c.rec)
			if err != nil {
				t.Fatal(err)
			}
			ck := samplePopCK()
			if c.edit != nil {
				c.edit(&m, &ck)
			}
			dst := []byte("kept")
			got, ok := AppendPopRecord(dst, c.rec, &m, 0, &ck)
			if ok || string(got) != "kept" {
				t.Fatalf("ok=%v dst=%q, want declined with dst unchanged", ok, got)
			}
		})
	}
}

// TestAppendPopRecordCopies checks that the entry owns its bytes and that
// the stored record is left as it was.
func TestAppendPopRecordCopies(t *testing.T) {
	rec := encodeRecord(nil, sampleMessage())
	orig := bytes.Clone(rec)
	m, _, _ := UnsafeDecodeMessage(rec)
	ck := samplePopCK()
	out, ok := AppendPopRecord(nil, rec, &m, 9, &ck)
	if !ok {
		t.Fatal("declined")
	}
	if !bytes.Equal(rec, orig) {
		t.Fatal("stored record modified")
	}
	for i := range rec {
		rec[i] = 0
	}
	got, _, err := DecodeMessage(out)
	if err != nil {
		t.Fatal(err)
	}
	if got.ReconsumeTimes != 9 || got.Topic != "TopicA" || int(binary.BigEndian.Uint32(out)) != len(out) {
		t.Fatalf("entry changed with the record: %+v", got)
	}
	if v, _ := got.Property(PropertyPopCK); v != ck.String() {
		t.Fatalf("POP_CK = %q, want %q", v, ck.String())
	}
}

// TestAllocsAppendPopRecord pins the fast path to no allocation when dst
// has room.
func TestAllocsAppendPopRecord(t *testing.T) {
	rec := encodeRecord(nil, sampleMessage())
	m, _, _ := UnsafeDecodeMessage(rec)
	ck := samplePopCK()
	dst := make([]byte, 0, 4096)
	if n := testing.AllocsPerRun(100, func() {
		_, _ = AppendPopRecord(dst[:0], rec, &m, 1, &ck)
	}); n != 0 {
		t.Fatalf("AppendPopRecord: %v allocations, want 0", n)
	}
}

// TestAppendPopRecordPropertiesLimit puts the entry's properties exactly at
// MaxPropertiesLen (taken, the general path's bytes, and Java reads the
// length as a signed short: 32767 is the largest it reads) and one byte
// past it (declined, as AppendMessage refuses it), with and without a
// final separator in the stored properties.
func TestAppendPopRecordPropertiesLimit(t *testing.T) {
	ck := samplePopCK()
	pair := len(PropertyPopCK) + 1 + len(ck.String()) + 1
	for _, terminated := range []bool{true, false} {
		for _, over := range []int{0, 1} {
			m := sampleMessage()
			// The stored properties' length that puts the entry's at the
			// limit (+ over); an unterminated one gets a separator added.
			n := MaxPropertiesLen - pair + over
			if terminated {
				m.Properties = "K\x01" + strings.Repeat("v", n-3) + "\x02"
			} else {
				m.Properties = "K\x01" + strings.Repeat("v", n-3)
			}
			rec := encodeRecord(nil, m)
			um, _, err := UnsafeDecodeMessage(rec)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := AppendPopRecord([]byte("p"), rec, &um, 3, &ck)
			if over == 1 {
				if ok || string(got) != "p" {
					t.Fatalf("terminated=%v: properties of %d bytes taken", terminated, MaxPropertiesLen+1)
				}
				continue
			}
			if !ok {
				t.Fatalf("terminated=%v: properties of exactly %d bytes declined", terminated, MaxPropertiesLen)
			}
			want := popRecordSlow(t, []byte("p"), rec, 3, &ck)
			if !bytes.Equal(got, want) {
				t.Fatalf("terminated=%v: fast path differs at the limit", terminated)
			}
			e, _, err := DecodeMessage(got[1:])
			if err != nil || len(e.Properties) != MaxPropertiesLen {
				t.Fatalf("terminated=%v: entry properties %d bytes, err %v", terminated, len(e.Properties), err)
			}
		}
	}
}
