package grpcserver

import (
	"bytes"
	"strings"
	"testing"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/popshim/popshim/codec"
)

// wireRoundTrip fails t unless appendReceiveMessage's bytes for m, after
// a prefix that must stay untouched, decode to ReceiveMessageResponse{m}.
func wireRoundTrip(t testing.TB, m *v2.Message) {
	t.Helper()
	prefix := []byte("prefix")
	b := appendReceiveMessage(append([]byte(nil), prefix...), m)
	if !bytes.HasPrefix(b, prefix) {
		t.Fatal("appendReceiveMessage changed the bytes before it")
	}
	var got v2.ReceiveMessageResponse
	if err := proto.Unmarshal(b[len(prefix):], &got); err != nil {
		t.Fatalf("encoding does not decode: %v", err)
	}
	want := &v2.ReceiveMessageResponse{Content: &v2.ReceiveMessageResponse_Message{Message: m}}
	if !proto.Equal(&got, want) {
		t.Fatalf("encoding decodes to\n %v\nwant\n %v", &got, want)
	}
	if n := proto.Size(want); len(b)-len(prefix) != n {
		t.Fatalf("encoding is %d bytes, protobuf's %d", len(b)-len(prefix), n)
	}
}

// fillAll sets every field of m, recursively, to a value that is not its
// zero value (two elements in lists and maps; negative integers), so that
// a field appendReceiveMessage does not write fails the round trip, also
// one that a newer v5 protocol package adds.
func fillAll(t *testing.T, m protoreflect.Message, seed int) {
	t.Helper()
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		n := seed*100 + i + 1
		switch {
		case fd.IsMap():
			if fd.MapKey().Kind() != protoreflect.StringKind || fd.MapValue().Kind() != protoreflect.StringKind {
				t.Fatalf("%s: only map<string,string> is filled", fd.FullName())
			}
			mp := m.Mutable(fd).Map()
			for _, k := range []string{"k1", "k2"} {
				mp.Set(protoreflect.ValueOfString(k).MapKey(), protoreflect.ValueOfString(k+strings.Repeat("v", n)))
			}
		case fd.IsList():
			l := m.Mutable(fd).List()
			l.Append(scalarOf(t, fd, n))
			l.Append(scalarOf(t, fd, n+1))
		case fd.Message() != nil:
			fillAll(t, m.Mutable(fd).Message(), n)
		default:
			m.Set(fd, scalarOf(t, fd, n))
		}
	}
}

// scalarOf is a value of field fd's kind that is not zero.
func scalarOf(t *testing.T, fd protoreflect.FieldDescriptor, n int) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(string(fd.Name()) + strings.Repeat("é", n%5+1))
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes(bytes.Repeat([]byte{byte(n)}, n%7+1))
	case protoreflect.Int32Kind:
		return protoreflect.ValueOfInt32(int32(-n))
	case protoreflect.Int64Kind:
		return protoreflect.ValueOfInt64(int64(-n) << 33)
	case protoreflect.EnumKind:
		vals := fd.Enum().Values()
		return protoreflect.ValueOfEnum(vals.Get(vals.Len() - 1).Number())
	}
	t.Fatalf("%s: kind %v is not filled; appendReceiveMessage may not write it either", fd.FullName(), fd.Kind())
	return protoreflect.Value{}
}

// Every field of a v5 Message, set, survives the hand-written encoding;
// so does every optional field left unset, and an empty message.
func TestAppendReceiveMessageEveryField(t *testing.T) {
	m := &v2.Message{}
	fillAll(t, m.ProtoReflect(), 0)
	wireRoundTrip(t, m)
	m.SystemProperties = &v2.SystemProperties{}
	m.UserProperties = nil
	wireRoundTrip(t, m)
	wireRoundTrip(t, &v2.Message{})
}

// Lengths of every varint size: the content moves back, stays, or moves
// forward by one to three bytes.
func TestAppendReceiveMessageBodySizes(t *testing.T) {
	for _, n := range []int{0, 1, 60, 127, 128, 16000, 16383, 16384, 1 << 21, 1<<21 + 100} {
		m := &v2.Message{Topic: &v2.Resource{Name: "T"}, Body: bytes.Repeat([]byte{7}, n),
			SystemProperties: &v2.SystemProperties{MessageId: "ID"}}
		wireRoundTrip(t, m)
	}
}

// The codec encodes a delivered message by hand, falls back to protobuf
// for unknown fields, and leaves every other message to protobuf.
func TestWireCodec(t *testing.T) {
	c := newWireCodec()
	if c.Name() != "proto" {
		t.Fatalf("name %q", c.Name())
	}
	rec := codec.MessageExt{Message: codec.Message{Topic: "T", Body: []byte("body"),
		Properties: "POP_CK\x015 1700000000000 60000 1 0 b 0 7\x02color\x01red\x02"}, StoreHost: testStore}
	m, err := MessageOf(&rec, DeliveryOptions{Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	resp := &v2.ReceiveMessageResponse{Content: &v2.ReceiveMessageResponse_Message{Message: m}}
	for _, v := range []proto.Message{resp, &v2.ReceiveMessageResponse{Content: &v2.ReceiveMessageResponse_Status{Status: StatusOK()}},
		&v2.AckMessageResponse{Status: StatusOK()}} {
		data, err := c.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got := v.ProtoReflect().New().Interface()
		if err := c.Unmarshal(data, got); err != nil || !proto.Equal(got, v) {
			t.Fatalf("%T: round trip %v, err %v", v, got, err)
		}
		data.Free()
	}
	m.SystemProperties.ProtoReflect().SetUnknown(protoreflect.RawFields{0x98, 0x06, 0x01}) // field 99 = 1
	data, err := c.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	var got v2.ReceiveMessageResponse
	if err := c.Unmarshal(data, &got); err != nil || !bytes.Equal(got.GetMessage().GetSystemProperties().ProtoReflect().GetUnknown(), []byte{0x98, 0x06, 0x01}) {
		t.Fatalf("unknown fields lost: %v %v", &got, err)
	}
}

// BenchmarkReceiveMessageMarshal: one delivered message, by hand and by
// protobuf.
func BenchmarkReceiveMessageMarshal(b *testing.B) {
	rec := benchRecord()
	m, err := MessageOf(&rec, DeliveryOptions{Now: testNow})
	if err != nil {
		b.Fatal(err)
	}
	resp := &v2.ReceiveMessageResponse{Content: &v2.ReceiveMessageResponse_Message{Message: m}}
	b.Run("wire", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			appendReceiveMessage(make([]byte, 0, wireSizeHint(m)), m)
		}
	})
	b.Run("proto", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := proto.Marshal(resp); err != nil {
				b.Fatal(err)
			}
		}
	})
}
