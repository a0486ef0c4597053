package codec

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

func sampleMessage() MessageExt {
	return MessageExt{
		Message:        Message{Topic: "TopicA", Flag: 3, Body: []byte("hello"), Properties: "TAGS\x01TagA\x02KEYS\x01k1 k2\x02UNIQ_KEY\x01ID1\x02"},
		QueueID:        1,
		QueueOffset:    42,
		PhysicalOffset: 1 << 20,
		SysFlag:        SysFlagCompressed | 3<<8,
		BornTimestamp:  1700000000000,
		BornHost:       netip.MustParseAddrPort("192.168.1.5:54321"),
		StoreTimestamp: 1700000000123,
		StoreHost:      netip.MustParseAddrPort("192.168.1.20:10911"),
		ReconsumeTimes: 2,
	}
}

func encodeRecord(dst []byte, m MessageExt) []byte {
	b, err := AppendMessage(dst, &m)
	if err != nil {
		panic(err)
	}
	return b
}

func decodeRecord(b []byte) (MessageExt, error) {
	m, n, err := DecodeMessage(b)
	if err == nil && n != len(b) {
		err = errors.New("size mismatch")
	}
	return m, err
}

func TestMessageRoundTrip(t *testing.T) {
	long := strings.Repeat("t", 200)
	v6 := sampleMessage()
	v6.BornHost = netip.MustParseAddrPort("[2001:db8::1]:1234")
	v6.StoreHost = netip.MustParseAddrPort("[::1]:10911")
	v2 := sampleMessage()
	v2.Topic = PopRetryTopicV2(strings.Repeat("g", 60), long)
	empty := sampleMessage()
	empty.Body, empty.Properties, empty.Topic = nil, "", ""
	mapped := sampleMessage()
	mapped.StoreHost = netip.MustParseAddrPort("[::ffff:10.0.0.1]:80")
	for _, m := range []MessageExt{sampleMessage(), v6, v2, empty, mapped} {
		got := roundTrip(t, m.Topic, m, encodeRecord, decodeRecord)
		if len(encodeRecord(nil, m)) != MessageRecordSize(&m) {
			t.Fatal("MessageRecordSize disagrees with AppendMessage")
		}
		if got.Topic != m.Topic || string(got.Body) != string(m.Body) || got.Properties != m.Properties ||
			got.QueueOffset != m.QueueOffset || got.PhysicalOffset != m.PhysicalOffset || got.ReconsumeTimes != m.ReconsumeTimes ||
			got.BornHost.Port() != m.BornHost.Port() || got.BornHost.Addr() != m.BornHost.Addr().Unmap() ||
			got.StoreHost.Addr() != m.StoreHost.Addr().Unmap() || got.BodyCRC != BodyCRC32(m.Body) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", got, m)
		}
		wantMagic := MagicCodeV1
		if len(m.Topic) > 127 {
			wantMagic = MagicCodeV2
		}
		if got.MagicCode != wantMagic {
			t.Fatalf("magic %#x for topic of %d bytes", got.MagicCode, len(m.Topic))
		}
		v6bits := got.SysFlag & (SysFlagBornHostV6 | SysFlagStoreHostV6)
		want := int32(0)
		if m.BornHost.Addr().Unmap().Is6() {
			want |= SysFlagBornHostV6
		}
		if m.StoreHost.Addr().Unmap().Is6() {
			want |= SysFlagStoreHostV6
		}
		if v6bits != want || got.SysFlag&^(SysFlagBornHostV6|SysFlagStoreHostV6) != m.SysFlag {
			t.Fatalf("sysFlag %#x, want v6 bits %#x", got.SysFlag, want)
		}
	}
}

func TestMessagePatchAndOwnership(t *testing.T) {
	m := sampleMessage()
	m.BornHost = netip.MustParseAddrPort("[2001:db8::1]:1234")
	rec := encodeRecord(nil, m)
	PatchRecordQueueOffset(rec, 7)
	PatchRecordPhysicalOffset(rec, 9)
	PatchRecordStoreTimestamp(rec, 11)
	got, _, err := DecodeMessage(rec)
	if err != nil || got.QueueOffset != 7 || got.PhysicalOffset != 9 || got.StoreTimestamp != 11 {
		t.Fatalf("patched: %+v %v", got, err)
	}
	if RecordStoreTimestampPos(got.SysFlag) != 68 || RecordStoreTimestampPos(0) != 56 {
		t.Fatal("store timestamp position")
	}
	unsafeM, _, _ := UnsafeDecodeMessage(rec)
	for i := range rec {
		rec[i] = 'X'
	}
	if got.Topic != "TopicA" || string(got.Body) != "hello" || !strings.HasPrefix(got.Properties, "TAGS") {
		t.Fatal("DecodeMessage result aliases its input")
	}
	if !strings.HasPrefix(unsafeM.Topic, "XX") {
		t.Fatal("UnsafeDecodeMessage should alias its input")
	}
}

func TestMessageErrors(t *testing.T) {
	good := encodeRecord(nil, sampleMessage())
	mut := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	cases := map[string][]byte{
		"truncated":        good[:len(good)-1],
		"tiny":             good[:7],
		"bad magic":        mut(func(b []byte) []byte { b[4] = 0; return b }),
		"size too small":   mut(func(b []byte) []byte { binary.BigEndian.PutUint32(b, 20); return b }),
		"size too big":     mut(func(b []byte) []byte { binary.BigEndian.PutUint32(b, uint32(len(b)+1)); return b }),
		"body len too big": mut(func(b []byte) []byte { binary.BigEndian.PutUint32(b[84:], 1000); return b }),
		"neg body len":     mut(func(b []byte) []byte { binary.BigEndian.PutUint32(b[84:], 0xFFFFFFFF); return b }),
		"topic len short":  mut(func(b []byte) []byte { b[84+4+5]--; return b }),
		"trailing":         mut(func(b []byte) []byte { binary.BigEndian.PutUint32(b, uint32(len(b)+1)); return append(b, 0) }),
		"signed topic len": mut(func(b []byte) []byte { b[84+4+5] = 0x80; return b }),
	}
	for name, b := range cases {
		if _, _, err := DecodeMessage(b); !errors.Is(err, ErrBadMessage) && !errors.Is(err, ErrShort) {
			t.Errorf("%s: got %v", name, err)
		}
	}
	// DecodeMessages keeps what came before a bad record.
	body := append(append([]byte(nil), good...), good[:50]...)
	ms, err := DecodeMessages(body)
	if len(ms) != 1 || err == nil {
		t.Fatalf("partial body: %d messages, %v", len(ms), err)
	}
	big := sampleMessage()
	big.Properties = strings.Repeat("p", MaxPropertiesLen+1)
	if out, err := AppendMessage([]byte("keep"), &big); !errors.Is(err, ErrBadMessage) || string(out) != "keep" {
		t.Fatalf("oversized properties: %v", err)
	}
}

func TestSysFlagHelpers(t *testing.T) {
	if CompressionType(SysFlagCompressed) != CompressionZLIB || CompressionType(SysFlagCompressed|2<<8) != CompressionZSTD {
		t.Fatal("compression type")
	}
	if TransactionType(SetTransactionType(0x301, SysFlagTransactionCommit)) != SysFlagTransactionCommit ||
		SetTransactionType(0x301, SysFlagTransactionCommit)&^SysFlagTransactionMask != 0x301 {
		t.Fatal("transaction type")
	}
	if !IsCompressed(0x301) || IsCompressed(0x300) {
		t.Fatal("IsCompressed")
	}
}

func TestProperties(t *testing.T) {
	s := "TAGS\x01A\x02bad\x02\x01novalue\x02k\x01\x02KEYS\x01x\x01y\x02TAGS\x01B\x02last\x01v"
	got := DecodeProperties(s)
	want := map[string]string{"TAGS": "B", "KEYS": "x\x01y", "last": "v"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Java parsing rules: got %q", got)
	}
	if v, ok := PropertyValue(s, "TAGS"); !ok || v != "B" {
		t.Fatal("PropertyValue: last pair wins")
	}
	var pairs []string
	for k, v := range Properties(s) {
		pairs = append(pairs, k+"="+v)
	}
	if want := []string{"TAGS=A", "KEYS=x\x01y", "TAGS=B", "last=v"}; !reflect.DeepEqual(pairs, want) {
		t.Fatalf("Properties: every valid pair in order: got %q", pairs)
	}
	for k := range Properties(s) {
		if k != "TAGS" {
			t.Fatalf("Properties: went on after the loop stopped, at %q", k)
		}
		break
	}
	if n := testing.AllocsPerRun(100, func() {
		for k, v := range Properties(s) {
			_, _ = k, v
		}
	}); n != 0 {
		t.Fatalf("Properties allocates %v times", n)
	}
	enc, err := EncodeProperties(map[string]string{"b": "2", "a": "1", "empty": ""})
	if err != nil || enc != "a\x011\x02b\x012\x02" {
		t.Fatalf("deterministic encode: %q %v", enc, err)
	}
	if _, err := EncodeProperties(map[string]string{"a\x02": "1"}); !errors.Is(err, ErrInvalidProperty) {
		t.Fatal("separator in key must fail")
	}
	p := "TAGS\x01A\x02POP_CK\x01x y\x02UNIQ_KEY\x01U\x02"
	if DeleteProperty(p, PropertyPopCK) != "TAGS\x01A\x02UNIQ_KEY\x01U\x02" || DeleteProperty(p, "nope") != p {
		t.Fatal("DeleteProperty")
	}
	p2, err := SetProperty("TAGS\x01A\x02WAIT\x01true", PropertyCluster, "DefaultCluster")
	if err != nil || p2 != "TAGS\x01A\x02WAIT\x01true\x02CLUSTER\x01DefaultCluster\x02" {
		t.Fatalf("SetProperty append: %q %v", p2, err)
	}
	p3, _ := SetProperty(p2, "TAGS", "B")
	if v, _ := PropertyValue(p3, "TAGS"); v != "B" || strings.Count(p3, "TAGS") != 1 {
		t.Fatalf("SetProperty replace: %q", p3)
	}
	if _, err := SetProperty("", "k", ""); !errors.Is(err, ErrInvalidProperty) {
		t.Fatal("empty value must fail")
	}
}

func TestMsgIDs(t *testing.T) {
	host := netip.MustParseAddrPort("192.168.1.20:10911")
	id := OffsetMsgID(host, 1<<20)
	if id != "C0A8011400002A9F0000000000100000" {
		t.Fatalf("offsetMsgId %s", id)
	}
	h, off, err := DecodeOffsetMsgID(strings.ToLower(id))
	if err != nil || h != host || off != 1<<20 {
		t.Fatalf("decode: %v %d %v", h, off, err)
	}
	h6 := netip.MustParseAddrPort("[2001:db8::7]:10911")
	id6 := OffsetMsgID(h6, 5)
	if len(id6) != 56 {
		t.Fatalf("IPv6 id %s", id6)
	}
	if h, off, err := DecodeOffsetMsgID(id6); err != nil || h != h6 || off != 5 {
		t.Fatalf("IPv6 decode %v %d %v", h, off, err)
	}
	for _, bad := range []string{"", "XYZ", strings.Repeat("G", 32), "C0A80114FFFFFFFF0000000000100000"} {
		if _, _, err := DecodeOffsetMsgID(bad); !errors.Is(err, ErrBadMsgID) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	g := NewUniqIDGenerator(netip.MustParseAddr("192.168.1.5"), 12345, 7)
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		u := g.Next(1700000000000 + int64(i/10))
		if len(u) != 32 || !strings.HasPrefix(u, "C0A80105303900000007") || seen[u] {
			t.Fatalf("uniq id %q (dup=%v)", u, seen[u])
		}
		seen[u] = true
	}
}

func netipUnmap(h netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(h.Addr().Unmap(), h.Port())
}
