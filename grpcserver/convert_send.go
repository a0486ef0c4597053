package grpcserver

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/popshim/popshim/codec"
)

// SendLimits bound what one SendMessage may carry. DefaultSendLimits has the
// proxy's defaults (proxy/src/main/java/org/apache/rocketmq/proxy/config/ProxyConfig.java).
type SendLimits struct {
	// MaxBodyBytes is the largest body as sent (maxMessageSize, 4 MiB;
	// popshim's --max-message-size); also the publishing.max_body_size the
	// Settings reply advertises. 0: no limit.
	MaxBodyBytes int
	// MaxUserProperties is the most user properties per message
	// (userPropertyMaxNum, 128).
	MaxUserProperties int
	// MaxUserPropertyBytes bounds the UTF-8 bytes of all user property
	// names and values plus tag and keys (maxUserPropertySize, 16 KiB).
	MaxUserPropertyBytes int
	// MaxMessageGroupBytes: a message group of this many UTF-8 bytes or
	// more is refused (maxMessageGroupSize, 64).
	MaxMessageGroupBytes int
	// MaxDelay is how far ahead a delivery timestamp may lie; beyond it
	// ILLEGAL_DELIVERY_TIME "... max is <ms>" (the proxy's
	// maxDelayTimeMills, 1 day; popshim: the broker's
	// --timer-max-delay-sec, as remoting SENDs). 0: no limit.
	MaxDelay time.Duration
	// MaxInflatedBytes bounds the decompressed size of a GZIP body, which
	// is re-encoded as zlib before it is stored (see gzipToZlib).
	MaxInflatedBytes int
}

// DefaultSendLimits returns the proxy's default limits.
func DefaultSendLimits() SendLimits {
	return SendLimits{
		MaxBodyBytes:         4 << 20,
		MaxUserProperties:    128,
		MaxUserPropertyBytes: 16 << 10,
		MaxMessageGroupBytes: 64,
		MaxDelay:             24 * time.Hour,
		MaxInflatedBytes:     64 << 20,
	}
}

// SendInput is one v2 message in the form popshim's SEND path takes: the
// fields of a SEND_MESSAGE_V2 header (codec.SendMessageRequestHeader; the
// producer group is the topic name and QueueID is -1, the broker chooses,
// as the proxy does), the body as it is to be stored, and the producer's
// socket address for the record's bornHost.
type SendInput struct {
	Header codec.SendMessageRequestHeader
	// Body is what the record stores: the client's bytes, or for a GZIP
	// body the same content as a zlib stream with SysFlagCompressed set
	// (what remoting consumers can inflate).
	Body []byte
	// BornHost is the gRPC peer's address (the proxy's channel remote
	// address); the client's born_host string goes to __BORNHOST.
	BornHost netip.AddrPort
	// MessageID is the client's message_id, stored as UNIQ_KEY and echoed in
	// the SendResultEntry.
	MessageID string
	// Type is the client's message_type.
	Type v2.MessageType
	// MessageGroup is the FIFO message group (__SHARDINGKEY), "" for none:
	// messages of one group must go to one queue (the proxy picks it by a
	// hash of the group).
	MessageGroup string
	// DeliverAtMillis is the delivery timestamp (TIMER_DELIVER_MS), 0 for
	// none.
	DeliverAtMillis int64
}

// SendInputs validates a SendMessageRequest and converts every message, as
// the proxy's SendMessageActivity does before it sends anything: the first
// bad message fails the whole call with its Status and nothing is stored.
// Transactional messages convert like any other (SendInputOf marks them as
// half messages). peer is the client's socket address, now the server
// clock for the delivery-time check. Returns the inputs in request order, or nil and a non-OK Status.
// Any goroutine.
func SendInputs(req *v2.SendMessageRequest, peer netip.AddrPort, now time.Time, lim SendLimits) ([]SendInput, *v2.Status) {
	msgs := req.GetMessages()
	if len(msgs) == 0 {
		return nil, NewStatus(v2.Code_MESSAGE_CORRUPTED, "no message to send")
	}
	topic := msgs[0].GetTopic().GetName()
	out := make([]SendInput, 0, len(msgs))
	for _, m := range msgs {
		if m.GetTopic().GetName() != topic {
			return nil, NewStatus(v2.Code_MESSAGE_CORRUPTED, "topic in message is not same")
		}
		in, st := SendInputOf(m, peer, now, lim)
		if st != nil {
			return nil, st
		}
		out = append(out, in)
	}
	return out, nil
}

// SendInputOf validates and converts one message (the proxy's
// SendMessageActivity.buildMessage / buildMessageProperty / buildSysFlag).
// Stored properties, by v5 field:
//
//	user_properties                  as given (names reserved by RocketMQ refused)
//	tag                              TAGS
//	keys                             KEYS, joined by single spaces
//	message_id                       UNIQ_KEY (required)
//	message_type TRANSACTION         TRAN_MSG=true, sysFlag prepared;
//	  orphaned_transaction_recovery_duration  CHECK_IMMUNITY_TIME_IN_SECONDS
//	delivery_timestamp               TIMER_DELIVER_MS (milliseconds)
//	delivery_attempt (> 0)           RECONSUME_TIME
//	(always)                         PGROUP = topic
//	message_group                    __SHARDINGKEY
//	trace_context                    TRACE_CONTEXT
//	born_host, else the peer address __BORNHOST
//	born_timestamp                   BORN_TIMESTAMP and the header's bornTimestamp
//	body_encoding GZIP               sysFlag compressed (body re-encoded as zlib)
//
// A non-nil Status is the refusal (codes as the proxy's: MESSAGE_BODY_EMPTY,
// MESSAGE_BODY_TOO_LARGE, ILLEGAL_TOPIC, ILLEGAL_MESSAGE_ID,
// ILLEGAL_MESSAGE_TAG, ILLEGAL_MESSAGE_KEY, ILLEGAL_MESSAGE_GROUP,
// ILLEGAL_MESSAGE_PROPERTY_KEY, MESSAGE_PROPERTIES_TOO_LARGE,
// ILLEGAL_DELIVERY_TIME, MESSAGE_CORRUPTED for a GZIP body that does not
// inflate). Any goroutine.
func SendInputOf(m *v2.Message, peer netip.AddrPort, now time.Time, lim SendLimits) (SendInput, *v2.Status) {
	sp := m.GetSystemProperties()
	topic := m.GetTopic().GetName()
	if err := validateTopic(topic); err != nil {
		return SendInput{}, NewStatus(v2.Code_ILLEGAL_TOPIC, err.Error())
	}
	if st := checkBody(m.GetBody(), lim); st != nil {
		return SendInput{}, st
	}
	props, size, st := userProperties(m.GetUserProperties(), lim)
	if st != nil {
		return SendInput{}, st
	}
	if st := checkTag(sp.GetTag()); st != nil {
		return SendInput{}, st
	}
	size += len(sp.GetTag())
	for _, k := range sp.GetKeys() {
		if st := checkKey(k); st != nil {
			return SendInput{}, st
		}
		size += len(k)
	}
	if lim.MaxUserPropertyBytes > 0 && size > lim.MaxUserPropertyBytes {
		return SendInput{}, NewStatus(v2.Code_MESSAGE_PROPERTIES_TOO_LARGE,
			fmt.Sprintf("the total size of user property is too large, max is %d", lim.MaxUserPropertyBytes))
	}
	id := sp.GetMessageId()
	if strings.TrimSpace(id) == "" {
		return SendInput{}, NewStatus(v2.Code_ILLEGAL_MESSAGE_ID, "message id cannot be empty")
	}
	if hasControl(id) {
		return SendInput{}, NewStatus(v2.Code_ILLEGAL_MESSAGE_ID, "message id cannot contain control character")
	}
	in := SendInput{MessageID: id, Type: sp.GetMessageType(), MessageGroup: sp.GetMessageGroup(), BornHost: peer}
	if in.MessageGroup == "" {
		// __SHARDINGKEY is not reserved, and a user property of that name
		// makes the stored message FIFO, as message_group does: the proxy
		// derives the type from the stored properties
		// (TopicMessageType.parseFromMessageProperty), so it is checked,
		// validated and routed as a message group.
		in.MessageGroup = m.GetUserProperties()[codec.PropertyShardingKey]
	}
	set := func(k, v string) {
		if v != "" {
			props.set(k, v)
		}
	}
	set(codec.PropertyTags, sp.GetTag())
	if len(sp.GetKeys()) > 0 {
		set(codec.PropertyKeys, strings.Join(sp.GetKeys(), " "))
	}
	set(codec.PropertyUniqClientMessageIDKeyIdx, id)
	var sysFlag int32
	if in.Type == v2.MessageType_TRANSACTION {
		props.set(codec.PropertyTransactionPrepared, "true")
		sysFlag = codec.SetTransactionType(sysFlag, codec.SysFlagTransactionPrepared)
		if d := sp.GetOrphanedTransactionRecoveryDuration(); d != nil {
			props.set(codec.PropertyCheckImmunityTimeInSeconds, strconv.FormatInt(d.GetSeconds(), 10))
		}
	}
	if ts := sp.GetDeliveryTimestamp(); ts != nil {
		// Outside years 1–9999 the milliseconds would wrap around int64
		// (a far-future time could become a near one and pass the bound);
		// the proxy's Timestamps.toMillis refuses such values too.
		if err := ts.CheckValid(); err != nil {
			return SendInput{}, NewStatus(v2.Code_ILLEGAL_DELIVERY_TIME, "the delivery timestamp is out of range: "+err.Error())
		}
		at := ts.AsTime().UnixMilli()
		if lim.MaxDelay > 0 && at-now.UnixMilli() > lim.MaxDelay.Milliseconds() {
			return SendInput{}, NewStatus(v2.Code_ILLEGAL_DELIVERY_TIME,
				fmt.Sprintf("the max delay time of message is too large, max is %d", lim.MaxDelay.Milliseconds()))
		}
		in.DeliverAtMillis = at
		props.set(codec.PropertyTimerDeliverMS, strconv.FormatInt(at, 10))
	}
	if a := sp.GetDeliveryAttempt(); a > 0 {
		props.set(codec.PropertyReconsumeTime, strconv.Itoa(int(a)))
	}
	props.set(codec.PropertyProducerGroup, topic)
	if g := in.MessageGroup; g != "" {
		if st := checkMessageGroup(g, lim); st != nil {
			return SendInput{}, st
		}
		props.set(codec.PropertyShardingKey, g)
	}
	if tc := sp.GetTraceContext(); tc != "" && !hasSeparator(tc) {
		props.set(codec.PropertyTraceContext, tc)
	}
	born := sp.GetBornHost()
	if strings.TrimSpace(born) == "" && peer.IsValid() {
		born = peer.String()
	}
	if born != "" && !hasSeparator(born) {
		props.set(codec.PropertyBornHost, born)
	}
	var bornMillis int64
	if ts := sp.GetBornTimestamp(); ts != nil && ts.IsValid() {
		bornMillis = ts.AsTime().UnixMilli()
		props.set(codec.PropertyBornTimestamp, strconv.FormatInt(bornMillis, 10))
	}
	body := m.GetBody()
	if sp.GetBodyEncoding() == v2.Encoding_GZIP {
		z, err := gzipToZlib(body, lim.MaxInflatedBytes)
		if err != nil {
			return SendInput{}, NewStatus(v2.Code_MESSAGE_CORRUPTED, "body_encoding is GZIP but the body does not inflate: "+err.Error())
		}
		body = z
		sysFlag |= codec.SysFlagCompressed | codec.CompressionZLIB<<8
	}
	encoded, err := props.encode()
	if err != nil {
		// Separators are control characters, refused above; kept as a guard.
		return SendInput{}, NewStatus(v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY, err.Error())
	}
	in.Body = body
	in.Header = codec.SendMessageRequestHeader{
		ProducerGroup: topic,
		Topic:         topic,
		QueueID:       -1,
		SysFlag:       sysFlag,
		BornTimestamp: bornMillis,
		Properties:    encoded,
	}
	return in, nil
}

func checkBody(body []byte, lim SendLimits) *v2.Status {
	if len(body) == 0 {
		return NewStatus(v2.Code_MESSAGE_BODY_EMPTY, "message body cannot be empty")
	}
	if lim.MaxBodyBytes > 0 && len(body) > lim.MaxBodyBytes {
		return NewStatus(v2.Code_MESSAGE_BODY_TOO_LARGE, fmt.Sprintf("message body cannot exceed the max %d", lim.MaxBodyBytes))
	}
	return nil
}

// userProperties copies the user properties into a new propList (room for
// the system properties too) after the proxy's checks and returns their
// UTF-8 size.
func userProperties(up map[string]string, lim SendLimits) (propList, int, *v2.Status) {
	if lim.MaxUserProperties > 0 && len(up) > lim.MaxUserProperties {
		return nil, 0, NewStatus(v2.Code_MESSAGE_PROPERTIES_TOO_LARGE, fmt.Sprintf("too many user properties, max is %d", lim.MaxUserProperties))
	}
	props := make(propList, 0, len(up)+12)
	size := 0
	for k, v := range up {
		switch {
		case IsReservedProperty(k):
			return nil, 0, NewStatus(v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY, "property is used by system: "+k)
		case k == "":
			return nil, 0, NewStatus(v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY, "the key of property cannot be empty")
		case hasControl(k):
			return nil, 0, NewStatus(v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY, "the key of property cannot contain control character")
		case hasControl(v):
			return nil, 0, NewStatus(v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY, "the value of property cannot contain control character")
		}
		size += len(k) + len(v)
		props.set(k, v)
	}
	return props, size, nil
}

func checkTag(tag string) *v2.Status {
	switch {
	case tag == "":
		return nil
	case strings.TrimSpace(tag) == "":
		return NewStatus(v2.Code_ILLEGAL_MESSAGE_TAG, "tag cannot be the char sequence of whitespace")
	case strings.Contains(tag, "|"):
		return NewStatus(v2.Code_ILLEGAL_MESSAGE_TAG, "tag cannot contain '|'")
	case hasControl(tag):
		return NewStatus(v2.Code_ILLEGAL_MESSAGE_TAG, "tag cannot contain control character")
	}
	return nil
}

func checkKey(key string) *v2.Status {
	switch {
	case key == "":
		return nil
	case strings.TrimSpace(key) == "":
		return NewStatus(v2.Code_ILLEGAL_MESSAGE_KEY, "key cannot be the char sequence of whitespace")
	case hasControl(key):
		return NewStatus(v2.Code_ILLEGAL_MESSAGE_KEY, "key cannot contain control character")
	}
	return nil
}

func checkMessageGroup(g string, lim SendLimits) *v2.Status {
	switch {
	case strings.TrimSpace(g) == "":
		return NewStatus(v2.Code_ILLEGAL_MESSAGE_GROUP, "message group cannot be the char sequence of whitespace")
	case lim.MaxMessageGroupBytes > 0 && len(g) >= lim.MaxMessageGroupBytes:
		return NewStatus(v2.Code_ILLEGAL_MESSAGE_GROUP, fmt.Sprintf("message group exceed the max size %d", lim.MaxMessageGroupBytes))
	case hasControl(g):
		return NewStatus(v2.Code_ILLEGAL_MESSAGE_GROUP, "message group cannot contain control character")
	}
	return nil
}

// hasControl reports an ISO control character (U+0000–U+001F,
// U+007F–U+009F), Guava's CharMatcher.javaIsoControl that the proxy uses;
// invalid UTF-8 counts too (protobuf-go already refuses it in strings). The
// property separators 0x01 and 0x02 are among them, so a string that passes
// can be stored in a properties string.
func hasControl(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return true
		}
	}
	return false
}

// hasSeparator reports a byte that a properties string cannot hold.
func hasSeparator(s string) bool {
	return strings.IndexByte(s, codec.PropertyNameValueSeparator) >= 0 || strings.IndexByte(s, codec.PropertySeparator) >= 0
}
