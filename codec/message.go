package codec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"net/netip"
	"unsafe"
)

// Magic codes of a stored record (common/.../message/MessageDecoder.java,
// MessageVersion.java). V1 has a one-byte topic length, V2 a two-byte one.
const (
	MagicCodeV1    int32 = -626843481 // 0xDAA320A7
	MagicCodeV2    int32 = -626843477 // 0xDAA320AB
	MagicCodeBlank int32 = -875286124 // 0xCBD43194, commit-log end-of-file filler, never sent
)

// Byte positions inside a stored record (common/.../message/MessageDecoder.java).
// The fields up to bornHost sit at fixed positions; later ones depend on
// the host sizes chosen by sysFlag (see RecordStoreTimestampPos).
const (
	RecordTotalSizePos      = 0  // int32, size of the whole record
	RecordMagicPos          = 4  // int32, MagicCodeV1 / MagicCodeV2
	RecordBodyCRCPos        = 8  // int32, crc32 IEEE of the body & 0x7FFFFFFF
	RecordQueueIDPos        = 12 // int32
	RecordFlagPos           = 16 // int32, user flag
	RecordQueueOffsetPos    = 20 // int64, logical offset in the queue
	RecordPhysicalOffsetPos = 28 // int64, commit-log (store) offset; part of offsetMsgId
	RecordSysFlagPos        = 36 // int32
	RecordBornTimestampPos  = 40 // int64, milliseconds
	RecordBornHostPos       = 48 // 8 or 20 bytes
	// RecordMinSize is the smallest possible record: IPv4 hosts, empty body,
	// V1 empty topic, empty properties.
	RecordMinSize = 84 + 4 + 1 + 2
	// MaxTopicLenV1 is the longest topic that fits a V1 record.
	MaxTopicLenV1 = 127
	// MaxPropertiesLen is the longest properties string a record can carry.
	MaxPropertiesLen = 32767
	// PopPropertiesRoom is the part of MaxPropertiesLen a SEND must leave
	// free, bytes: a POP appends POP_CK to the record it returns
	// (AppendPopRecord; with a long broker name about 150 bytes), a
	// revive into the retry topic or a timer's or half message's delivery
	// adds RETRY_TOPIC, REAL_TOPIC, ORIGIN_MESSAGE_ID and the like.
	PopPropertiesRoom = 1024
	// MaxSendPropertiesLen is the longest properties string a SEND may
	// store (broker.Broker.Send refuses longer ones MESSAGE_ILLEGAL): a
	// longer one could be stored but never popped.
	MaxSendPropertiesLen = MaxPropertiesLen - PopPropertiesRoom
)

// ErrBadMessage reports that a stored record or batch entry is malformed
// or cannot be encoded.
var ErrBadMessage = errors.New("codec: malformed message record")

// RecordStoreTimestampPos returns the position of storeTimestamp (int64,
// milliseconds) in a record with the given sysFlag: 56 with an IPv4 born
// host, 68 with an IPv6 one.
func RecordStoreTimestampPos(sysFlag int32) int { return RecordBornHostPos + bornHostLen(sysFlag) }

// PatchRecordQueueOffset overwrites queueOffset of the record at rec[0:]
// in place. rec must hold at least RecordQueueOffsetPos+8 bytes.
func PatchRecordQueueOffset(rec []byte, queueOffset int64) {
	binary.BigEndian.PutUint64(rec[RecordQueueOffsetPos:], uint64(queueOffset))
}

// PatchRecordPhysicalOffset overwrites physicalOffset of the record in place.
func PatchRecordPhysicalOffset(rec []byte, physicalOffset int64) {
	binary.BigEndian.PutUint64(rec[RecordPhysicalOffsetPos:], uint64(physicalOffset))
}

// PatchRecordStoreTimestamp overwrites storeTimestamp (milliseconds) in
// place, locating it through the record's own sysFlag.
func PatchRecordStoreTimestamp(rec []byte, storeTimestamp int64) {
	sf := int32(binary.BigEndian.Uint32(rec[RecordSysFlagPos:]))
	binary.BigEndian.PutUint64(rec[RecordStoreTimestampPos(sf):], uint64(storeTimestamp))
}

// Message is the producer-visible part of a message: what a batch entry
// (MessageDecoder.encodeMessages) carries, plus the topic.
type Message struct {
	Topic      string
	Flag       int32  // user flag
	Body       []byte // as stored: compressed when sysFlag says so
	Properties string // raw properties string (properties.go); order kept as received
}

// MessageExt is one stored record (MessageExt.java; layout in
// common/.../message/MessageDecoder.java). Hosts
// are address+port; an IPv4-mapped IPv6 address is written as IPv4, and an
// invalid (zero) AddrPort as 0.0.0.0:0.
type MessageExt struct {
	Message
	QueueID                   int32
	QueueOffset               int64 // logical offset in the queue
	PhysicalOffset            int64 // commit-log offset ("commitLogOffset"); with StoreHost forms offsetMsgId
	SysFlag                   int32 // SysFlag* bits; AppendMessage sets the IPv6 bits from the hosts
	BornTimestamp             int64 // producer clock, milliseconds
	BornHost                  netip.AddrPort
	StoreTimestamp            int64 // broker clock, milliseconds
	StoreHost                 netip.AddrPort
	ReconsumeTimes            int32
	PreparedTransactionOffset int64

	// Filled by decoding only; AppendMessage computes its own values.
	StoreSize int32 // totalSize of the record
	BodyCRC   int32 // bodyCRC field as stored
	MagicCode int32 // MagicCodeV1 or MagicCodeV2
}

// Property returns the value of one message property; no allocation.
func (m *MessageExt) Property(key string) (string, bool) { return PropertyValue(m.Properties, key) }

// OffsetMsgID returns the offset message id (StoreHost + PhysicalOffset as
// upper-case hex), what SEND responses call msgId.
func (m *MessageExt) OffsetMsgID() string { return OffsetMsgID(m.StoreHost, m.PhysicalOffset) }

// MsgID returns the id applications see: UNIQ_KEY when present, else the offset msgId.
func (m *MessageExt) MsgID() string {
	if v, ok := m.Property(PropertyUniqClientMessageIDKeyIdx); ok {
		return v
	}
	return m.OffsetMsgID()
}

// BodyCRC32 returns the record's body checksum: CRC-32 (IEEE, as
// java.util.zip.CRC32 in UtilAll.crc32) masked with 0x7FFFFFFF.
func BodyCRC32(body []byte) int32 { return int32(crc32.ChecksumIEEE(body) & 0x7FFFFFFF) }

// hostSysFlag returns sysFlag with the IPv6 bits matching the hosts.
func hostSysFlag(sysFlag int32, born, store netip.AddrPort) int32 {
	sysFlag &^= SysFlagBornHostV6 | SysFlagStoreHostV6
	if a := born.Addr().Unmap(); a.Is6() {
		sysFlag |= SysFlagBornHostV6
	}
	if a := store.Addr().Unmap(); a.Is6() {
		sysFlag |= SysFlagStoreHostV6
	}
	return sysFlag
}

func appendHost(dst []byte, h netip.AddrPort) []byte {
	a := h.Addr().Unmap()
	switch {
	case a.Is4():
		v := a.As4()
		dst = append(dst, v[:]...)
	case a.Is6():
		v := a.As16()
		dst = append(dst, v[:]...)
	default:
		dst = append(dst, 0, 0, 0, 0)
	}
	return binary.BigEndian.AppendUint32(dst, uint32(h.Port()))
}

// MessageRecordSize returns the encoded size of m in bytes, as AppendMessage
// would write it.
func MessageRecordSize(m *MessageExt) int {
	sf := hostSysFlag(m.SysFlag, m.BornHost, m.StoreHost)
	topicLen := 1
	if len(m.Topic) > MaxTopicLenV1 {
		topicLen = 2
	}
	return 4 + 4 + 4 + 4 + 4 + 8 + 8 + 4 + 8 + bornHostLen(sf) + 8 + storeHostLen(sf) + 4 + 8 +
		4 + len(m.Body) + topicLen + len(m.Topic) + 2 + len(m.Properties)
}

// AppendMessage appends m as one stored record to dst and returns the
// extended slice. The magic is V1 when the topic has at most 127 bytes (what
// Go clients can read), else V2. bodyCRC is computed from Body; the IPv6
// sysFlag bits are set from the hosts. m.StoreSize, m.BodyCRC and
// m.MagicCode are ignored. Errors wrap ErrBadMessage (topic over 32767
// bytes, properties over MaxPropertiesLen, record over 2 GiB); dst is then
// returned unchanged. Nothing is allocated when dst has room.
func AppendMessage(dst []byte, m *MessageExt) ([]byte, error) {
	if len(m.Topic) > 32767 {
		return dst, fmt.Errorf("%w: topic of %d bytes", ErrBadMessage, len(m.Topic))
	}
	if len(m.Properties) > MaxPropertiesLen {
		return dst, fmt.Errorf("%w: properties of %d bytes > %d", ErrBadMessage, len(m.Properties), MaxPropertiesLen)
	}
	size := MessageRecordSize(m)
	if size > 1<<31-1 {
		return dst, fmt.Errorf("%w: record of %d bytes", ErrBadMessage, size)
	}
	sf := hostSysFlag(m.SysFlag, m.BornHost, m.StoreHost)
	magic := MagicCodeV1
	if len(m.Topic) > MaxTopicLenV1 {
		magic = MagicCodeV2
	}
	be := binary.BigEndian
	dst = be.AppendUint32(dst, uint32(size))
	dst = be.AppendUint32(dst, uint32(magic))
	dst = be.AppendUint32(dst, uint32(BodyCRC32(m.Body)))
	dst = be.AppendUint32(dst, uint32(m.QueueID))
	dst = be.AppendUint32(dst, uint32(m.Flag))
	dst = be.AppendUint64(dst, uint64(m.QueueOffset))
	dst = be.AppendUint64(dst, uint64(m.PhysicalOffset))
	dst = be.AppendUint32(dst, uint32(sf))
	dst = be.AppendUint64(dst, uint64(m.BornTimestamp))
	dst = appendHost(dst, m.BornHost)
	dst = be.AppendUint64(dst, uint64(m.StoreTimestamp))
	dst = appendHost(dst, m.StoreHost)
	dst = be.AppendUint32(dst, uint32(m.ReconsumeTimes))
	dst = be.AppendUint64(dst, uint64(m.PreparedTransactionOffset))
	dst = be.AppendUint32(dst, uint32(len(m.Body)))
	dst = append(dst, m.Body...)
	if magic == MagicCodeV1 {
		dst = append(dst, byte(len(m.Topic)))
	} else {
		dst = be.AppendUint16(dst, uint16(len(m.Topic)))
	}
	dst = append(dst, m.Topic...)
	dst = be.AppendUint16(dst, uint16(len(m.Properties)))
	return append(dst, m.Properties...), nil
}

func readHost(r *reader, v6 bool, what, portWhat string) netip.AddrPort {
	var a netip.Addr
	if v6 {
		if s := r.span(16, what); s != nil {
			a = netip.AddrFrom16([16]byte(s))
		}
	} else if s := r.span(4, what); s != nil {
		a = netip.AddrFrom4([4]byte(s))
	}
	port := r.i32(portWhat)
	if port < 0 || port > 0xFFFF {
		r.fail(portWhat)
	}
	return netip.AddrPortFrom(a, uint16(port))
}

// decodeMessage parses the record at the start of b. Body aliases b; the
// topic and properties are returned as byte spans for the caller to turn
// into strings.
func decodeMessage(b []byte, m *MessageExt) (topic, props []byte, n int, err error) {
	if len(b) < 8 {
		return nil, nil, 0, fmt.Errorf("%w: %d bytes, need at least 8", ErrShort, len(b))
	}
	size := int(int32(binary.BigEndian.Uint32(b)))
	if size < RecordMinSize || size > len(b) {
		return nil, nil, 0, fmt.Errorf("%w: totalSize %d with %d bytes available", ErrBadMessage, size, len(b))
	}
	r := reader{b: b[:size]}
	m.StoreSize = r.i32("totalSize")
	m.MagicCode = r.i32("magicCode")
	if m.MagicCode != MagicCodeV1 && m.MagicCode != MagicCodeV2 {
		return nil, nil, 0, fmt.Errorf("%w: magic code %#x at offset 4", ErrBadMessage, uint32(m.MagicCode))
	}
	m.BodyCRC = r.i32("bodyCRC")
	m.QueueID = r.i32("queueId")
	m.Flag = r.i32("flag")
	m.QueueOffset = r.i64("queueOffset")
	m.PhysicalOffset = r.i64("physicalOffset")
	m.SysFlag = r.i32("sysFlag")
	m.BornTimestamp = r.i64("bornTimestamp")
	m.BornHost = readHost(&r, m.SysFlag&SysFlagBornHostV6 != 0, "bornHost", "bornHost port")
	m.StoreTimestamp = r.i64("storeTimestamp")
	m.StoreHost = readHost(&r, m.SysFlag&SysFlagStoreHostV6 != 0, "storeHost", "storeHost port")
	m.ReconsumeTimes = r.i32("reconsumeTimes")
	m.PreparedTransactionOffset = r.i64("preparedTransactionOffset")
	m.Body = r.span(int(r.i32("bodyLength")), "body")
	tlen := 0
	if m.MagicCode == MagicCodeV1 {
		tlen = int(int8(r.u8("topicLength"))) // signed, as Java reads it
	} else {
		tlen = int(r.i16("topicLength"))
	}
	topic = r.span(tlen, "topic")
	props = r.span(int(r.i16("propertiesLength")), "properties")
	if err := r.complete(); err != nil {
		return nil, nil, 0, fmt.Errorf("%w: %w", ErrBadMessage, err)
	}
	if r.remaining() != 0 {
		return nil, nil, 0, fmt.Errorf("%w: %d bytes left after properties at offset %d (totalSize %d)", ErrBadMessage, r.remaining(), r.off, size)
	}
	if len(m.Body) == 0 {
		m.Body = nil
	}
	return topic, props, size, nil
}

// DecodeMessage decodes the record at the start of b and returns it with
// the record size in bytes. The result owns its memory (the body and one
// string holding topic and properties are copied: two allocations). Errors
// wrap ErrBadMessage: a size that does not fit b, an unknown magic code, a
// host port outside 0-65535 (Java cannot build that address either), or
// inner lengths that do not add up exactly to totalSize.
func DecodeMessage(b []byte) (MessageExt, int, error) {
	var m MessageExt
	topic, props, n, err := decodeMessage(b, &m)
	if err != nil {
		return MessageExt{}, 0, err
	}
	if m.Body != nil {
		m.Body = append(make([]byte, 0, len(m.Body)), m.Body...)
	}
	// topic and props are separated only by the 2-byte properties length:
	// convert the whole run once and slice it.
	start := n - len(props) - 2 - len(topic)
	all := string(b[start:n])
	m.Topic = all[:len(topic)]
	m.Properties = all[len(topic)+2:]
	return m, n, nil
}

// UnsafeDecodeMessage is DecodeMessage without copying: Body, Topic and
// Properties alias b and are valid only while b is neither modified nor
// reused. It does not allocate. Use it to inspect records in a buffer the
// caller owns (for example to filter by tag before copying).
func UnsafeDecodeMessage(b []byte) (MessageExt, int, error) {
	var m MessageExt
	topic, props, n, err := decodeMessage(b, &m)
	if err != nil {
		return MessageExt{}, 0, err
	}
	m.Topic = unsafe.String(unsafe.SliceData(topic), len(topic))
	m.Properties = unsafe.String(unsafe.SliceData(props), len(props))
	return m, n, nil
}

// DecodeMessages decodes a PULL / POP / PEEK body: records concatenated with
// nothing in between. Results own their memory. On a malformed record it
// returns the records decoded before it and an error naming its offset (a
// Java client likewise drops the rest of the body).
func DecodeMessages(body []byte) ([]MessageExt, error) {
	var out []MessageExt
	for off := 0; off < len(body); {
		m, n, err := DecodeMessage(body[off:])
		if err != nil {
			return out, fmt.Errorf("record at body offset %d: %w", off, err)
		}
		out = append(out, m)
		off += n
	}
	return out, nil
}
