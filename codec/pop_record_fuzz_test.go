package codec

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"strings"
	"testing"
)

// FuzzAppendPopRecord feeds arbitrary bytes as a stored record: whenever
// they decode and the fast path accepts them, its entry must be the
// general path's byte for byte (but for a stored bodyCRC that is not the
// body's, which the fast path keeps), decode back with POP_CK and the patched
// reconsumeTimes, and leave the record untouched; when it declines, dst
// must be unchanged.
func FuzzAppendPopRecord(f *testing.F) {
	seed := func(edit func(*MessageExt)) {
		m := sampleMessage()
		edit(&m)
		f.Add(encodeRecord(nil, m), int32(7), "broker-a")
	}
	seed(func(*MessageExt) {})
	seed(func(m *MessageExt) { m.Properties = "" })
	seed(func(m *MessageExt) { m.Properties = "TAGS\x01a" })
	seed(func(m *MessageExt) { m.Properties = "\x02\x02\x01" })
	seed(func(m *MessageExt) { m.Properties = PropertyPopCK + "\x01\x02" })
	seed(func(m *MessageExt) { m.Topic = strings.Repeat("t", 128) })
	seed(func(m *MessageExt) { m.Topic = strings.Repeat("t", 127) })
	seed(func(m *MessageExt) { m.BornHost = netip.MustParseAddrPort("[2001:db8::1]:7") })
	seed(func(m *MessageExt) { m.StoreHost = netip.MustParseAddrPort("[::]:0") })
	seed(func(m *MessageExt) { m.Body = nil })
	f.Fuzz(func(t *testing.T, rec []byte, reconsume int32, broker string) {
		m, n, err := UnsafeDecodeMessage(rec)
		if err != nil || n != len(rec) {
			return
		}
		orig := bytes.Clone(rec)
		ck := samplePopCK()
		ck.BrokerName = broker
		got, ok := AppendPopRecord([]byte("p"), rec, &m, reconsume, &ck)
		if !bytes.Equal(rec, orig) {
			t.Fatal("record modified")
		}
		if !ok {
			if string(got) != "p" {
				t.Fatalf("declined with dst changed: %q", got)
			}
			return
		}
		slow, _, err := DecodeMessage(rec)
		if err != nil {
			t.Fatal(err)
		}
		if slow.Properties, err = SetProperty(slow.Properties, PropertyPopCK, ck.String()); err != nil {
			t.Fatalf("fast path accepted what SetProperty refuses: %v", err)
		}
		slow.ReconsumeTimes = reconsume
		want, err := AppendMessage([]byte("p"), &slow)
		if err != nil {
			t.Fatalf("fast path accepted what AppendMessage refuses: %v", err)
		}
		// The fast path keeps the stored bodyCRC, the general one computes
		// it: records popshim stores always carry the body's (AppendMessage),
		// arbitrary bytes need not.
		binary.BigEndian.PutUint32(want[1+RecordBodyCRCPos:], uint32(slow.BodyCRC))
		if !bytes.Equal(got, want) {
			t.Fatalf("fast path differs:\n got %q\nwant %q", got, want)
		}
		back, k, err := DecodeMessage(got[1:])
		if err != nil || k != len(got)-1 {
			t.Fatalf("entry does not decode: %v (%d of %d bytes)", err, k, len(got)-1)
		}
		if v, _ := back.Property(PropertyPopCK); v != ck.String() || back.ReconsumeTimes != reconsume {
			t.Fatalf("POP_CK %q reconsumeTimes %d, want %q %d", v, back.ReconsumeTimes, ck.String(), reconsume)
		}
	})
}
