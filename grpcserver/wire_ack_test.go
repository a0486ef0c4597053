package grpcserver

import (
	"testing"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// ackRequestOfN is an AckMessageRequest of n entries as the v5 clients
// send it.
func ackRequestOfN(n int) *v2.AckMessageRequest {
	r := &v2.AckMessageRequest{Group: &v2.Resource{Name: "cg"}, Topic: &v2.Resource{ResourceNamespace: "ns", Name: "T"}}
	for i := range n {
		r.Entries = append(r.Entries, &v2.AckMessageEntry{MessageId: "01A1B2C3D4E5F6071829" + string(rune('A'+i%26)),
			ReceiptHandle: "41 1700000000000 20000 3 0 popshim-a 2 41 123456789"})
	}
	return r
}

// sameAsProtobuf fails t when decodeAckRequest takes b and protobuf does
// not, or decodes it otherwise; it reports whether decodeAckRequest took b.
func sameAsProtobuf(t testing.TB, b []byte) bool {
	t.Helper()
	var got v2.AckMessageRequest
	got.Entries = []*v2.AckMessageEntry{{MessageId: "left over"}} // reset first
	if !decodeAckRequest(b, &got) {
		return false
	}
	var want v2.AckMessageRequest
	if err := proto.Unmarshal(b, &want); err != nil {
		t.Fatalf("decoded % x, which protobuf refuses: %v", b, err)
	}
	if !proto.Equal(&got, &want) {
		t.Fatalf("% x decodes to\n %v\nprotobuf:\n %v", b, &got, &want)
	}
	return true
}

// Requests of the clients' shape are decoded by hand, exactly as protobuf
// does; unknown fields, repeated singular fields, a wrong wire type,
// invalid UTF-8 and truncation are declined.
func TestDecodeAckRequest(t *testing.T) {
	lite := "lt"
	for _, r := range []*v2.AckMessageRequest{ackRequestOfN(0), ackRequestOfN(1), ackRequestOfN(32), {},
		{Group: &v2.Resource{}, Entries: []*v2.AckMessageEntry{{}, {LiteTopic: &lite}, {LiteTopic: new(string)}}}} {
		b, err := proto.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if !sameAsProtobuf(t, b) {
			t.Errorf("declined %v", r)
		}
	}
	b, _ := proto.Marshal(ackRequestOfN(2))
	group, _ := proto.Marshal(&v2.Resource{Name: "g2"})
	for name, bad := range map[string][]byte{
		"unknown field":       protowire.AppendString(protowire.AppendTag(append([]byte(nil), b...), 9, protowire.BytesType), "x"),
		"field 0":             protowire.AppendString(protowire.AppendTag(append([]byte(nil), b...), 0, protowire.BytesType), "x"),
		"group twice":         protowire.AppendBytes(protowire.AppendTag(append([]byte(nil), b...), fieldAckGroup, protowire.BytesType), group),
		"varint field":        protowire.AppendVarint(protowire.AppendTag(append([]byte(nil), b...), 4, protowire.VarintType), 1),
		"invalid UTF-8":       protowire.AppendString(protowire.AppendTag(nil, fieldAckGroup, protowire.BytesType), "\x12\x02\xff\xfe"),
		"truncated":           b[:len(b)-3],
		"unknown entry field": protowire.AppendString(protowire.AppendTag(nil, fieldAckEntries, protowire.BytesType), "\x22\x01x"),
		"entry handle twice":  protowire.AppendString(protowire.AppendTag(nil, fieldAckEntries, protowire.BytesType), "\x12\x01a\x12\x01b"),
	} {
		var m v2.AckMessageRequest
		if decodeAckRequest(bad, &m) {
			t.Errorf("%s: taken: %v", name, &m)
		}
	}
}

// FuzzDecodeAckRequest: whatever decodeAckRequest takes, protobuf decodes
// to the same message.
func FuzzDecodeAckRequest(f *testing.F) {
	for _, n := range []int{0, 1, 3} {
		b, _ := proto.Marshal(ackRequestOfN(n))
		f.Add(b)
	}
	f.Add([]byte("\x1a\x00\x1a\x02\x1a\x00\x0a\x00"))
	f.Fuzz(func(t *testing.T, b []byte) { sameAsProtobuf(t, b) })
}

// The codec decodes an AckMessageRequest by hand and still decodes one
// with unknown fields through protobuf, keeping them.
func TestWireCodecAckRequest(t *testing.T) {
	c := newWireCodec()
	want := ackRequestOfN(3)
	b, _ := proto.Marshal(want)
	var got v2.AckMessageRequest
	if err := c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, &got); err != nil || !proto.Equal(&got, want) {
		t.Fatalf("%v %v", &got, err)
	}
	withUnknown := protowire.AppendVarint(protowire.AppendTag(append([]byte(nil), b...), 9, protowire.VarintType), 7)
	if err := c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(withUnknown)}, &got); err != nil || len(got.ProtoReflect().GetUnknown()) == 0 {
		t.Fatalf("unknown field: %v %v", &got, err)
	}
}

// BenchmarkDecodeAckRequest: an AckMessageRequest of 32 entries, by hand
// and by protobuf.
func BenchmarkDecodeAckRequest(b *testing.B) {
	data, _ := proto.Marshal(ackRequestOfN(32))
	b.Run("wire", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var m v2.AckMessageRequest
			if !decodeAckRequest(data, &m) {
				b.Fatal("declined")
			}
		}
	})
	b.Run("proto", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var m v2.AckMessageRequest
			if err := proto.Unmarshal(data, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
