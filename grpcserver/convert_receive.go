package grpcserver

import (
	"crypto/md5"
	"fmt"
	"net/netip"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/popshim/popshim/codec"
)

// DeliveryOptions are the per-receive values a v5 Message needs that are not
// in the stored record.
type DeliveryOptions struct {
	// Now is the server clock, for the delivery timestamp of a message that
	// carries TIMER_DELAY_SEC (now + delay, as the proxy computes it).
	Now time.Time
	// MaxInflatedBytes bounds the check inflation of a compressed body that
	// is re-framed as gzip (zlibToGzip); larger bodies go out unchanged.
	MaxInflatedBytes int
}

// MessageOf converts one popped record into the v5 Message a
// ReceiveMessage stream carries (the proxy's GrpcConverter.buildMessage).
// m is a record of a POP body as codec.DecodeMessages returns it: its
// POP_CK property is the receipt (8 fields, codec.ExtraInfo), which
// becomes the v5 receipt_handle with the record's commit-log offset as
// ninth field (ReceiptHandleOf). Fields, by v5 name:
//
//	topic.name          record topic (popshim already reports a retry delivery under the original topic)
//	user_properties     every property that is not reserved (IsReservedProperty) nor shown as a system property
//	tag, keys           TAGS; KEYS split at spaces
//	message_id          UNIQ_KEY, else the offset message id
//	body, body_encoding IDENTITY, or for a compressed record GZIP (a zlib body re-framed as gzip, see body.go)
//	body_digest         MD5 of the body as sent, upper-case hex
//	message_type        TRANSACTION (TRAN_MSG=true), DELAY (DELAY, TIMER_DELIVER_MS, TIMER_DELAY_SEC), FIFO (__SHARDINGKEY), NORMAL
//	born_timestamp/host record born time; __BORNHOST, else the record's born address
//	store_timestamp/host record store time and address
//	delivery_timestamp  now + TIMER_DELAY_SEC, or TIMER_DELIVER_MS
//	message_group       __SHARDINGKEY
//	receipt_handle      POP_CK + " " + commit-log offset
//	invisible_duration  the handle's invisible time (the proxy leaves it unset; clients ignore it)
//	queue_id/offset     record queue id and offset
//	delivery_attempt    reconsumeTimes + 1
//	trace_context       TRACE_CONTEXT
//	dead_letter_queue   DLQ_ORIGIN_TOPIC + DLQ_ORIGIN_MESSAGE_ID when both are present
//
// Errors: the record has no POP_CK or an unparsable one (a core fault; the
// proxy logs it as a bug). Any goroutine; m is not modified and the result
// shares m.Body when the body is sent unchanged.
func MessageOf(m *codec.MessageExt, opt DeliveryOptions) (*v2.Message, error) {
	props := storedPropsOf(m.Properties)
	if props.popCK == "" {
		return nil, fmt.Errorf("grpcserver: record %s queue %d offset %d has no %s property", m.Topic, m.QueueID, m.QueueOffset, codec.PropertyPopCK)
	}
	handle, ei, err := receiptHandleOf(props.popCK, m.PhysicalOffset)
	if err != nil {
		return nil, err
	}
	return receivedMessage(m, &props, handle, ei, opt), nil
}

// ReceivedMessageOf is MessageOf for a record popped with
// broker.PopRequest.Records: its receipt ei comes beside it (the record
// has no POP_CK), so nothing can fail; receipt_handle is ei with the
// record's commit-log offset as ninth field. Any goroutine; m is not
// modified and the result may share m.Body.
func ReceivedMessageOf(m *codec.MessageExt, ei codec.ExtraInfo, opt DeliveryOptions) *v2.Message {
	props := storedPropsOf(m.Properties)
	if !ei.HasCommitLogOffset {
		ei.CommitLogOffset, ei.HasCommitLogOffset = m.PhysicalOffset, true
	}
	return receivedMessage(m, &props, ei.String(), ei, opt)
}

// receivedMessage builds the Message of a popped record m with stored
// properties props, receipt_handle handle (ei parsed).
func receivedMessage(m *codec.MessageExt, props *storedProps, handle string, ei codec.ExtraInfo, opt DeliveryOptions) *v2.Message {
	p := recordParts(m, props, opt)
	p.handle = handle
	p.sp.ReceiptHandle = &p.handle
	p.invisible = durationOf(time.Duration(ei.InvisibleTime) * time.Millisecond)
	p.sp.InvisibleDuration = &p.invisible
	return &p.msg
}

// RecordMessage converts a stored record that was not popped into a v5
// Message: every field of MessageOf but receipt_handle and
// invisible_duration (the proxy's GrpcConverter.buildMessage of a message
// without POP_CK). The RecoverOrphanedTransactionCommand carries a half
// message this way (message_type TRANSACTION). Any goroutine; m is not
// modified and the result may share m.Body.
func RecordMessage(m *codec.MessageExt, opt DeliveryOptions) *v2.Message {
	props := storedPropsOf(m.Properties)
	return &recordParts(m, &props, opt).msg
}

// messageParts are the objects one converted Message is made of. They are
// allocated together, as one block that lives as long as the Message: a
// delivered message costs one allocation for them instead of one each.
type messageParts struct {
	msg                       v2.Message
	sp                        v2.SystemProperties
	topic                     v2.Resource
	digest                    v2.Digest
	born, store, delivery     timestamppb.Timestamp
	invisible                 durationpb.Duration
	queueOffset               int64
	attempt                   int32
	tag, group, trace, handle string
}

// recordParts builds the Message of RecordMessage from m and its stored
// properties p (storedPropsOf of m.Properties). The user properties are
// p.user (not copied).
func recordParts(m *codec.MessageExt, p *storedProps, opt DeliveryOptions) *messageParts {
	b := new(messageParts)
	sp := &b.sp
	b.queueOffset, b.attempt = m.QueueOffset, m.ReconsumeTimes+1
	b.born, b.store = timestampOf(m.BornTimestamp), timestampOf(m.StoreTimestamp)
	sp.QueueId, sp.QueueOffset, sp.DeliveryAttempt = m.QueueID, &b.queueOffset, &b.attempt
	sp.BornTimestamp, sp.StoreTimestamp = &b.born, &b.store
	sp.MessageType = p.messageType()
	sp.MessageId = p.uniqKey
	if sp.MessageId == "" {
		sp.MessageId = m.OffsetMsgID() // hex: valid UTF-8
	}
	if p.tags != "" {
		b.tag = p.tags
		sp.Tag = &b.tag
	}
	if p.keys != "" {
		sp.Keys = strings.Fields(p.keys)
	}
	if strings.TrimSpace(p.bornHost) != "" {
		sp.BornHost = p.bornHost
	} else if m.BornHost.IsValid() {
		sp.BornHost = m.BornHost.Addr().Unmap().String()
	}
	if m.StoreHost.IsValid() {
		sp.StoreHost = storeHostString(m.StoreHost)
	}
	if ts, ok := p.deliveryTime(opt.Now); ok {
		b.delivery = timestampOf(ts)
		sp.DeliveryTimestamp = &b.delivery
	}
	if p.shardingKey != "" {
		b.group = p.shardingKey
		sp.MessageGroup = &b.group
	}
	if p.traceContext != "" {
		b.trace = p.traceContext
		sp.TraceContext = &b.trace
	}
	if p.dlqTopic != "" && p.dlqMessageID != "" {
		sp.DeadLetterQueue = &v2.DeadLetterQueue{Topic: p.dlqTopic, MessageId: p.dlqMessageID}
	}
	body := m.Body
	sp.BodyEncoding = v2.Encoding_IDENTITY
	if codec.IsCompressed(m.SysFlag) {
		sp.BodyEncoding = v2.Encoding_GZIP
		if codec.CompressionType(m.SysFlag) == codec.CompressionZLIB {
			if gz, err := zlibToGzip(body, opt.MaxInflatedBytes); err == nil {
				body = gz
			}
		}
	}
	b.digest = v2.Digest{Type: v2.DigestType_MD5, Checksum: md5UpperHex(body)}
	sp.BodyDigest = &b.digest
	b.topic.Name = validUTF8(m.Topic)
	b.msg.Topic, b.msg.UserProperties, b.msg.SystemProperties, b.msg.Body = &b.topic, p.user, sp, body
	return b
}

// timestampOf is timestamppb.New(time.UnixMilli(ms)) without allocating.
func timestampOf(ms int64) timestamppb.Timestamp {
	t := time.UnixMilli(ms)
	return timestamppb.Timestamp{Seconds: t.Unix(), Nanos: int32(t.Nanosecond())}
}

// durationOf is durationpb.New(d) without allocating.
func durationOf(d time.Duration) durationpb.Duration {
	return durationpb.Duration{Seconds: int64(d / time.Second), Nanos: int32(d % time.Second)}
}

// storeHostCache holds the text of the last store address converted:
// every record of a broker has the same one.
var storeHostCache atomic.Pointer[hostText]

// hostText is an address and its String.
type hostText struct {
	addr netip.AddrPort
	text string
}

// storeHostString is a.String(), from storeHostCache when a is the last
// address converted. Any goroutine.
func storeHostString(a netip.AddrPort) string {
	if c := storeHostCache.Load(); c != nil && c.addr == a {
		return c.text
	}
	c := &hostText{addr: a, text: a.String()}
	storeHostCache.Store(c)
	return c.text
}

func ptr[T any](v T) *T { return &v }

// md5UpperHex is the MD5 of body in upper-case hex, as the proxy's
// body_digest checksum.
func md5UpperHex(body []byte) string {
	const digits = "0123456789ABCDEF"
	sum := md5.Sum(body)
	var out [2 * md5.Size]byte
	for i, b := range sum {
		out[2*i], out[2*i+1] = digits[b>>4], digits[b&0xf]
	}
	return string(out[:])
}

// validUTF8 returns s with every invalid UTF-8 sequence replaced by
// U+FFFD, as Java's UTF-8 decoding of the same bytes gives the proxy's
// clients: protobuf refuses to marshal a string field that is not UTF-8,
// so a remoting producer's non-UTF-8 topic, key or property would
// otherwise make the message undeliverable over gRPC.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
