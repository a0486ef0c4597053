package codec

import (
	"encoding/binary"
	"fmt"
	"unsafe"
)

// SEND_BATCH_MESSAGE body (MessageDecoder.encodeMessage(s) in Java,
// producer.MarshalMessageBatch in the Go client): entries concatenated with
// nothing between them, each
//
//	totalSize int32 = 20 + bodyLen + 2 + propsLen
//	magic     int32 (0 from both clients; not checked)
//	bodyCRC   int32 (0 from both clients; not checked)
//	flag      int32
//	bodyLen   int32, body
//	propsLen  int16, properties string
//
// The batch's topic, queueId, sysFlag, bornTimestamp and reconsumeTimes come
// from the request header; each entry becomes its own stored record.

// batchEntryFixed is the entry size without body and properties.
const batchEntryFixed = 4 + 4 + 4 + 4 + 4 + 2

// AppendBatchEntry appends one batch entry for m (m.Topic is not encoded)
// and returns the extended slice. Errors wrap ErrBadMessage (properties over
// MaxPropertiesLen or an entry over 2 GiB); dst is then unchanged.
func AppendBatchEntry(dst []byte, m *Message) ([]byte, error) {
	if len(m.Properties) > MaxPropertiesLen {
		return dst, fmt.Errorf("%w: properties of %d bytes > %d", ErrBadMessage, len(m.Properties), MaxPropertiesLen)
	}
	size := batchEntryFixed + len(m.Body) + len(m.Properties)
	if size > 1<<31-1 {
		return dst, fmt.Errorf("%w: batch entry of %d bytes", ErrBadMessage, size)
	}
	be := binary.BigEndian
	dst = be.AppendUint32(dst, uint32(size))
	dst = be.AppendUint32(dst, 0)
	dst = be.AppendUint32(dst, 0)
	dst = be.AppendUint32(dst, uint32(m.Flag))
	dst = be.AppendUint32(dst, uint32(len(m.Body)))
	dst = append(dst, m.Body...)
	dst = be.AppendUint16(dst, uint16(len(m.Properties)))
	return append(dst, m.Properties...), nil
}

// decodeBatch walks the entries of b; body and props alias b.
func decodeBatch(b []byte, fn func(flag int32, body, props []byte)) error {
	for off := 0; off < len(b); {
		if len(b)-off < 4 {
			return fmt.Errorf("%w: batch entry at offset %d: %d trailing bytes", ErrBadMessage, off, len(b)-off)
		}
		size := int(int32(binary.BigEndian.Uint32(b[off:])))
		if size < batchEntryFixed || size > len(b)-off {
			return fmt.Errorf("%w: batch entry at offset %d: totalSize %d with %d bytes left", ErrBadMessage, off, size, len(b)-off)
		}
		r := reader{b: b[off : off+size]}
		r.i32("totalSize")
		r.i32("magic")
		r.i32("bodyCRC")
		flag := r.i32("flag")
		body := r.span(int(r.i32("bodyLength")), "body")
		props := r.span(int(r.i16("propertiesLength")), "properties")
		if err := r.complete(); err != nil {
			return fmt.Errorf("%w: batch entry at offset %d: %w", ErrBadMessage, off, err)
		}
		if r.remaining() != 0 {
			return fmt.Errorf("%w: batch entry at offset %d: totalSize %d but fields end at %d", ErrBadMessage, off, size, r.off)
		}
		fn(flag, body, props)
		off += size
	}
	return nil
}

// DecodeBatchBody decodes a SEND_BATCH_MESSAGE body into messages that own
// their memory (Topic left empty). An entry whose totalSize disagrees with
// its inner lengths is an error wrapping ErrBadMessage that names its
// offset; nothing is returned then. An empty body gives no messages.
func DecodeBatchBody(b []byte) ([]Message, error) {
	var out []Message
	err := decodeBatch(b, func(flag int32, body, props []byte) {
		m := Message{Flag: flag, Properties: string(props)}
		if len(body) > 0 {
			m.Body = append(make([]byte, 0, len(body)), body...)
		}
		out = append(out, m)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// UnsafeDecodeBatchBody is DecodeBatchBody without copying: Body and
// Properties alias b and stay valid only while b is unchanged. It allocates
// only the result slice. Use it when the entries are turned into stored
// records (AppendMessage copies them) before b is released.
func UnsafeDecodeBatchBody(b []byte) ([]Message, error) {
	var out []Message
	err := decodeBatch(b, func(flag int32, body, props []byte) {
		out = append(out, Message{Flag: flag, Body: body, Properties: unsafe.String(unsafe.SliceData(props), len(props))})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
