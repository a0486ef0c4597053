package grpcserver

import (
	"encoding/binary"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// wireCodec is the server's gRPC codec: grpc-go's protobuf codec, except
// that an AckMessageRequest is decoded by decodeAckRequest (wire_ack.go)
// and a ReceiveMessageResponse carrying a Message (one per delivered
// message, the bulk of a receive stream) is encoded by appendReceiveMessage
// rather than by protobuf's generic marshaller, which walks each message's
// reflection tables and sizes every nested message before writing it
// (about a tenth of the server's CPU on the receive path). The bytes decode
// to the same message; only field order within maps may differ, as it does
// between two protobuf marshals. Installed with grpc.ForceServerCodecV2, so
// it serves every call whatever its content-subtype; the v5 clients all
// send protobuf, and a subtype without a codec got protobuf before too.
type wireCodec struct{ proto encoding.CodecV2 }

func newWireCodec() wireCodec { return wireCodec{proto: encoding.GetCodecV2(proto.Name)} }

// Marshal implements encoding.CodecV2.
func (c wireCodec) Marshal(v any) (mem.BufferSlice, error) {
	if r, ok := v.(*v2.ReceiveMessageResponse); ok {
		if m := r.GetMessage(); m != nil && plainMessage(r, m) {
			return mem.BufferSlice{encodeReceiveMessage(m)}, nil
		}
	}
	return c.proto.Marshal(v)
}

// Unmarshal implements encoding.CodecV2: an AckMessageRequest by
// decodeAckRequest when it takes it, everything else by protobuf.
func (c wireCodec) Unmarshal(data mem.BufferSlice, v any) error {
	if r, ok := v.(*v2.AckMessageRequest); ok {
		buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
		done := decodeAckRequest(buf.ReadOnlyData(), r)
		buf.Free()
		if done {
			return nil
		}
	}
	return c.proto.Unmarshal(data, v)
}

// Name implements encoding.CodecV2: "proto".
func (c wireCodec) Name() string { return c.proto.Name() }

// plainMessage reports whether appendReceiveMessage can encode r: no
// unknown fields, which it does not write, in r, m or m's system
// properties (popshim never sets any; this keeps the encoder exact).
func plainMessage(r *v2.ReceiveMessageResponse, m *v2.Message) bool {
	return len(r.ProtoReflect().GetUnknown()) == 0 && len(m.ProtoReflect().GetUnknown()) == 0 &&
		(m.SystemProperties == nil || len(m.SystemProperties.ProtoReflect().GetUnknown()) == 0)
}

// encodeReceiveMessage is the wire form of a ReceiveMessageResponse
// carrying m, in a buffer of grpc's pool when it is large.
func encodeReceiveMessage(m *v2.Message) mem.Buffer {
	n := wireSizeHint(m)
	if mem.IsBelowBufferPoolingThreshold(n) {
		return mem.SliceBuffer(appendReceiveMessage(make([]byte, 0, n), m))
	}
	pool := mem.DefaultBufferPool()
	buf := pool.Get(n)
	*buf = appendReceiveMessage((*buf)[:0], m)
	return mem.NewBuffer(buf, pool)
}

// wireSizeHint is a capacity that usually holds m's encoding: its
// variable-length parts plus room for the fixed ones.
func wireSizeHint(m *v2.Message) int {
	n := 256 + len(m.Body) + len(m.GetTopic().GetName())
	for k, v := range m.UserProperties {
		n += len(k) + len(v) + 8
	}
	sp := m.SystemProperties
	for _, k := range sp.GetKeys() {
		n += len(k) + 2
	}
	return n + len(sp.GetMessageId()) + len(sp.GetBornHost()) + len(sp.GetReceiptHandle()) +
		len(sp.GetTag()) + len(sp.GetMessageGroup()) + len(sp.GetTraceContext())
}

// Field numbers of apache.rocketmq.v2 (definition.proto, service.proto)
// and google.protobuf's Timestamp and Duration.
const (
	fieldResponseMessage = 2 // ReceiveMessageResponse.message

	fieldMessageTopic      = 1
	fieldMessageUserProps  = 2
	fieldMessageSystemProp = 3
	fieldMessageBody       = 4
)

// appendReceiveMessage appends the protobuf encoding of
// ReceiveMessageResponse{message: m}: every field of m, its system
// properties and their nested messages, set fields only, as protobuf's
// marshaller writes them (proto3: a scalar or string at its zero value is
// left out unless it is an optional field that is set).
func appendReceiveMessage(b []byte, m *v2.Message) []byte {
	b, outer := openLen(b, fieldResponseMessage)
	if t := m.Topic; t != nil {
		var at int
		b, at = openLen(b, fieldMessageTopic)
		b = appendString(b, 1, t.ResourceNamespace)
		b = appendString(b, 2, t.Name)
		b = closeLen(b, at)
	}
	for k, v := range m.UserProperties {
		var at int
		b, at = openLen(b, fieldMessageUserProps)
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendString(b, k)
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		b = protowire.AppendString(b, v)
		b = closeLen(b, at)
	}
	if sp := m.SystemProperties; sp != nil {
		var at int
		b, at = openLen(b, fieldMessageSystemProp)
		b = appendSystemProperties(b, sp)
		b = closeLen(b, at)
	}
	if len(m.Body) > 0 {
		b = protowire.AppendTag(b, fieldMessageBody, protowire.BytesType)
		b = protowire.AppendBytes(b, m.Body)
	}
	return closeLen(b, outer)
}

// appendSystemProperties appends the fields of sp, in field order.
func appendSystemProperties(b []byte, sp *v2.SystemProperties) []byte {
	b = appendOptString(b, 1, sp.Tag)
	for _, k := range sp.Keys {
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		b = protowire.AppendString(b, k)
	}
	b = appendString(b, 3, sp.MessageId)
	if d := sp.BodyDigest; d != nil {
		var at int
		b, at = openLen(b, 4)
		b = appendVarint(b, 1, uint64(d.Type))
		b = appendString(b, 2, d.Checksum)
		b = closeLen(b, at)
	}
	b = appendVarint(b, 5, uint64(sp.BodyEncoding))
	b = appendVarint(b, 6, uint64(sp.MessageType))
	b = appendTimestamp(b, 7, sp.BornTimestamp)
	b = appendString(b, 8, sp.BornHost)
	b = appendTimestamp(b, 9, sp.StoreTimestamp)
	b = appendString(b, 10, sp.StoreHost)
	b = appendTimestamp(b, 11, sp.DeliveryTimestamp)
	b = appendOptString(b, 12, sp.ReceiptHandle)
	b = appendVarint(b, 13, uint64(int64(sp.QueueId)))
	if sp.QueueOffset != nil {
		b = protowire.AppendTag(b, 14, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(*sp.QueueOffset))
	}
	b = appendDuration(b, 15, sp.InvisibleDuration)
	b = appendOptInt32(b, 16, sp.DeliveryAttempt)
	b = appendOptString(b, 17, sp.MessageGroup)
	b = appendOptString(b, 18, sp.TraceContext)
	b = appendDuration(b, 19, sp.OrphanedTransactionRecoveryDuration)
	if q := sp.DeadLetterQueue; q != nil {
		var at int
		b, at = openLen(b, 20)
		b = appendString(b, 1, q.Topic)
		b = appendString(b, 2, q.MessageId)
		b = closeLen(b, at)
	}
	b = appendOptString(b, 21, sp.LiteTopic)
	return appendOptInt32(b, 22, sp.Priority)
}

// appendString appends a proto3 string field; "" is left out.
func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

// appendOptString appends an optional string field when it is set.
func appendOptString(b []byte, num protowire.Number, s *string) []byte {
	if s == nil {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, *s)
}

// appendVarint appends a proto3 varint field (an enum, or an int32 or
// int64 as uint64(int64(v))); 0 is left out.
func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// appendOptInt32 appends an optional int32 field when it is set.
func appendOptInt32(b []byte, num protowire.Number, v *int32) []byte {
	if v == nil {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(int64(*v)))
}

// appendTimestamp appends a Timestamp field when it is set.
func appendTimestamp(b []byte, num protowire.Number, t *timestamppb.Timestamp) []byte {
	if t == nil {
		return b
	}
	b, at := openLen(b, num)
	b = appendVarint(b, 1, uint64(t.Seconds))
	b = appendVarint(b, 2, uint64(int64(t.Nanos)))
	return closeLen(b, at)
}

// appendDuration appends a Duration field when it is set.
func appendDuration(b []byte, num protowire.Number, d *durationpb.Duration) []byte {
	if d == nil {
		return b
	}
	b, at := openLen(b, num)
	b = appendVarint(b, 1, uint64(d.Seconds))
	b = appendVarint(b, 2, uint64(int64(d.Nanos)))
	return closeLen(b, at)
}

// openLen appends the tag of length-delimited field num and two bytes of
// room for its length; the field's content follows from the returned
// offset, and closeLen then writes the length.
func openLen(b []byte, num protowire.Number) ([]byte, int) {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = append(b, 0, 0)
	return b, len(b)
}

// closeLen writes the length of the content appended since openLen
// returned at, as a varint in the room reserved before it: a one-byte
// length moves the content back by one byte, one of three or more bytes
// moves it forward.
func closeLen(b []byte, at int) []byte {
	n := len(b) - at
	switch {
	case n < 1<<7:
		b[at-2] = byte(n)
		copy(b[at-1:], b[at:])
		return b[:len(b)-1]
	case n < 1<<14:
		b[at-2], b[at-1] = byte(n)|0x80, byte(n>>7)
		return b
	}
	var lenBuf [binary.MaxVarintLen64]byte
	l := protowire.AppendVarint(lenBuf[:0], uint64(n))
	grow := len(l) - 2
	b = append(b, lenBuf[:grow]...)
	copy(b[at+grow:], b[at:at+n])
	copy(b[at-2:], l)
	return b
}
