package grpcserver

import (
	"crypto/md5"
	"fmt"
	"strconv"
	"strings"
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
	ck, ok := m.Property(codec.PropertyPopCK)
	if !ok {
		return nil, fmt.Errorf("grpcserver: record %s queue %d offset %d has no %s property", m.Topic, m.QueueID, m.QueueOffset, codec.PropertyPopCK)
	}
	handle, ei, err := receiptHandleOf(validUTF8(ck), m.PhysicalOffset)
	if err != nil {
		return nil, err
	}
	msg := RecordMessage(m, opt)
	msg.SystemProperties.ReceiptHandle = &handle
	msg.SystemProperties.InvisibleDuration = durationpb.New(time.Duration(ei.InvisibleTime) * time.Millisecond)
	return msg, nil
}

// RecordMessage converts a stored record that was not popped into a v5
// Message: every field of MessageOf but receipt_handle and
// invisible_duration (the proxy's GrpcConverter.buildMessage of a message
// without POP_CK). The RecoverOrphanedTransactionCommand carries a half
// message this way (message_type TRANSACTION). Any goroutine; m is not
// modified and the result may share m.Body.
func RecordMessage(m *codec.MessageExt, opt DeliveryOptions) *v2.Message {
	props := codec.DecodeProperties(m.Properties)
	if !utf8.ValidString(m.Properties) {
		props = validUTF8Props(props)
	}
	sp := &v2.SystemProperties{
		MessageId:       validUTF8(m.MsgID()),
		QueueId:         m.QueueID,
		QueueOffset:     &m.QueueOffset,
		DeliveryAttempt: ptr(m.ReconsumeTimes + 1),
		BornTimestamp:   timestamppb.New(time.UnixMilli(m.BornTimestamp)),
		StoreTimestamp:  timestamppb.New(time.UnixMilli(m.StoreTimestamp)),
		MessageType:     messageTypeOf(props),
	}
	if v := props[codec.PropertyTags]; v != "" {
		sp.Tag = ptr(v)
	}
	if v := props[codec.PropertyKeys]; v != "" {
		sp.Keys = strings.Fields(v)
	}
	if v := props[codec.PropertyBornHost]; strings.TrimSpace(v) != "" {
		sp.BornHost = v
	} else if m.BornHost.IsValid() {
		sp.BornHost = m.BornHost.Addr().Unmap().String()
	}
	if m.StoreHost.IsValid() {
		sp.StoreHost = m.StoreHost.String()
	}
	if ts, ok := deliveryTimeOf(props, opt.Now); ok {
		sp.DeliveryTimestamp = timestamppb.New(time.UnixMilli(ts))
	}
	if v := props[codec.PropertyShardingKey]; v != "" {
		sp.MessageGroup = ptr(v)
	}
	if v := props[codec.PropertyTraceContext]; v != "" {
		sp.TraceContext = ptr(v)
	}
	if t, id := props[codec.PropertyDLQOriginTopic], props[codec.PropertyDLQOriginMessageID]; t != "" && id != "" {
		sp.DeadLetterQueue = &v2.DeadLetterQueue{Topic: t, MessageId: id}
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
	sp.BodyDigest = &v2.Digest{Type: v2.DigestType_MD5, Checksum: md5UpperHex(body)}
	// props becomes the user properties: every property read above is
	// reserved or shown as a system property, so it can be dropped in place
	// rather than copied into a second map.
	for k := range props {
		if IsReservedProperty(k) || shownAsSystemProperty[k] {
			delete(props, k)
		}
	}
	return &v2.Message{
		Topic:            &v2.Resource{Name: validUTF8(m.Topic)},
		UserProperties:   props,
		SystemProperties: sp,
		Body:             body,
	}
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

// validUTF8Props is props with validUTF8 applied to every key and value.
func validUTF8Props(props map[string]string) map[string]string {
	out := make(map[string]string, len(props))
	for k, v := range props {
		out[validUTF8(k)] = validUTF8(v)
	}
	return out
}

// messageTypeOf is GrpcConverter's message_type rule.
func messageTypeOf(props map[string]string) v2.MessageType {
	switch {
	case props[codec.PropertyTransactionPrepared] == "true":
		return v2.MessageType_TRANSACTION
	case props[codec.PropertyDelayTimeLevel] != "", props[codec.PropertyTimerDeliverMS] != "", props[codec.PropertyTimerDelaySec] != "":
		return v2.MessageType_DELAY
	case props[codec.PropertyShardingKey] != "":
		return v2.MessageType_FIFO
	}
	return v2.MessageType_NORMAL
}

// deliveryTimeOf returns the delivery time in milliseconds: now +
// TIMER_DELAY_SEC, else TIMER_DELIVER_MS. Unparsable values count as absent.
func deliveryTimeOf(props map[string]string, now time.Time) (int64, bool) {
	if v := props[codec.PropertyTimerDelaySec]; v != "" {
		if sec, err := strconv.ParseInt(v, 10, 64); err == nil {
			return now.UnixMilli() + sec*1000, true
		}
	}
	if v := props[codec.PropertyTimerDeliverMS]; v != "" {
		if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
			return ms, true
		}
	}
	return 0, false
}
